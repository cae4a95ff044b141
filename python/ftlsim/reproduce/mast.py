"""The MAST paper (002): Fig. 2 (utilisation of each log area), Fig. 3 (merge kinds), Fig. 4 (time against FAST
and LAST), on the paper's device (128 KB blocks, 2 KB pages, 256 log blocks)."""

from __future__ import annotations

import pandas as pd

from .core import MAST_PAPER, Claim, Experiment, merge_mix, row

STAND_IN = ("hotcold with 10% of writes as 64-page sequential requests, 80% of random writes to 1% of the space, "
            "idle gaps every 1,000 requests, for the paper's three PC applications' system-call traces (private)")
KINDS = ("switch", "partial", "full", "dead")


def _runs(quick: bool) -> list[dict]:
    writes, capacity, log_blocks = (20_000, "32MiB", 32) if quick else (400_000, "256MiB", 256)
    trace = (f"hotcold:writes={writes},hot_fraction=0.01,hot_share=0.8,sequential_share=0.1,run_pages=64,"
             "run_as_request=true,idle_every=1000,idle_gap_us=200000,seed=1")
    base = dict(trace=trace, log_blocks=log_blocks, capacity=capacity, page_bytes=2048, pages_per_block=64,
                precondition="full")
    return ([dict(base, ftl=ftl, labels={"probe": PAPER_SETUP}) for ftl in ("fast", "last", "mast")]
            + [dict(base, ftl="mast", labels={"probe": name}, **params) for name, params in PROBES.items()])


# MAST section 3 gives the dynamic sizing rule but no bounds, and the idle-time merges no budget: on the stand-in
# the sizing shrinks CA to one block. Each probe turns one of those open choices, to test it as the cause of a
# contradicted claim.
PAPER_SETUP = "as the paper states it"
PROBES: dict[str, dict] = {"no dynamic sizing": {"dynamic_sizing": False}, "CA at least 25%": {"ca_min_share": 0.25},
          "64 idle merges": {"idle_merges": 64}}


def row_of(df, ftl, probe=PAPER_SETUP):
    return row(df, ftl=ftl, probe=probe)


def _label(ftl, probe) -> str:
    from .figures import paper_name

    return paper_name(ftl) + ("" if probe == PAPER_SETUP else f" ({probe})")


def _probes(df) -> str:
    """What each probe changes in MAST's merge mix and time against LAST and FAST."""
    last, fast = row_of(df, "last")["time_us.total"], row_of(df, "fast")["time_us.total"]
    out = []
    for name in (PAPER_SETUP, *PROBES):
        m = row_of(df, "mast", name)
        out.append(f"{name}: full {_share(m, 'full'):.1f}%, dead {_share(m, 'dead'):.1f}% of merges, MAST "
                   f"{100 * (1 - m['time_us.total'] / last):+.1f}% vs LAST, "
                   f"{100 * (1 - m['time_us.total'] / fast):+.1f}% "
                   f"vs FAST, CA {int(m.get('mast.area_blocks.ca', 0))} blocks at the end")
    turned = [name for name in PROBES if row_of(df, "mast", name)["time_us.total"] < last]
    verdict = (f"MAST beats LAST with: {', '.join(turned)}" if turned
               else "no probe makes MAST faster than LAST: these open choices are not the cause")
    return "candidate causes tested on MAST (section 3 leaves them open): " + "; ".join(out) + f". {verdict}"


def _share(r, kind) -> float:
    total = sum(r[f"merges.{k}"] for k in KINDS) or 1
    return 100 * r[f"merges.{kind}"] / total


def _fig3_table(df: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"run": [_label(f, p) for f, p in zip(df["ftl"], df["probe"])]})
    for k in KINDS:
        out[f"{k} %"] = [_share(r, k) for _, r in df.iterrows()]
        out[f"{k} erases"] = df[f"merges.{k}.erases"]
    fast = row_of(df, "fast")["time_us.total"]
    out["time vs FAST"] = df["time_us.total"] / fast
    return out


def _shares(df) -> dict:
    return {f"{f} {k} %": _share(row_of(df, f), k) for f in ("fast", "last", "mast") for k in KINDS}


def _mix(df) -> str:
    """Where the merges come from, and what turning each open choice of MAST does."""
    extra = ""
    m = row_of(df, "mast")
    if "mast.fallback_merges" in m:
        extra = (f"; MAST moved pages LA->CA {int(m.get('mast.moved_pages.la_to_ca', 0))}, HA->CA "
                 f"{int(m.get('mast.moved_pages.ha_to_ca', 0))}")
    return "; ".join(f"{f}: {merge_mix(row_of(df, f))}" for f in ("fast", "last", "mast")) + extra + ". " + _probes(df)


def _fig3_claims(quick: bool) -> list[Claim]:
    return [
        Claim("FAST: largest full-merge share, lowest dead share", "the FAST method had the largest percentage of "
              "the full merge and the lowest of the dead merge", "Fig. 3, section 4.2", 63, _shares,
              holds=lambda o: o["fast full %"] > max(o["last full %"], o["mast full %"])
              and o["fast dead %"] < min(o["last dead %"], o["mast dead %"]),
              test="FAST full share highest and dead share lowest of the three", cause=_mix),
        Claim("LAST: more switch and dead merges than FAST", "LAST technique had higher rates of the switch merge "
              "and the dead merge than the FAST", "Fig. 3, section 4.2", 63, _shares,
              holds=lambda o: o["last switch %"] > o["fast switch %"] and o["last dead %"] > o["fast dead %"],
              test="LAST switch and dead shares above FAST's", cause=_mix),
        Claim("MAST: lowest full share, highest dead share", "MAST had the lowest rate of full merge operation and "
              "the highest rate of dead merge operation", "Fig. 3, section 4.2", 63, _shares,
              holds=lambda o: o["mast full %"] < min(o["fast full %"], o["last full %"])
              and o["mast dead %"] > max(o["fast dead %"], o["last dead %"]),
              test="MAST full share lowest and dead share highest of the three", cause=_mix),
    ]


def _fig3_figure(df, path, title):
    from .figures import bars

    t = _fig3_table(df).set_index("run")[[f"{k} %" for k in KINDS]]
    t.index = [i.replace(" (", "\n(") for i in t.index]
    bars(t, path, title + " (MAST also with each open choice turned)", "share of merges (%)", stacked=True)


FIG3 = Experiment("mast-fig3", MAST_PAPER + ", section 4.2, Fig. 3", "merge kinds of FAST, LAST and MAST",
                  _runs, _fig3_table, _fig3_claims, _fig3_figure, stand_in=STAND_IN,
                  notes="Fig. 3's bars did not survive the text; the claims are its sentences.")


def _gain(df, other):
    return 100 * (1 - row_of(df, "mast")["time_us.total"] / row_of(df, other)["time_us.total"])


def _fig4_claims(quick: bool) -> list[Claim]:
    def gains(df):
        return {"MAST faster than FAST %": _gain(df, "fast"), "MAST faster than LAST %": _gain(df, "last")}

    return [
        Claim("MAST 7% faster than FAST (5-12% over three applications)", "MAST outperformed FAST technique by 7% "
              "... 5% ... 12%", "Fig. 4, section 4.3", 73, gains, paper={"MAST faster than FAST %": 7},
              unit="points", abs_tol=5, holds=lambda o: o["MAST faster than FAST %"] > 0, test="MAST faster than FAST",
              cause=_mix),
        Claim("MAST 3% faster than LAST (-2 to 4%)", "MAST ... LAST by 3% ... performed 2% lower than LAST ... LAST "
              "by 4%", "Fig. 4, section 4.3", 73, gains, paper={"MAST faster than LAST %": 3}, unit="points",
              abs_tol=3, holds=lambda o: o["MAST faster than LAST %"] > -2, test="MAST no more than 2% slower than LAST",
              cause=_mix),
    ]


def _fig4_figure(df, path, title):
    from .figures import bars

    t = pd.DataFrame({"time vs FAST": df["time_us.total"].values / row_of(df, "fast")["time_us.total"]},
                     index=[_label(f, p).replace(" (", "\n(") for f, p in zip(df["ftl"], df["probe"])])
    paper = {("MAST", "time vs FAST"): 0.93}
    bars(t, path, title + " (MAST also with each open choice turned)", "elapsed time relative to FAST", paper=paper)


FIG4 = Experiment("mast-fig4", MAST_PAPER + ", section 4.3, Fig. 4", "elapsed time of MAST against FAST and LAST",
                  _runs, _fig3_table, _fig4_claims, _fig4_figure, stand_in=STAND_IN)


def _fig2_table(df):
    m = row_of(df, "mast")
    # A block count, whole (the run's row holds it as a float beside the utilizations: it read 223.000).
    return pd.DataFrame([{"area": a.upper(), "utilization": m.get(f"mast.utilization.{a}"),
                          "blocks at end": int(m[f"mast.area_blocks.{a}"])} for a in ("la", "ha", "ca")])


def _fig2_claims(quick: bool) -> list[Claim]:
    def util(df):
        m = row_of(df, "mast")
        return {f"{a.upper()} utilization": m[f"mast.utilization.{a}"] for a in ("la", "ha", "ca")}

    return [Claim("HA's utilisation lower than CA's", "the utilization of the HA is lower and that of the CA is "
                  "higher", "Fig. 2, section 4.1", 56, util,
                  holds=lambda o: o["HA utilization"] < o["CA utilization"], test="HA < CA",
                  cause=lambda df: f"MAST: {merge_mix(row_of(df, 'mast'))}")]


def _fig2_figure(df, path, title):
    from .figures import bars

    bars(_fig2_table(df).set_index("area")[["utilization"]], path, title, "valid pages / pages")


FIG2 = Experiment("mast-fig2", MAST_PAPER + ", section 4.1, Fig. 2", "utilisation (valid pages) of MAST's LA, HA "
                  "and CA, sampled over the run", _runs, _fig2_table, _fig2_claims, _fig2_figure, stand_in=STAND_IN)

EXPERIMENTS = [FIG2, FIG3, FIG4]
