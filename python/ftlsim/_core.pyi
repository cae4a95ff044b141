"""Type stub of the PyO3 binding `ftlsim._core` (crates/ftlsim-py/src/lib.rs). Every function takes and returns
JSON text; `ftlsim`'s Python modules convert it. Errors from the engine raise `FtlsimError`."""

from typing import Callable, Optional

class FtlsimError(ValueError):
    """A simulation could not run: bad input, or a scheme broke a rule."""

def simulate(
    trace: str,
    config_json: str,
    progress: Optional[Callable[[int, int, int], Optional[bool]]] = None,
) -> str:
    """Runs `trace` (a path or a workload spec) under a SimConfig (JSON); returns the report's flat keys as JSON.
    `progress(requests, done, total)` is called about every 50 ms; returning False cancels the run. Ctrl-C
    raises KeyboardInterrupt; an exception raised by `progress` propagates."""

def report_schema() -> str:
    """JSON list of {key, unit, section, description, table}: every key a report can have."""

def ram(config_json: str) -> str:
    """JSON list of {name, bytes, layout}: the RAM a scheme's tables need."""

def trace_info(trace: str, options_json: str, block_bytes: int, page_bytes: int) -> str:
    """JSON object of a trace's statistics."""

def generate(trace: str, output: str, config_json: str) -> int:
    """Writes a trace or workload to `output`; returns the requests written."""

def write_refs(trace: str, options_json: str, block_bytes: int, page_bytes: int, max_points: int) -> str:
    """JSON object: writes per logical block and a sampled timeline of blocks written."""

def registry() -> str:
    """JSON object: schemes, presets, workloads, formats, config keys per section, report kinds, version."""
