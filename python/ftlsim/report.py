"""The Report of one run: a flat mapping of dotted keys (``flash.erases``, ``latency_us.write.p99``, ...) to
numbers and strings, with attributes for the common figures."""

from __future__ import annotations

import csv
import functools
import json
from collections.abc import Mapping
from pathlib import Path

from . import _core
from ._registry import registry
from .errors import Spelling, keyword

#: The array's dimensions in report keys, with the word for one of each.
ARRAY_DIMENSIONS = (("array.channels", "channel"), ("array.chips_per_channel", "chip"),
                    ("array.dies_per_chip", "die"), ("array.planes_per_die", "plane"))

#: The array's settings (a grid's "every row" line and a plot's array line say them where given; a preset's own
#: shape is the preset's).
ARRAY_SETTINGS = ("channels", "chips_per_channel", "dies_per_chip", "planes_per_die", "placement", "queue_depth",
                  "time_scale")


def array_dies(report) -> int:
    """The dies a run's array has (channels x chips x dies); 1 on a single chip, which has no array keys."""
    dies = 1
    for key, _ in ARRAY_DIMENSIONS[:-1]:
        dies *= int(report.get(key) or 1)
    return dies


def report_schema():
    """Every key a report can have, from the engine, as a pandas DataFrame with one row per key and the
    columns key, unit, section, description and table (shown by `ftlsim run`). A ``<...>`` part of a key stands
    for a name chosen at run time (RAM structures, a scheme's own figures)."""
    import pandas as pd

    return pd.DataFrame(schema_rows())


@functools.lru_cache(maxsize=1)
def schema_rows() -> list[dict]:
    """`report_schema` as a list of dicts, in the engine's order (sections, then figures)."""
    return _core.report_schema()


def as_run_key(scheme: str, param: str) -> str:
    """The report key that holds parameter `param` of `scheme` as it ran, where the scheme fits it to the device
    (its schema description says "as run": ``tiny.log_blocks``); else ``""``."""
    key = f"{scheme}.{param}"
    row = next((row for row in schema_rows() if row["key"] == key), None)
    return key if row is not None and "as run" in row["description"] else ""


def key_section(key: str) -> str:
    """The report section of `key` (a ``<name>`` part of a schema key matches any name)."""
    return schema_rows()[key_rank(key)]["section"] if key_rank(key) < len(schema_rows()) else "Other"


def key_unit(key: str) -> str | None:
    """The unit of `key` in the report schema (``count``, ``bytes``, ``us``, ...); None for a key it does not
    know (a sweep's parameter columns)."""
    rank = key_rank(key)
    return schema_rows()[rank]["unit"] if rank < len(schema_rows()) else None


@functools.lru_cache(maxsize=4096)
def key_rank(key: str) -> int:
    """The place of `key` in the report schema's order (sections, then figures as the engine lists them);
    a key the schema does not know comes last."""
    exact = {k["key"]: i for i, k in enumerate(schema_rows())}
    if key in exact:
        return exact[key]
    return next((i for i, pattern in _patterns() if pattern.fullmatch(key)), len(schema_rows()))


@functools.lru_cache(maxsize=1)
def _patterns() -> list:
    import re

    return [(i, re.compile(re.sub(r"<[^>]*>", ".+", re.escape(k["key"]))))
            for i, k in enumerate(schema_rows()) if "<" in k["key"]]


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _whole(count) -> int:
    """A count as a whole number: a sweep's row holds its counts as floats where another row failed (NaN there),
    and a missing or NaN count is 0."""
    return int(count) if count and count == count else 0


def uninformative(values, spell: Spelling = keyword) -> dict[str, str]:
    """Why a run's figures do not show its scheme at work, by cause, with the options that fix it: the host
    wrote less than half the device's logical pages (distinct pages are at most that), so its blocks hold few
    valid pages (a hybrid scheme still merges, as its log blocks are few, but copies little); or no block was
    erased, so no merge or GC ran. `values` is a report or a sweep's row. Only the fixes the run did not use are
    offered, each spelled by `spell` (the command line's ``--precondition full``, Python's
    ``precondition='full'``): a full precondition where it was not filled first, compact addresses for a trace
    file read without them (they pack sparse addresses). Besides: a stated spare (``extra_blocks``,
    ``over_provisioning``) larger than the scheme uses, whose rest changes nothing; and ``placement`` per-die on
    one die, which runs as striped (a grid's rows of the two read alike)."""
    resolved = json.loads(values.get("config.resolved") or "{}").get("config", {})
    precondition = resolved.get("precondition", values.get("config.precondition", "none"))
    fixes = [f"`{spell('precondition', 'full')}`"] if precondition == "none" else []
    fixes.append("a smaller capacity")
    if values.get("config.trace_format") not in (None, "workload") and not resolved.get("trace", {}).get("compact"):
        fixes.append(f"`{spell('compact', 'true')}`")
    fix = " or ".join([", ".join(fixes[:-1]), fixes[-1]] if len(fixes) > 1 else fixes)
    pages = _whole(values.get("config.capacity_bytes")) // max(_whole(values.get("config.page_bytes")), 1)
    written = _whole(values.get("host.write_pages"))
    out = {}
    requests = _whole(values.get("host.requests"))
    if requests and _whole(values.get("host.empty_requests")) == requests:
        # Said as what it is; "the host wrote 0 pages ... use a smaller capacity" fixed nothing.
        out["empty"] = (f"every one of the trace's {requests:,} requests is 0 bytes long (host.empty_requests): "
                        f"the run read and wrote nothing")
    elif precondition == "none" and pages and written < pages / 2:
        # A share under 0.1% in two significant figures: 10,816 pages of 106,679,872 read "0.0%".
        share = f"{written / pages:.1%}" if written >= pages / 1000 else f"{100 * written / pages:.2g}%"
        out["unwritten"] = (f"the host wrote {written:,} pages, {share} of the device's {pages:,} "
                            f"logical pages: most of the device is never written, so merges and garbage collection "
                            f"find few valid pages to copy and the figures are those of a mostly empty device; use "
                            f"{fix}")
    elif values.get("flash.erases") == 0 and written:
        # Not "the figures do not depend on the scheme": its RAM, mount and translation reads still do.
        out["no_erase"] = (f"no block was erased: no merge or garbage collection ran, so the figures leave out "
                           f"the cleaning cost that sets schemes apart; use {fix}")
    if (resolved.get("device") or {}).get("placement") == "per-die" and array_dies(values) == 1:  # rows alike
        out["per_die_on_one_die"] = (f"{spell('placement', 'per-die')} on one die runs one scheme instance, as "
                                     f"striped does: give the device dies ({spell('channels', '2')}, or a preset of "
                                     f"an array)")
    given = next((spell(key, str(resolved[key])) for key in ("extra_blocks", "over_provisioning")
                  if resolved.get(key) is not None), None)
    chip, used = _whole(values.get("device.extra_blocks")), _whole(values.get("device.scheme_extra_blocks"))
    if given and chip > used:
        # Keyed by the figures, so that a sweep's warning names only the runs it is true of.
        out[f"unused_spare {chip} {used}"] = (
            f"{given} puts {chip:,} extra blocks on the chip and the scheme uses {used:,} of them (its log, "
            f"reserve or map blocks): the other {chip - used:,} change none of its figures; its own parameters "
            f"(ftlsim list) size what it uses")
    return out


class Report(Mapping):
    def __init__(self, values: dict):
        self._values = dict(values)

    @classmethod
    def from_json(cls, text) -> "Report":
        """A report from its JSON: the text (`to_json()` without a path), or the path of a file `to_json(path)`
        or ``--json`` wrote."""
        if isinstance(text, Path) or (isinstance(text, str) and not text.lstrip().startswith("{")):
            try:
                text = Path(text).read_text()
            except OSError as e:
                raise _core.FtlsimError(f"Report.from_json takes a report's JSON text or the path of a JSON "
                                        f"report; {str(text)[:80]!r} is neither ({e.strerror})") from None
        try:
            values = json.loads(text)
        except ValueError as e:
            raise _core.FtlsimError(f"Report.from_json: not a report's JSON ({e})") from None
        if not isinstance(values, dict):
            raise _core.FtlsimError(f"Report.from_json: a report is a JSON object of keys, not a "
                                    f"{type(values).__name__}")
        return cls(values)

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        wa, us = self.get("write_amplification"), self.get("time_us.total")
        return (
            f"<Report {self.get('config.scheme')} on {self.get('config.trace')}: "
            f"{self.get('flash.erases')} erases, WA {'-' if wa is None else f'{wa:.3f}'}, "
            f"{'-' if us is None else f'{us / 1e6:.3f}'} s flash time>"
        )

    def to_dict(self) -> dict:
        """The flat dict of every figure and the resolved configuration."""
        return dict(self._values)

    def flat(self) -> dict:
        """Like to_dict, with list values (histograms) as JSON text, for CSV and DataFrames."""
        return {k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in self._values.items()}

    def to_series(self):
        """The report as a pandas Series indexed by key (lists as JSON text, as in `flat`)."""
        import pandas as pd

        return pd.Series(self.flat(), name=self.get("config.scheme"))

    def _repr_html_(self) -> str:
        """A notebook's display: the headline figures of each section, then the configuration."""
        import html

        shown = [(k["section"], k["key"]) for k in schema_rows() if k["table"] and k["key"] in self]
        rows = "".join(f"<tr><td>{html.escape(sec)}</td><td><code>{html.escape(key)}</code></td>"
                       f"<td style='text-align:right'>{html.escape(_fmt(self[key]))}</td></tr>"
                       for sec, key in shown if self[key] not in (0, None))
        return (f"<p>{html.escape(repr(self))}</p><table><tr><th>section</th><th>figure</th><th>value</th>"
                f"</tr>{rows}</table>")

    def to_json(self, path: str | Path | None = None) -> str:
        """The report as JSON text; with `path`, also written there (atomically). `ftlsim run -c` of the file
        repeats the run."""
        text = json.dumps(self._values, indent=2, sort_keys=True)
        if path is not None:
            from .output import write_text

            write_text(path, text + "\n")
        return text

    def to_csv(self, path: str | Path) -> None:
        """One header line and one row."""
        import io

        from .output import write_text

        row = self.flat()
        buf = io.StringIO(newline="")
        writer = csv.DictWriter(buf, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
        write_text(path, buf.getvalue())

    @property
    def scheme(self) -> str:
        return self._values["config.scheme"]

    @property
    def erases(self) -> int:
        return self._values["flash.erases"]

    @property
    def page_reads(self) -> int:
        return self._values["flash.page_reads"]

    @property
    def spare_reads(self) -> int:
        return self._values["flash.spare_reads"]

    @property
    def page_writes(self) -> int:
        return self._values["flash.page_writes"]

    @property
    def write_amplification(self) -> float | None:
        """Flash page writes over host page writes; None where the host wrote no page (0.0 would read as a
        scheme that writes nothing)."""
        return self._values["write_amplification"]

    @property
    def time_us(self) -> float:
        """Modeled flash time of the whole run, in microseconds."""
        return self._values["time_us.total"]

    @property
    def ram_bytes(self) -> int:
        return self._values["ram.total_bytes"]

    @property
    def merges(self) -> dict:
        return {k: self._values[f"merges.{k}"] for k in registry()["kinds"]["merge"]}
