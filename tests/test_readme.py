"""The README shows what ftlsim does: its sample output is what the command it shows prints, and the links
and install lines it gives point at things that exist."""

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

import ftlsim
from ftlsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

# Figures of the simulator's own wall-clock speed: they differ on every run.
WALL_CLOCK = re.compile(r"(│\s+sim\.(?:wall_s|\w+_per_s)\s+│)\s*[\d,.]+\s*│")


def first_block(lang: str, after: str = "") -> str:
    return re.search(rf"```{lang}\n(.*?)```", README.split(after, 1)[1] if after else README, re.S).group(1)


def test_the_sample_output_is_what_the_first_command_prints():
    command = first_block("sh").splitlines()[0].split("&&")[-1].strip()
    assert command == "ftlsim run"
    sample = first_block("text")
    result = CliRunner().invoke(main, shlex.split(command)[1:], env={"COLUMNS": "80"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    printed = WALL_CLOCK.sub(r"\1", result.output)
    expected = WALL_CLOCK.sub(r"\1", sample)
    assert len(WALL_CLOCK.findall(sample)) >= 2  # the masked lines are there, only their values vary
    assert printed == expected


def test_the_readme_scheme_table_names_every_registered_scheme():
    # The registry is the list: a scheme missing from the README's table (or a row naming no scheme) fails here.
    table = README.split("| scheme | what it is | source |", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([a-z][a-z0-9-]*)`", "\n".join(row.split("|")[1] for row in table.splitlines()[2:])))
    assert named == {s["name"] for s in ftlsim.schemes()}


def test_the_readme_links_the_config_reference_and_the_scheme_guide():
    assert "docs/adding-a-scheme.md" in README and (ROOT / "docs" / "adding-a-scheme.md").exists()
    assert "ftlsim config --example run" in README and "ftlsim config --example sweep" in README


def test_the_readme_installs_from_the_checkout_and_builds_a_wheel_for_workers():
    assert "pip install 'ftlsim[dask]'" not in README  # ftlsim is on no package index
    assert "pip install '.[dask]'" in README
    assert "maturin build --release" in README
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^dask\s*=", pyproject, re.M), "the [dask] extra the README installs exists"



def test_the_psu_comparison_says_what_its_figures_show():
    # It said "erases and copies match PSU within 0.1%" beside its own table of 276 against 278 erases (+0.7%)
    # and 139 against 153 GC copies (+10%).
    doc = " ".join((ROOT / "docs" / "matching-other-simulators.md").read_text().split())
    assert "erases and copies match PSU within 0.1%" not in doc and "`page` matched PSU within 0.1%" not in doc
    table = doc.split("| count | PSU page | ftlsim `page` | PSU DFTL | ftlsim `dftl` |", 1)[1].split("**", 1)[0]

    def change(ours: str, psu: str, said: str) -> str:
        """The change from `psu` to `ours` in percent, to as many decimals as `said` gives."""
        places = len(said.split(".")[1]) if "." in said else 0
        ours_n, psu_n = int(ours.replace(",", "")), int(psu.replace(",", ""))
        return f"{100 * (ours_n - psu_n) / psu_n:+.{places}f}"

    rows = re.findall(r"\| [a-zA-Z ()']+ \| ([\d,]+) \| ([\d,]+) \(([-+][\d.]+)%\) \|", table)
    assert len(rows) == 4 and all(change(ours, psu, said) == said for psu, ours, said in rows), rows
    # A share the text says with its figures is what they give.
    said = re.findall(r"([\d.]+)% more \(([\d,]+) against ([\d,]+)\)", doc)
    assert len(said) == 2 and all(change(ours, psu, share) == f"+{share}" for share, ours, psu in said), said
