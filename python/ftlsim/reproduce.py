"""The papers' experiments by name (`ftlsim reproduce NAME`): each is a list of runs, a summary table that puts
the figures next to the paper's, and the paper's claim to check them against. `quick=True` shrinks the
workloads so that a test can run every experiment in seconds; the figures then only show the shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from .ftl import ram


@dataclass(frozen=True)
class Experiment:
    name: str
    paper: str
    claim: str
    runs: Callable[[bool], list[dict]]
    summary: Callable[[pd.DataFrame], pd.DataFrame]
    # The swept parameter for a Fig. 10-style plot (erases and time against it, a line per scheme).
    plot_x: str | None = None


def _seconds(df: pd.DataFrame) -> pd.Series:
    return df["time_us.total"] / 1e6


# FAST paper §4, Fig. 10: pattern E (uniform random writes) on full data blocks, 4 to 64 log blocks.
def _fast_runs(quick: bool) -> list[dict]:
    writes, capacity, counts = (5_000, "4MiB", (4, 16)) if quick else (150_000, "64MiB", (4, 8, 16, 32, 64))
    return [dict(trace=f"uniform:writes={writes},seed=1", ftl=ftl, log_blocks=n, capacity=capacity,
                 precondition="full", preset="lee2007")
            for ftl in ("bast", "fast", "ofast") for n in counts]


def _fast_summary(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(seconds=_seconds(df))
    return df.pivot(index="log_blocks", columns="ftl", values=["flash.erases", "seconds"])


# Hot-write-reference paper (003) Figs. 6-7: synchronous FAT workloads on 32 MB, with and without a 128 KB
# NVRAM absorbing metadata writes.
def _nvram_runs(quick: bool) -> list[dict]:
    workloads = (["fat-camera:transactions=2,seed=1", "fat-postmark:transactions=1000,files=100,seed=1"] if quick
                 else ["fat-camera:seed=1", "fat-postmark:seed=1"])
    schemes = [("replacement", {"replacement_blocks": 64}), ("bast", {"log_blocks": 64}),
               ("fast", {"log_blocks": 64})]
    return [dict(trace=w, ftl=ftl, capacity="32MiB", preset="lee2007", **p, **nv)
            for w in workloads for ftl, p in schemes
            for nv in ({}, {"nvram": "128KiB", "nvram_policy": "metadata"})]


def _nvram_summary(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(seconds=_seconds(df), cached=df.get("nvram", pd.Series([None] * len(df))).notna())
    rows = []
    for (trace, ftl), g in df.groupby(["trace", "ftl"], sort=False):
        plain, cached = g[~g["cached"]].iloc[0], g[g["cached"]].iloc[0]
        rows.append({"workload": trace.split(":")[0], "ftl": ftl, "seconds": plain["seconds"],
                     "seconds with NVRAM": cached["seconds"], "improvement (x)": plain["seconds"] / cached["seconds"],
                     "writes absorbed": cached["nvram.absorbed_share"]})
    return pd.DataFrame(rows)


# TinyFTL paper §VI, Fig. 5: processing time normalised to Logblock on copy-and-delete workloads standing in
# for PIC, MP3 and MOV, on the paper's 16 GB MLC device with 393 log blocks.
def _tiny_runs(quick: bool) -> list[dict]:
    workloads = {
        "PIC": "fat-copydelete:file_mb=1.9,copies=600,volume=512MiB,seed=1",
        "MP3": "fat-copydelete:file_mb=4.4,copies=300,volume=512MiB,seed=1",
        "MOV": "fat-copydelete:file_mb=681,copies=6,volume=2GiB,seed=1",
    }
    if quick:
        workloads = {"PIC": "fat-copydelete:file_mb=1.9,copies=20,volume=64MiB,seed=1"}
    schemes = [("bast", {"log_blocks": 393}), ("logblock-zoned", {"log_blocks": 393}), ("superblock", {}),
               ("tiny", {})]
    return [dict(trace=t, labels={"workload": w}, ftl=ftl, preset="tinyftl-16g", **p)
            for w, t in workloads.items() for ftl, p in schemes]


def _tiny_summary(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(seconds=_seconds(df))
    base = df[df["ftl"] == "bast"].set_index("workload")["seconds"]
    df = df.assign(normalised=df["seconds"] / df["workload"].map(base))
    return df.pivot(index="workload", columns="ftl", values="normalised")


# MAST paper (002) Figs. 3-4: merge kinds and time relative to FAST on a hot/cold workload, 2 KB pages,
# 128 KB blocks, 256 log blocks.
def _mast_runs(quick: bool) -> list[dict]:
    writes, capacity, log_blocks = (20_000, "32MiB", 32) if quick else (400_000, "256MiB", 256)
    trace = (f"hotcold:writes={writes},hot_fraction=0.01,hot_share=0.8,sequential_share=0.1,run_pages=64,"
             "run_as_request=true,idle_every=1000,idle_gap_us=200000,seed=1")
    return [dict(trace=trace, ftl=ftl, log_blocks=log_blocks, capacity=capacity, page_bytes=2048,
                 pages_per_block=64, precondition="full") for ftl in ("fast", "last", "mast")]


def _mast_summary(df: pd.DataFrame) -> pd.DataFrame:
    kinds = ["merges.switch", "merges.partial", "merges.full", "merges.dead"]
    total = df[kinds].sum(axis=1).replace(0, 1)
    out = pd.DataFrame({"ftl": df["ftl"]})
    for k in kinds:
        out[k.split(".")[1] + " %"] = 100 * df[k] / total
    fast = df.loc[df["ftl"] == "fast", "time_us.total"].iloc[0]
    out["time vs FAST"] = df["time_us.total"] / fast
    return out


# NFTL paper (001) Tables 5-6 on a 34 MB flash at high utilisation: average read and write time per sector
# and spare reads for NFTL, the lookup table and the page cache (as much RAM as the lookup table).
def _nftl_runs(quick: bool) -> list[dict]:
    trace = ("fat-postmark:transactions=500,files=100,seed=1" if quick
             else "fat-postmark:transactions=10000,files=2000,max_bytes=16384,seed=1")
    runs = []
    for preset in ("samsung-k9f2808", "toshiba-tc58dvm72"):
        for ppb in (16, 32):
            entries = (26_112 if ppb == 16 else 17_408) // 8
            for variant, p in (("nftl", {}), ("lookup table", {"lookup_table": True}),
                               ("page cache", {"page_cache": entries})):
                runs.append(dict(trace=trace, ftl="nftl", labels={"variant": variant}, preset=preset, pages_per_block=ppb,
                                 capacity="34MiB", **p))
    return runs


def _nftl_summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (preset, ppb), g in df.groupby(["preset", "pages_per_block"], sort=False):
        base = g[g["variant"] == "nftl"].iloc[0]
        for _, r in g.iterrows():
            rows.append({
                "preset": preset, "block KB": ppb // 2, "variant": r["variant"],
                "write us/sector": r["time_us.per_write_page"], "read us/sector": r["time_us.per_read_page"],
                "write gain %": 100 * (1 - r["time_us.per_write_page"] / base["time_us.per_write_page"]),
                "read gain %": 100 * (1 - r["time_us.per_read_page"] / base["time_us.per_read_page"]),
                "spare reads": r["flash.spare_reads"], "folds": r["merges.fold"], "gc runs": r["gc.runs"],
            })
    return pd.DataFrame(rows)


EXPERIMENTS = {e.name: e for e in [
    Experiment("fast-fig10", "FAST paper (Lee et al. 2007) section 4, Fig. 10",
               "FAST beats BAST at every log-block count; BAST does not improve with more log blocks on random "
               "writes while FAST does; FAST with 4-8 log blocks does as well as BAST with more than 30",
               _fast_runs, _fast_summary, plot_x="log_blocks"),
    Experiment("nvram-fig6", "Hot-write-reference paper (Shim et al.) Figs. 6-7",
               "a 128 KB NVRAM absorbing metadata cuts total time about 30x for replacement, 3.2x for the log "
               "block scheme and 6.6x for FAST on Camera-MS500", _nvram_runs, _nvram_summary),
    Experiment("tinyftl-fig5", "TinyFTL paper (Lee et al.) section VI, Fig. 5",
               "TinyFTL is 6-17% faster than Logblock except on MOV; Superblock is best; Logblock-zoned slowest",
               _tiny_runs, _tiny_summary),
    Experiment("mast-fig4", "MAST paper sections 4.2-4.3, Figs. 3-4",
               "MAST does fewer full and more dead merges than FAST, runs 5-12% faster than FAST and within a "
               "few percent of LAST", _mast_runs, _mast_summary),
    Experiment("nftl-table5", "NFTL paper (Choudhuri & Givargis 2007) Tables 5-6",
               "the lookup table improves reads by about 36% and writes by about 5%; the page cache reads by "
               "about 10%; both only remove spare reads", _nftl_runs, _nftl_summary),
]}


def ram_tables() -> pd.DataFrame:
    """The papers' RAM tables: TinyFTL Tables I and IV on the 16 GB MLC device, NFTL on a 34 MB flash."""
    rows = [
        ("TinyFTL Table I", "tiny", {}, 12_195),
        ("TinyFTL Table IV", "bast", {"log_blocks": 393}, 281_984),
        ("TinyFTL Table IV (zone map)", "logblock-zoned", {"log_blocks": 393}, 12_288),
        ("TinyFTL Table IV", "superblock", {}, 198_176),
        ("TinyFTL section III (page map)", "page", {"over_provisioning": 0.024}, 24_576_000),
    ]
    out = []
    for source, ftl, params, paper in rows:
        r = ram(ftl=ftl, preset="tinyftl-16g", **params)
        figure = r["zone_block_map"] if ftl == "logblock-zoned" else r.get("page_map", r["total_bytes"])
        out.append({"source": source, "ftl": ftl, "paper bytes": paper, "ftlsim bytes": figure})
    for ppb in (16, 32):
        r = ram(ftl="nftl", capacity="34MiB", pages_per_block=ppb, lookup_table=True)
        out.append({"source": f"NFTL 34 MB, {ppb // 2} KB blocks", "ftl": "nftl block map",
                    "paper bytes": 17_408 * 16 // ppb, "ftlsim bytes": r["block_map"]})
        out.append({"source": f"NFTL 34 MB, {ppb // 2} KB blocks", "ftl": "nftl lookup table",
                    "paper bytes": 26_112 if ppb == 16 else 17_408,
                    "ftlsim bytes": r["rep_block_table"] + r["page_status_bitmap"]})
    return pd.DataFrame(out)
