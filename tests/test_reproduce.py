"""`ftlsim reproduce`: every experiment runs at its quick size and every claim gets a verdict and a distance by
the stated rule (the verdicts' values follow the engine and are not asserted here); the rule itself is pinned on
made-up figures; the headline counts distinct claims; the package runs without any machine's paths."""

import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from PIL import Image

import ftlsim
from ftlsim.cli import main
from ftlsim.reproduce import (EXPERIMENTS, PAPER_FILES, RULE, SKIPPED, STATUSES, VERDICTS, Claim, _decided_by, counts, headline,
                              run_all, summary, variants, write_report)

ROOT = Path(__file__).resolve().parents[1]
TINY_MSR = ROOT / "crates" / "ftlsim-core" / "tests" / "fixtures" / "tiny.msr"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """A traces directory holding the public traces the quick experiments need. The engine's tiny MSR and
    vSCSI fixtures stand in for msr_wdev_1.csv and the CloudPhysics sample: these tests check that the files are
    found and run, not their figures."""
    d = tmp_path_factory.mktemp("traces")
    shutil.copy(TINY_MSR, d / "msr_wdev_1.csv")
    shutil.copy(TINY_MSR.with_suffix(".vscsi"), d / "cloudphysics_vscsi_sample.csv")
    return d


@pytest.fixture(scope="module")
def results(traces):
    return run_all(quick=True, traces=traces)


def test_every_experiment_of_the_five_papers_judges_every_claim(results):
    assert [r.experiment.name for r in results] == list(EXPERIMENTS)
    # Each experiment names its paper as a user knows it (never by the project's file number), and every one of
    # the five papers is reproduced.
    papers = {p for r in results for p in PAPER_FILES if r.experiment.paper.startswith(p)}
    assert papers == set(PAPER_FILES)
    file_number = re.compile(r"(?<![\d,.])\b00[0-4]\b")  # "003's", not "1,000"
    assert not any(file_number.search(r.experiment.paper + r.experiment.stand_in + r.experiment.notes
                                      + r.experiment.plausible_why) for r in results)
    assert not any(file_number.search(w) for r in results for w in r.verdicts["where"])
    for r in results:
        assert not r.skipped, (r.experiment.name, r.skipped)
        v = r.verdicts
        assert len(v) > 0, r.experiment.name
        assert set(v["verdict"]) <= set(VERDICTS), r.experiment.name
        for _, c in v.iterrows():
            assert c["rule"], (r.experiment.name, c["claim"])
            assert c["why"], (r.experiment.name, c["claim"])
            assert c["ftlsim"] or c["verdict"] == "not comparable", (r.experiment.name, c["claim"])
            assert isinstance(c["line"], int) and c["line"] > 0
            # A claim whose paper figures ftlsim measures under the same name prints its distance.
            if c["verdict"] == "contradicts":
                assert c["cause"], (r.experiment.name, c["claim"])  # what ftlsim measured, or the runs that test it
            if c["verdict"] in ("exact", "close"):
                distance = r"^[-+]?[\d.]+(e[-+]\d+)?(x| pt)?( \(.+\))?$"
                assert re.match(distance, c["distance"]), (c["claim"], c["distance"])
        assert len(r.table) > 0


def test_headline_counts_distinct_claims_each_once(results):
    s = summary(results)
    # One row per claim: no claim id in two experiments, none twice in one.
    assert not s["claim"].duplicated().any(), list(s[s["claim"].duplicated()]["claim"])
    by_variant = variants(results)
    assert len(s) == len(by_variant.drop_duplicates(["experiment", "claim"]))
    c = counts(results)
    assert list(c) == list(STATUSES) and sum(c.values()) == len(s)
    assert headline(results).startswith(f"{len(s)} claims: {c['exact']} exact, {c['close']} close, ")


def test_a_claim_run_under_several_variants_is_headed_by_the_plausible_one(results):
    by_name = {r.experiment.name: r for r in results}
    plausible = "align=spec, cluster=2KiB, allocation=next-free"
    for name in ("nvram-fig6", "nvram-fig7"):
        assert by_name[name].experiment.plausible == plausible
        assert set(by_name[name].verdicts["variant"]) == {plausible,
                                                          "align=block, cluster=16KiB, allocation=first-free"}
    assert set(by_name["tinyftl-fig5"].verdicts["variant"]) == {"align=spec, cluster=4KiB",
                                                                 "align=block, cluster=8KiB"}
    s = summary(results)
    several = s[s["under"] != ""]
    assert set(several["experiment"]) == {"fast-sec2.4", "nftl-table5", "nftl-fig5", "nvram-fig6",
                                          "nvram-fig7", "tinyftl-fig5"}
    by_variant = variants(results)
    for _, c in several.iterrows():
        assert c["under"] == by_name[c["experiment"]].experiment.plausible
        head = by_variant[(by_variant["claim"] == c["claim"]) & (by_variant["variant"] == c["under"])].iloc[0]
        assert (c["verdict"], c["distance"]) == (head["verdict"], head["distance"])
        assert re.search(r"(under all 2 variants|of 2 variants; .*decide)", c["spread"]), c["spread"]
    # The page cache's 16 KB against 8 KB claim is judged once, at the paper's equal RAM and at equal entries.
    page_cache = by_variant[by_variant["claim"] == "page cache gains more with 16 KB blocks"]
    assert list(page_cache["experiment"]) == ["nftl-table5"] * 2
    assert list(page_cache["variant"]) == ["cache=equal RAM", "cache=equal entries"]


def test_which_choice_decides_a_verdict_on_made_up_verdicts():
    c, s = "contradicts", "same direction"
    two = ["align=spec, cluster=2KiB", "align=spec, cluster=4KiB", "align=block, cluster=2KiB",
           "align=block, cluster=4KiB"]
    assert _decided_by([c] * 4, two) == "no choice: contradicts under all 4 variants"
    assert _decided_by([c, c, s, s], two) == ("align decides it (align=spec: contradicts; align=block: "
                                              "same direction)")
    assert _decided_by([c, s, c, s], two) == "cluster decides it (cluster=2KiB: contradicts; cluster=4KiB: " \
                                             "same direction)"
    # Three choices; `same direction` only when block-aligned with 16 KiB clusters, whatever the allocation.
    three = [f"align={a}, cluster={k}, allocation={al}" for a in ("spec", "block") for k in ("2KiB", "16KiB")
             for al in ("first-free", "next-free")]
    verdicts = [s if ("block" in v and "16KiB" in v) else c for v in three]
    assert _decided_by(verdicts, three) == ("align and cluster together decide it (contradicts except "
                                            "align=block, cluster=16KiB: same direction)")
    # Alignment decides whether the claim holds; among the variants where it holds, the cluster size decides
    # exact against same direction.
    e = "exact"
    verdicts = [c if "spec" in v else e if "2KiB" in v else s for v in three]
    assert _decided_by(verdicts, three) == (
        "align decides whether it holds (align=spec: contradicts; align=block: holds); where it holds, cluster "
        "decides how closely (cluster=2KiB: exact; cluster=16KiB: same direction)")
    # Alignment decides all but one variant (three[1]: spec, 2 KiB, next-free), which is named.
    verdicts = [s if "spec" in v and v != three[1] else c for v in three]
    assert _decided_by(verdicts, three) == (
        "align decides it but for 1 variant (align=spec: same direction; align=block: contradicts; but "
        "contradicts [" + three[1] + "])")
    # Nothing explains it: the rarer verdicts are listed by variant.
    verdicts = [s if v in (three[0], three[3], three[5]) else c for v in three]
    assert _decided_by(verdicts, three) == (
        "no single choice or pair: contradicts under 5 of 8 variants; " + "; ".join(
            f"same direction [{three[i]}]" for i in (0, 3, 5)))


def test_stand_ins_are_named(results):
    for r in results:
        if r.experiment.name not in ("fast-fig10", "fast-sec2.4", "fast-analytic", "ram-tables"):
            assert r.experiment.stand_in, r.experiment.name


def test_report_holds_the_rule_every_claim_table_figure_and_verdict(results, tmp_path):
    path = write_report(results, tmp_path)
    text = path.read_text()
    assert RULE in text and headline(results) in text
    for r in results:
        assert f"## {r.experiment.name}" in text
        if r.experiment.figure is not None:
            png = tmp_path / f"{r.experiment.name}.png"
            assert png.stat().st_size > 5_000
            with Image.open(png) as im:
                assert im.size[0] <= 2_400, (png.name, im.size)  # a paper column, however many variants ran
            assert f"![{r.experiment.name}]({png.name})" in text
    assert len(re.findall(r"^### (exact|close|same direction|contradicts|not comparable): ", text, re.M)) == len(
        variants(results))
    claims = text[text.index("## Claims\n"):text.index("## Claims by variant")]
    assert len(re.findall(r"^\| [a-z0-9.-]+ \| ", claims, re.M)) == 1 + len(summary(results))  # the header row


def test_python_api_runs_one_experiment():
    r = ftlsim.reproduce.run("fast-fig10", quick=True)
    assert list(r.df["log_blocks"].unique()) == [4, 16]
    assert len(r.verdicts) == 5
    with pytest.raises(KeyError, match="valid: fast-fig4, fast-sec2.4, fast-fig10, "):
        ftlsim.reproduce.run("nope")


def test_the_experiments_figures_leave_pyplot_alone(tmp_path):
    # A notebook calling reproduce keeps its backend and open figures (pyplot with Agg forced switched them).
    import matplotlib
    import matplotlib.pyplot as plt
    import pandas as pd

    from ftlsim.reproduce import figures

    backend, open_figures = matplotlib.get_backend(), plt.get_fignums()
    df = pd.DataFrame({"log_blocks": [4, 8, 4, 8], "ftl": ["fast", "fast", "bast", "bast"],
                       "flash.erases": [10, 6, 14, 9]})
    figures.lines(df, "log_blocks", [("flash.erases", "erases")], "ftl", str(tmp_path / "l.png"), "erases")
    table = df.pivot(index="log_blocks", columns="ftl", values="flash.erases")
    figures.bars(table, str(tmp_path / "b.png"), "erases", "erases")
    assert (matplotlib.get_backend(), plt.get_fignums()) == (backend, open_figures)
    assert (tmp_path / "l.png").stat().st_size > 1000 and (tmp_path / "b.png").stat().st_size > 1000


def test_cli_runs_one_and_lists(tmp_path):
    runner = CliRunner()
    listing = runner.invoke(main, ["reproduce", "--list"], catch_exceptions=False)
    assert listing.exit_code == 0
    for name in EXPERIMENTS:
        assert name in listing.output
    # With a NAME, that experiment's line alone (the NAME was ignored: the whole list).
    listing = runner.invoke(main, ["reproduce", "--list", "fast-fig10"], catch_exceptions=False)
    assert listing.exit_code == 0 and "fast-fig10" in listing.output and "nftl-fig5" not in listing.output
    one = runner.invoke(main, ["reproduce", "nftl-fig5", "--quick", "--csv", str(tmp_path / "r.csv"), "--plot",
                               str(tmp_path / "f.png")], catch_exceptions=False)
    assert one.exit_code == 0, one.output
    assert "Stand-in" in one.output and "Claims" in one.output and "rule:" in one.output
    assert len(pd.read_csv(tmp_path / "r.csv")) == 20  # 2 workloads x 2 block sizes x 5 cache sizes
    assert (tmp_path / "f.png").stat().st_size > 5_000
    assert runner.invoke(main, ["reproduce", "nope"]).exit_code == 2


def test_an_experiment_whose_trace_is_missing_is_skipped_and_says_how_to_point_at_it(traces, monkeypatch, tmp_path):
    monkeypatch.delenv("FTLSIM_TRACES", raising=False)
    r = ftlsim.reproduce.run("tinyftl-zoned", quick=True)
    assert r.skipped.startswith("needs the public traces msr_wdev_1.csv, cloudphysics_vscsi_sample.csv, and no "
                                "traces directory was given: pass --traces DIR")
    assert set(r.verdicts["verdict"]) == {SKIPPED} and len(r.verdicts) == 2
    assert r.figure(tmp_path / "none.png") is False
    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"not found in {empty}" in ftlsim.reproduce.run("tinyftl-zoned", quick=True, traces=empty).skipped
    # The skipped claims still count in the headline, as skipped.
    assert "2 skipped" in headline([r])
    # FTLSIM_TRACES points at the directory, for the API and the command alike.
    monkeypatch.setenv("FTLSIM_TRACES", str(traces))
    found = ftlsim.reproduce.run("tinyftl-zoned", quick=True)
    assert not found.skipped and str(traces / "msr_wdev_1.csv") in set(found.df["trace"])
    runner = CliRunner()
    out = runner.invoke(main, ["reproduce", "tinyftl-zoned", "--quick"], catch_exceptions=False)
    assert out.exit_code == 0 and SKIPPED not in out.output, out.output
    out = runner.invoke(main, ["reproduce", "tinyftl-zoned", "--quick", "--traces", str(empty)])
    assert out.exit_code == 0 and "skipped tinyftl-zoned: needs the public traces msr_wdev_1.csv" in out.output
    bad = runner.invoke(main, ["reproduce", "tinyftl-zoned", "--quick", "--traces", str(tmp_path / "no")])
    assert bad.exit_code == 2 and "--traces" in bad.output
    monkeypatch.setenv("FTLSIM_TRACES", str(tmp_path / "no"))
    with pytest.raises(ValueError, match="FTLSIM_TRACES names .* which is not a directory"):
        ftlsim.reproduce.run("tinyftl-zoned", quick=True)


def test_the_package_holds_no_machine_path():
    package = ROOT / "python" / "ftlsim"
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in package.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if "/work/" in line]
    assert hits == []


def test_the_worked_examples_of_fast_section_2_4_by_hand():
    """Two log blocks of four sectors, every data block written (FAST paper section 2.4; FAST's Algorithm 2)."""
    df = ftlsim.reproduce.run("fast-sec2.4", quick=True).df
    counts = {(r["sequence"], r["ftl"]): (r["merges.total"], r["flash.erases"], r["flash.page_reads"])
              for _, r in df.iterrows()}
    # Example 1 under BAST: S0 and S4 take the two log blocks; each later write finds no log block for its data
    # block and replaces the older one, a full merge (partial merges are off by default) of a victim holding one
    # sector: 3 copies from the data block + 1 from the log, erase data and log blocks. 6 merges, 12 erases, 24
    # copies; the same shifted to offset 1.
    assert counts[("S0 S4 S8 S12", "bast")] == counts[("S1 S5 S9 S13", "bast")] == (6, 12, 24)
    # Example 1 under FAST (Algorithm 2): every write is at offset 0, so each goes to the SW block, and each from
    # the second merges the SW block holding one sector: a partial merge copying sectors 1-3 from the data block,
    # erasing the old data block. 7 merges, 7 erases, 21 copies. Shifted to offset 1 the eight writes fill the
    # two RW blocks: nothing to merge.
    assert counts[("S0 S4 S8 S12", "fast")] == (7, 7, 21)
    assert counts[("S1 S5 S9 S13", "fast")] == (0, 0, 0)
    # Example 2 under BAST: S0 S2 S1 S3 fill block 0's log block; the fifth write (S1) merges it (out of order: a
    # full merge, 4 copies, 2 erases); S1 S0 S2 S3 fill a new log block. 1 merge.
    assert counts[("S0 S2 S1 S3", "bast")] == (1, 2, 4)
    # Example 2 under FAST: S0 opens the SW block; S2 (offset 2 > 1 page in SW, case 2.2) partially merges it,
    # copying S1 and S3 from the data block; S1 S3 S1 go to an RW block; S0 opens the SW block again; S2 merges it
    # again, copying S1 and S3, now the RW block's newest; S3 fills the RW block. 2 merges, 2 erases, 4 copies.
    assert counts[("S0 S2 S1 S3", "fast")] == (2, 2, 4)
    # The traces it wrote are gone when it ends: named as generated, not by a temporary path.
    assert sorted(set(df["trace"])) == ["generated:S0-S2-S1-S3.csv", "generated:S0-S4-S8-S12.csv",
                                        "generated:S1-S5-S9-S13.csv"]
    assert not df["config.resolved"].str.contains(tempfile.gettempdir()).any()


def test_verdict_rule_on_made_up_figures():
    df = pd.DataFrame()

    def claim(ours, stand_in=False, **kw):
        return Claim("c", "t", "Fig. 1", 1, lambda _: ours, **kw).judge(df, stand_in)

    # exact: within the stated 5 points; close: within 10 points; beyond: the direction test decides.
    v = claim({"a": 33.0}, paper={"a": 36.1}, unit="points", abs_tol=5, holds=lambda o: o["a"] > 0, test="a > 0")
    assert (v["verdict"], v["distance"]) == ("exact", "-3.1 pt")
    v = claim({"a": 30.0, "b": 5.0}, paper={"a": 36.1, "b": 4.8}, unit="points", abs_tol=5,
              holds=lambda o: o["a"] > o["b"], test="a > b")
    assert (v["verdict"], v["distance"], v["why"]) == (
        "close", "-6.1 pt (a)", "within 10 points, not 5 points; worst a: 30 vs paper 36.1 (-6.1 pt)")
    v = claim({"a": 20.0, "b": 5.0}, paper={"a": 36.1, "b": 4.8}, unit="points", abs_tol=5,
              holds=lambda o: o["a"] > o["b"], test="a > b")
    assert (v["verdict"], v["distance"]) == ("same direction", "-16.1 pt (a)")
    assert v["why"] == "a > b holds; worst a: 20 vs paper 36.1 (-16.1 pt)"
    # Ratios: 10% by default; 8.2 vs 9 is 0.911x (exact), 7.9 is 0.878x (close), 4 is 0.444x (beyond 2x).
    assert (claim({"x": 8.2}, paper={"x": 9})["verdict"], claim({"x": 8.2}, paper={"x": 9})["distance"]) == (
        "exact", "0.911x")
    assert claim({"x": 7.9}, paper={"x": 9})["verdict"] == "close"
    assert claim({"x": 19}, paper={"x": 9})["verdict"] == "contradicts"
    assert claim({"x": 4}, paper={"x": 9}, holds=lambda o: o["x"] > 0, test="x > 0")["verdict"] == "same direction"
    # A stand-in workload is at most close, and says so.
    v = claim({"x": 9}, stand_in=True, paper={"x": 9})
    assert (v["verdict"], v["why"]) == ("close", "within 10%, on a stand-in workload (stand-in)")
    assert "(stand-in: at most close)" in v["rule"]
    # The direction test fails: contradicts, whatever the magnitudes, with the cause measured.
    v = Claim("c", "t", "Fig. 1", 1, lambda _: {"x": 2}, paper={"x": 2}, holds=lambda o: o["x"] < 1,
              test="x < 1", cause=lambda _: "12 full merges").judge(df)
    assert (v["verdict"], v["why"], v["cause"]) == ("contradicts", "x < 1 fails", "12 full merges")
    # No paper figure: the direction test alone gives `same direction` at best.
    assert claim({"x": 1}, holds=lambda o: o["x"] > 0, test="x > 0")["verdict"] == "same direction"
    assert claim({"x": 1}, not_comparable="figure lost")["verdict"] == "not comparable"
    assert claim({"x": 1}, holds=lambda o: o["missing"] > 0)["verdict"] == "not comparable"


def test_every_experiments_table_fits_80_columns_with_no_cell_or_header_cut_or_squeezed(results):
    from rich.console import Console

    from ftlsim.cli import dataframe_tables

    for r in results:
        if r.skipped:
            continue
        console = Console(width=80, record=True, file=open("/dev/null", "w"))
        tables = dataframe_tables(r.table, 80)
        for table in tables:
            console.print(table)
        text = console.export_text()
        # A table too wide goes on below, repeating the columns that name the rows: none is squeezed away.
        if r.experiment.name == "mast-fig3":
            assert len(tables) == 2 and all(t.columns[0].header == "run" for t in tables)
            assert len(re.findall(r"│ FAST +│", text)) == 2
        assert "…" not in text, (r.experiment.name, text)
        assert max(len(line) for line in text.splitlines()) <= 80, (r.experiment.name, text)
        # Every figure whole: each number of the table's frame appears as the table prints it.
        for row in r.table.itertuples(index=False):
            for value in row:
                if isinstance(value, (int, float)) and value == value:  # a whole count shown whole (6, not 6.000)
                    shown = {ftlsim.output.fmt(value)} | ({ftlsim.output.fmt(int(value))} if value == int(value)
                                                          else set())
                    assert any(s in text for s in shown), (r.experiment.name, value)


def test_a_count_in_a_table_is_whole(results):
    # MAST's blocks per area at the end read 223.000: the run's row had turned the count into a float.
    table = next(r.table for r in results if r.experiment.name == "mast-fig2")
    assert pd.api.types.is_integer_dtype(table["blocks at end"]), table.dtypes
    assert table["blocks at end"].sum() > 0


def test_a_claim_the_runs_cannot_exercise_is_not_comparable_rather_than_contradicted():
    # The quick Fig. 5 runs of PIC and MP3 fill no log block: no scheme merges, and the claims about their
    # differences were judged "contradicts" on times no scheme's mechanism made.
    r = ftlsim.reproduce.run("tinyftl-fig5", quick=True, traces=str(ROOT.parent / "shared" / "traces"))
    assert (r.df[r.df["workload"].isin(["PIC", "MP3"])]["merges.total"] == 0).all()
    assert set(r.verdicts["verdict"]) == {"not comparable"}
    assert r.verdicts["why"].str.startswith("no scheme merged on PIC or MP3 in these runs").all()
