"""The results store of sweeps: one row per run, keyed by the hash of the run's resolved configuration, in a
Parquet or CSV file (or a directory holding ``results.parquet``).

Several sweeps may share one store. Each save takes an exclusive lock on ``<store>.lock`` beside the file,
reads the file again, merges its own new rows into what other sweeps saved meanwhile and replaces the file
atomically, so no finished row is ever lost. A CSV store cut inside its last row (a copy or a disk that filled
up) is read without that row, and its point is computed again, as is a row whose figures are not numbers (an
edited cell); a file that is not a results store is refused before any point runs."""

from __future__ import annotations

import os
import re

from . import _core

FORMATS = (".parquet", ".csv")
DIRECTORY_FILE = "results.parquet"
KEY = re.compile(r"[0-9a-f]{20}")  # run_key: 20 hex digits of a sha256
STATUSES = ("done", "failed")


def store_file(path) -> str:
    """The file behind a store path: a ``.parquet`` or ``.csv`` file as given, else a directory (an existing
    one, or a new path without an extension) holding ``results.parquet``. Any other extension is refused: a
    ``res.json`` store would otherwise become a directory named ``res.json``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"store must be a path (a str or os.PathLike) of a .parquet or .csv file or a directory; "
                        f"got {type(path).__name__} {path!r}")
    path = os.fspath(path)
    if not path:
        raise _core.FtlsimError("store path is empty; give a .parquet or .csv file or a directory")
    if path.endswith(FORMATS):
        if os.path.isdir(path):
            raise _core.FtlsimError(f"store {path} is a directory; give a file name, or a directory path "
                                    "without the extension")
        return path
    if os.path.isdir(path):
        return os.path.join(path, DIRECTORY_FILE)
    if os.path.exists(path):
        raise _core.FtlsimError(f"store {path} is a file that is not a store (stores end in .parquet or .csv); "
                                "give a .parquet or .csv file, or a directory")
    ext = os.path.splitext(path)[1]
    if ext:
        raise _core.FtlsimError(f"store {path}: `{ext}` is not a store format; give a .parquet or .csv file, or "
                                "a directory (a path without an extension)")
    return os.path.join(path, DIRECTORY_FILE)


def parameter_columns() -> set[str]:
    """Columns of a row that are a run's keywords (not report figures): every option and scheme parameter the
    engine knows, from its registry."""
    from ._registry import registry

    reg = registry()
    keys = {"trace", "ftl", "preset", "capacity", "precondition", "format"}
    keys |= set(reg["keys"]["device"]) | set(reg["keys"]["trace"]) | set(reg["keys"]["run"])
    return keys | {p for s in reg["schemes"] for p in (s["defaults"] or {})}


def integers_kept(df):
    """`df` with each parameter column whose values are all whole numbers holding Python ints (NaN in the
    gaps): a grid column with gaps (``page`` has no ``log_blocks``) would otherwise be float and read 4.0, 8.0
    in the CSV, the table and the plot's legend."""
    import numpy as np
    import pandas as pd

    def whole(v) -> bool:
        if isinstance(v, str):  # Parquet stores of earlier versions kept such columns as text ("4.0")
            try:
                v = float(v)
            except ValueError:
                return False
        return (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                and float(v).is_integer())

    params = parameter_columns()
    for column in df.columns:
        values = df[column].dropna()
        if column in params and len(values) and df[column].dtype != bool and all(whole(v) for v in values):
            df[column] = pd.Series([np.nan if v is None or v != v else int(float(v)) for v in df[column]],
                                   index=df.index, dtype=object)
    return df


#: The figures every report has: a done row without one is damaged.
REQUIRED_FIGURES = ("flash.page_writes", "flash.erases", "time_us.total")
#: The units of the report's numbers (the others: text, flags, histograms as JSON text).
NUMBER_UNITS = ("count", "pages", "bytes", "us", "ratio", "persecond", "seconds")


def _figures_read(df):
    """(`df` with its figure columns as numbers, the keys of its damaged rows): done rows with a figure that
    does not read as a number (``banana``, an edited cell) or without one of `REQUIRED_FIGURES`. A CSV reads a
    column holding such a cell as text, whose other counts would lose their thousands commas."""
    import pandas as pd

    from .report import key_unit

    df = df.copy()
    done = df["status"] == "done"
    damaged = pd.Series(False, index=df.index)
    for column in df.columns:
        if key_unit(column) not in NUMBER_UNITS:
            continue
        numbers = pd.to_numeric(df[column], errors="coerce")
        damaged |= done & (numbers.isna() if column in REQUIRED_FIGURES else df[column].notna() & numbers.isna())
        df[column] = numbers
    if any(column not in df.columns for column in REQUIRED_FIGURES):
        damaged |= done
    return df, set(df.loc[damaged, "key"])


class Store:
    """A results store shared safely between sweeps (see the module's doc). `rows` maps each key to its row
    as of the last read or save; `torn` counts the rows dropped at reading because they were cut off, `damaged`
    holds the keys of done rows dropped because their figures are not numbers (see `_figures_read`)."""

    def __init__(self, path):
        from filelock import FileLock

        self.path = store_file(path)
        folder = os.path.dirname(os.path.abspath(self.path))
        self._lock = FileLock(self.path + ".lock")
        self.pending: dict[str, dict] = {}
        try:
            if os.path.basename(self.path) == DIRECTORY_FILE and not os.fspath(path).endswith(FORMATS):
                os.makedirs(folder, exist_ok=True)  # a directory store is made on first use
            elif not os.path.isdir(folder):
                from .output import no_folder

                raise _core.FtlsimError(f"store {self.path}: {no_folder(folder)}")
            with self._lock:
                self.rows, self.torn, self.damaged = self._read()
        except OSError as e:
            raise _core.FtlsimError(f"store {self.path}: {e.strerror or e}; give a store path you can write") from None

    def done(self, key: str) -> bool:
        return self.rows.get(key, {}).get("status") == "done"

    def add(self, key: str, row: dict) -> None:
        """Records a finished row; `save` writes it."""
        self.rows[key] = self.pending[key] = {**row, "key": key}

    def save(self) -> None:
        """Merges the rows added since the last save into the file as it is now (other sweeps may have saved
        theirs), under the lock. A stored ``done`` row is never replaced by a ``failed`` one."""
        if not self.pending:
            return
        try:
            with self._lock:
                rows, _, _ = self._read()
                for key, row in self.pending.items():
                    if row["status"] == "done" or rows.get(key, {}).get("status") != "done":
                        rows[key] = row
                self._write(rows)
        except OSError as e:
            raise _core.FtlsimError(f"cannot write store {self.path}: {e.strerror or e}") from None
        self.rows = rows
        self.pending = {}

    def remove(self, keys) -> int:
        """Deletes the rows of `keys` from the file, under the lock; returns how many were there."""
        keys = set(keys)
        try:
            with self._lock:
                rows, _, _ = self._read()
                gone = [k for k in rows if k in keys]
                for key in gone:
                    del rows[key]
                if gone:
                    self._write(rows)
        except OSError as e:
            raise _core.FtlsimError(f"cannot write store {self.path}: {e.strerror or e}") from None
        self.rows = rows
        return len(gone)

    def frame(self):
        """Every row, as a DataFrame (parameter columns that hold whole numbers as integers)."""
        import pandas as pd

        return integers_kept(pd.DataFrame(list(self.rows.values())))

    def _read(self) -> tuple[dict[str, dict], int, set[str]]:
        """(key -> row, rows dropped as torn, keys of rows dropped as damaged) of the file as it is now; a file
        that is not a store is refused."""
        import pandas as pd

        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return {}, 0, set()
        torn = 0
        try:
            if self.path.endswith(".parquet"):
                df = pd.read_parquet(self.path)
            else:
                import io

                with open(self.path, encoding="utf-8", newline="") as f:
                    text = f.read()
                if not text.endswith("\n"):  # every row ends with a newline: the last one was cut off
                    text, torn = text[: text.rfind("\n") + 1], 1
                df = pd.read_csv(io.StringIO(text)) if text.strip() else pd.DataFrame(columns=["key", "status"])
        except Exception as e:  # pyarrow, pandas and the codecs each raise their own kinds
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise _core.FtlsimError(
                f"store {self.path} cannot be read as a results store ({reason[:200]}); move it away or give "
                "another store path") from None
        if "key" not in df.columns or "status" not in df.columns:
            raise _core.FtlsimError(
                f"store {self.path} is not an ftlsim results store (no `key` and `status` columns); move it away "
                "or give another store path")
        whole = df["key"].map(lambda k: isinstance(k, str) and KEY.fullmatch(k) is not None)
        whole &= df["status"].isin(STATUSES)
        broken = [i for i, ok in enumerate(whole) if not ok]
        if broken and (self.path.endswith(".parquet") or broken != [len(df) - 1]):
            row = df.iloc[broken[0]]
            raise _core.FtlsimError(
                f"store {self.path}: row {broken[0] + 1} is not a results row (key {str(row['key'])[:24]!r}, "
                f"status {str(row['status'])[:24]!r}); move the file away or give another store path")
        torn += len(broken)  # only a CSV's last row can be cut off
        df, damaged = _figures_read(df[whole])
        df = df[~df["key"].isin(damaged)]
        df = df.astype(object).where(df.notna(), None)
        return {row["key"]: row for row in df.to_dict("records")}, torn, damaged

    def _write(self, rows: dict[str, dict]) -> None:
        import pandas as pd

        from .output import atomic_path, write_csv

        df = integers_kept(pd.DataFrame(list(rows.values())))
        if self.path.endswith(".csv"):  # the key last: a row cut anywhere loses part of its key, and reads as torn
            write_csv(df[[c for c in df.columns if c != "key"] + ["key"]], self.path)
            return
        for c in df.columns[df.dtypes == object]:  # noqa: E721 (a pandas dtype comparison)
            values = df[c].dropna()
            if len(values) and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                df[c] = df[c].astype("Int64")  # whole numbers with gaps, kept whole
            elif len(values) and all(isinstance(v, bool) for v in values):
                df[c] = df[c].astype("boolean")  # flags with gaps (a failed point's), kept flags: not "True"
            else:  # mixed values (a grid column of numbers and names)
                df[c] = df[c].map(lambda v: v if v is None or isinstance(v, str) or v != v else str(v))
        with atomic_path(self.path) as tmp:
            df.to_parquet(tmp, index=False)
