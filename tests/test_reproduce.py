"""`ftlsim reproduce`: every experiment runs at its quick size and every claim gets a verdict by the stated rule
(the verdicts' values follow the engine and are not asserted here); the rule itself is pinned on made-up figures."""

import re

import pandas as pd
import pytest
from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main
from ftlsim.reproduce import EXPERIMENTS, VERDICTS, Claim, _decided_by, deciders, run_all, summary, write_report


@pytest.fixture(scope="module")
def results():
    return run_all(quick=True)


def test_every_experiment_of_the_five_papers_judges_every_claim(results):
    assert [r.experiment.name for r in results] == list(EXPERIMENTS)
    papers = {r.experiment.paper[:3] for r in results}
    assert papers == {"000", "001", "002", "003", "004"}
    for r in results:
        v = r.verdicts
        assert len(v) > 0, r.experiment.name
        assert set(v["verdict"]) <= set(VERDICTS), r.experiment.name
        for _, c in v.iterrows():
            assert c["rule"], (r.experiment.name, c["claim"])
            assert c["ftlsim"] or c["verdict"] == "not comparable", (r.experiment.name, c["claim"])
            assert isinstance(c["line"], int) and c["line"] > 0
            if c["verdict"] == "contradicts":
                assert c["why"], (r.experiment.name, c["claim"])
        assert len(r.table) > 0


def test_experiments_whose_verdict_may_hang_on_a_fat_choice_show_each_choice(results):
    by_name = {r.experiment.name: r for r in results}
    for name in ("nvram-fig6", "nvram-fig7"):
        variants = set(by_name[name].verdicts["variant"])
        assert variants == {"align=spec, cluster=2KiB, allocation=first-free",
                            "align=block, cluster=16KiB, allocation=next-free"}
    assert set(by_name["tinyftl-fig5"].verdicts["variant"]) == {"align=spec, cluster=4KiB",
                                                                 "align=block, cluster=8KiB"}
    # Every claim judged under several choices has a line saying which choice decides it.
    d = deciders(results)
    judged = summary(results)
    several = judged[judged["variant"] != ""].groupby(["experiment", "claim"]).size()
    assert set(zip(d["experiment"], d["claim"])) == set(several[several > 1].index)
    assert all(d["decided by"].str.contains("decide|no choice"))


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
        if r.experiment.name not in ("fast-fig10", "ram-tables"):
            assert r.experiment.stand_in, r.experiment.name


def test_report_holds_every_table_figure_and_verdict(results, tmp_path):
    path = write_report(results, tmp_path)
    text = path.read_text()
    for r in results:
        assert f"## {r.experiment.name}" in text
        if r.experiment.figure is not None:
            png = tmp_path / f"{r.experiment.name}.png"
            assert png.stat().st_size > 5_000
            assert f"![{r.experiment.name}]({png.name})" in text
    assert len(re.findall(r"^### (exact|same direction|contradicts|not comparable): ", text, re.M)) == len(
        summary(results))
    assert "## Which choice decides each verdict" in text
    for claim in deciders(results)["claim"]:
        assert claim.replace("|", "\\|") in text


def test_python_api_runs_one_experiment():
    r = ftlsim.reproduce.run("fast-fig10", quick=True)
    assert list(r.df["log_blocks"].unique()) == [4, 16]
    assert len(r.verdicts) == 5
    with pytest.raises(KeyError, match="valid: fast-fig10"):
        ftlsim.reproduce.run("nope")


def test_cli_runs_all_and_one_and_lists(tmp_path):
    runner = CliRunner()
    listing = runner.invoke(main, ["reproduce", "--list"], catch_exceptions=False)
    assert listing.exit_code == 0
    for name in EXPERIMENTS:
        assert name in listing.output
    one = runner.invoke(main, ["reproduce", "nftl-fig5", "--quick", "--csv", str(tmp_path / "r.csv"), "--plot",
                               str(tmp_path / "f.png")], catch_exceptions=False)
    assert one.exit_code == 0, one.output
    assert "Stand-in" in one.output and "Claims" in one.output
    assert len(pd.read_csv(tmp_path / "r.csv")) == 10
    assert (tmp_path / "f.png").stat().st_size > 5_000
    assert runner.invoke(main, ["reproduce", "nope"]).exit_code == 2


def test_verdict_rule_on_made_up_figures():
    df = pd.DataFrame()

    def claim(ours, **kw):
        return Claim("c", "t", "Fig. 1", 1, lambda _: ours, **kw).judge(df)

    # exact: within 5 points of the paper; one figure outside makes it fall back to the direction test.
    assert claim({"a": 33.0}, paper={"a": 36.1}, abs_tol=5, holds=lambda o: o["a"] > 0)["verdict"] == "exact"
    v = claim({"a": 30.0, "b": 5.0}, paper={"a": 36.1, "b": 4.8}, abs_tol=5, holds=lambda o: o["a"] > o["b"],
              test="a > b")
    assert (v["verdict"], v["why"]) == ("same direction", "a > b holds; a: 30 vs paper 36.1")
    # relative tolerance: 9 vs 8.2 is 8.9% off, inside 10%; 7.9 vs 9 is 12% off.
    assert claim({"x": 8.2}, paper={"x": 9}, rel_tol=0.10)["verdict"] == "exact"
    assert claim({"x": 7.9}, paper={"x": 9}, rel_tol=0.10)["verdict"] == "contradicts"
    # direction false: contradicts, with the cause measured; no test and no tolerance cannot be `exact`.
    v = Claim("c", "t", "Fig. 1", 1, lambda _: {"x": 2}, holds=lambda o: o["x"] < 1, test="x < 1",
              cause=lambda _: "12 full merges").judge(df)
    assert (v["verdict"], v["why"], v["cause"]) == ("contradicts", "x < 1 fails", "12 full merges")
    assert claim({"x": 1}, not_comparable="figure lost")["verdict"] == "not comparable"
    assert claim({"x": 1}, holds=lambda o: o["missing"] > 0)["verdict"] == "not comparable"
