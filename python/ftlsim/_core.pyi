"""Type stub of the PyO3 binding `ftlsim._core` (crates/ftlsim-py/src/lib.rs). Configurations go in as dicts
(the engine's `SimConfig` and `TraceOptions` keys) and results come back as dicts and lists; `ftlsim`'s Python
modules build the dicts. Errors from the engine raise `FtlsimError`. `tests/test_core_stub.py` checks that this
file names every function of the module with its parameters."""

from typing import Any, Callable, Optional, Sequence

class FtlsimError(ValueError):
    """A simulation could not run: bad input, or a scheme broke a rule. `key` names the option at fault
    (`page_bytes`, also for a value of the wrong kind; a config key that does not deserialise otherwise by its
    path, `device.page_bytes`), `value` is what
    was given, `expected` what it takes and `suggestion` a value that works, where the engine knows them;
    None otherwise."""

    key: Optional[str]
    value: Any
    expected: Optional[str]
    suggestion: Optional[str]
    # Every parameter whose value is not allowed, each a dict of key, value, expected, suggestion (values as
    # text) and alternatives (a list of {key, value, does}: other settings that fix it, e.g. wrap=true), and
    # the message before them ("invalid parameter: device: "); empty and None for other errors.
    problems: Sequence[dict[str, Any]]
    context: Optional[str]
    # The settings a message names as key=value (a trace error's skip_bad_lines=true, format=NAME), each a dict
    # of key and value, for a front end to spell its own way; empty for other errors.
    settings: Sequence[dict[str, str]]

class RunFailedError(FtlsimError):
    """A run started and failed: a scheme broke a NAND rule, the integrity or durability check, or ran out of
    free blocks."""

def simulate(
    trace: str,
    config: dict[str, Any],
    progress: Optional[Callable[[int, int, int], Optional[bool]]] = None,
) -> dict[str, Any]:
    """Runs `trace` (a path or a workload spec) under a run configuration; returns the report's flat keys.
    `progress(requests, done, total)` is called about every 50 ms; returning False cancels the run. Ctrl-C
    raises KeyboardInterrupt; an exception raised by `progress` propagates."""

def resolve_params(ftl: str, params: dict[str, Any]) -> dict[str, Any]:
    """A scheme's parameters as they run: its defaults under the given ones, its profile applied."""

def report_schema() -> list[dict[str, Any]]:
    """Every key a report can have: a list of {key, unit, section, description, table}."""

def generate(trace: str, output: str, config: dict[str, Any]) -> tuple[int, int]:
    """Writes a trace or workload to `output` in the format its extension names; returns the requests written
    and those whose tag (data, metadata) the format has no column for."""

def ram(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The RAM a scheme's tables need: a list of {name, bytes, layout}."""

def array_model_on(config: dict[str, Any]) -> bool:
    """Whether a run of `config` has the multi-chip array model on (response times)."""

def trace_info(
    trace: str,
    options: dict[str, Any],
    block_bytes: int,
    page_bytes: int,
    progress: Optional[Callable[[int, int], Optional[bool]]] = None,
) -> dict[str, Any]:
    """A trace's statistics (format, devices, requests, mix, footprint, write concentration, distributions).
    The byte and page totals are exact ints, also past 2**64."""

def write_refs(
    trace: str, options: dict[str, Any], block_bytes: int, page_bytes: int, max_points: int
) -> dict[str, Any]:
    """Writes per logical block and a sampled timeline of the blocks written."""

def parse_size(text: str) -> int: ...
def sniff_format(trace: str, options: Optional[dict[str, Any]] = None) -> str:
    """The format a trace file is read as under `options` ("workload" for a built-in workload spec)."""

def registry() -> dict[str, Any]:
    """The engine's catalog: schemes, presets, workloads, formats, config keys per section, the run's defaults,
    report kinds, version."""

def config_schema() -> dict[str, Any]:
    """The JSON Schema of a run configuration: each key with its type, default and description."""
