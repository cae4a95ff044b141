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


@functools.lru_cache(maxsize=1)
def report_schema() -> list[dict]:
    """Every key a report can have, from the engine: dicts of key, unit, section, description and table (shown
    by `ftlsim run`). A ``<...>`` part of a key stands for a name chosen at run time (RAM structures, a
    scheme's own figures)."""
    return json.loads(_core.report_schema())


class Report(Mapping):
    def __init__(self, values: dict):
        self._values = dict(values)

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls(json.loads(text))

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        return (
            f"<Report {self.get('config.scheme')} on {self.get('config.trace')}: "
            f"{self.erases} erases, WA {self.write_amplification:.3f}, {self.time_us / 1e6:.3f} s flash time>"
        )

    def to_dict(self) -> dict:
        """The flat dict of every figure and the resolved configuration."""
        return dict(self._values)

    def flat(self) -> dict:
        """Like to_dict, with list values (histograms) as JSON text, for CSV and DataFrames."""
        return {k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in self._values.items()}

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self._values, indent=2, sort_keys=True)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    def to_csv(self, path: str | Path) -> None:
        """One header line and one row."""
        row = self.flat()
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row))
            writer.writeheader()
            writer.writerow(row)

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
    def write_amplification(self) -> float:
        return self._values["write_amplification"] or 0.0

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
