"""The engine's registries (schemes, presets, workloads, formats, config keys and defaults), read once from the
binding, and the routing of keyword options into the engine's config (`SimConfig`)."""

import copy
import difflib
import functools
import math
from typing import Any

from . import _core
from .errors import keyword, spelled


@functools.lru_cache(maxsize=1)
def registry() -> dict:
    return _core.registry()


def names(kind: str) -> list[str]:
    """The registered names of `kind` (schemes, presets, workloads, formats)."""
    return [item["name"] for item in registry()[kind]]


def nearest(name: str, valid: list[str]) -> str | None:
    """The valid name nearest `name`, if one is near: the one name it begins, without regard to case or
    punctuation (`logblock`, `log-block`: `logblock-zoned`, where spelling alone finds `block`), else the
    closest spelling."""
    folded = _fold(name)
    begun = [v for v in valid if folded and _fold(v).startswith(folded)]
    if len(begun) == 1:
        return begun[0]
    near = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return near[0] if near else None


def did_you_mean(name: str, valid: list[str]) -> str:
    """" (did you mean `x`?)" for the nearest valid name, or ""."""
    return _hint(nearest(name, valid))


def _hint(near: str | None) -> str:
    """" (did you mean `near`?)", or "" without one."""
    return f" (did you mean `{near}`?)" if near else ""


def _fold(name) -> str:
    """A name without case or punctuation: ``O-FAST`` and ``ofast`` are one scheme."""
    return "".join(c for c in str(name).lower() if c.isalnum())


def check_name(kind: str, name: str) -> str:
    """The registered spelling of a scheme / preset / format name, matched without regard to case (the
    papers write FAST and MSR); an unknown name is refused before anything runs, suggesting the nearest one."""
    valid = names(kind) + (["auto"] if kind == "formats" else [])
    if name in valid:
        return name
    folded = {_fold(v): v for v in valid}
    if _fold(name) in folded:
        return folded[_fold(name)]
    label = {"schemes": "scheme", "presets": "preset", "formats": "trace format"}[kind]
    near = nearest(str(name).lower(), valid)
    # The fields the README promises of every value not allowed (the keyword, as `simulate` takes it).
    raise invalid({"schemes": "ftl", "presets": "preset", "formats": "format"}[kind], str(name),
                  f"must be one of {', '.join(valid)}",
                  f"unknown {label} `{name}`{_hint(near)}; valid names: {', '.join(valid)}", near)


def invalid(key: str, value, expected: str, message: str | None = None, suggestion=None) -> Exception:
    """The error of a value not allowed, with the fields every such error carries (``key``, ``value``,
    ``expected``, ``suggestion``), as the engine's. `expected` is a predicate, as the engine's ("must be a whole
    number"): ``key=value expected`` is the sentence. Without `message` the error also carries the engine's
    ``problems``, so each front end spells the key its own way (``log_blocks=8`` here, ``-p log_blocks=8`` on
    the command line); a message of its own (a name not known, a hint only Python needs) is shown as given."""
    error = _core.FtlsimError(message or "")
    error.key, error.value, error.expected, error.suggestion = key, value, expected, suggestion
    if message is None:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        error.problems = [{"key": key, "value": text, "expected": expected, "alternatives": [],
                           "suggestion": None if suggestion is None else str(suggestion)}]
        error.context = ""
        error.args = (spelled(error, keyword, {key: value}),)
    return error


def check_choice(key: str, value, choices: tuple[str, ...]) -> str:
    """The choice `value` names, without regard to case or punctuation (``LRU`` is ``lru``); else an error naming
    `key`, the value, the choices and the nearest, with the fields every value not allowed carries."""
    if value in choices:
        return value
    folded = {_fold(c): c for c in choices}
    if isinstance(value, str) and _fold(value) in folded:
        return folded[_fold(value)]
    near = nearest(str(value), list(choices))
    raise invalid(key, value, f"must be one of {', '.join(choices)}", suggestion=near)


def scheme_defaults(ftl: str) -> dict:
    for s in registry()["schemes"]:
        if s["name"] == ftl:
            return dict(s["defaults"] or {})
    return {}


def takes(ftl: str, key: str) -> bool:
    """Whether keyword `key` means something to scheme `ftl`: a device, trace or run option, or one of the
    scheme's own parameters."""
    keys = registry()["keys"]
    return key in keys["device"] or key in keys["trace"] or key in keys["run"] or key in scheme_defaults(ftl)


def scalar(value):
    """A numpy scalar (as pandas gives a cell: `np.int64(8)`, `np.bool_(True)`) as the Python value it holds;
    any other value as it is."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def plain(value):
    """A value as the engine's configuration takes it: a numpy scalar or array (`np.int64(8)`, `np.bool_(True)`,
    `np.array([0, 1])`, from `np.arange` or a DataFrame's column) as the Python values it holds, a list or tuple
    of them as a list of those, and a whole float (8.0: a pandas column of whole numbers with a gap is float)
    as the whole number; any other value as it is."""
    if type(value).__module__ == "numpy" and callable(getattr(value, "tolist", None)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


#: Options whose one value holds commas: a list (``nvram_regions="0-64KiB,1MiB-2MiB"``, ``devices="0,3"``) or a
#: blkparse ``device="8,16"``. A grid takes such a text as one value, where it splits any other key's at commas.
LIST_VALUED = ("device", "devices", "nvram_regions")

#: What `nvram_policy` takes (the engine's POLICIES, `ftl/nvram.rs`).
NVRAM_POLICIES = ("metadata", "region", "lru", "bplru")


def make_config(ftl: str, preset, capacity, precondition: str, format: str, options: dict) -> dict:
    """Routes keyword options to the engine's config sections: device overrides (page_bytes, erase_us, ...),
    trace options (device, writes_only, ...), run options (the engine's SimConfig keys: wrap,
    idle_threshold_us, nvram, nvram_policy, rmw, measure_from, ...) and, for everything else,
    the scheme's own parameters (checked by the engine, which lists the valid ones)."""
    keys = registry()["keys"]
    cfg: dict[str, Any] = {"ftl": ftl, "params": {}, "device": {}, "trace": {"format": format},
                           "precondition": precondition}
    if preset is not None:
        cfg["preset"] = preset
    if capacity is not None:
        cfg["capacity"] = str(capacity)
    for key, value in options.items():
        value = plain(value)
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            # JSON has no NaN or infinity: refuse it here, by name, rather than send `NaN` to the engine.
            raise invalid(key, value, "is not a finite number")
        if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
            # Past any setting's 64 bits: the engine's reader would name no key.
            own = registry()["bounds"].get(key)
            if own is not None:  # a bound of its own, tighter than 64 bits: that one holds
                raise invalid(key, value, own["expected"], suggestion=own["suggestion"])
            bound = f"at most {2**64 - 1:,}" if value > 0 else f"at least {-(2**63):,}"
            raise invalid(key, value, f"must be {bound}")
        if key == "nvram_policy" and isinstance(value, str):
            value = check_choice(key, value, NVRAM_POLICIES)
        if isinstance(value, (list, tuple)) and key != "devices":
            # Every option but `devices` (the trace's device numbers) takes one value a run: several are a
            # sweep's.
            raise invalid(key, value, "must be one value",
                          f"{key}={value!r}: a run takes one value of {key}; to run each, sweep them: "
                          f"ftlsim.sweep(..., grid={{{key!r}: {list(value)!r}}})")
        if key in keys["device"]:
            cfg["device"][key] = value
        elif key in keys["trace"] and key != "format":
            cfg["trace"][key] = value
        elif key in keys["run"] and key not in ("ftl", "params", "device", "trace", "precondition"):
            cfg[key] = str(value) if key == "nvram" else value
        else:
            cfg["params"][key] = value
    return cfg


def resolve_config(cfg: dict) -> dict:
    """`cfg` completed with every default: the engine's SimConfig defaults (every run, device and trace option)
    and the scheme's default parameters under the given ones, so that nothing of a run is left implicit."""
    out = copy.deepcopy(registry()["defaults"])
    for key, value in cfg.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key].update(value)
        else:
            out[key] = value
    try:
        # The engine's resolution: the defaults under the given parameters, and a profile's (profile=...) applied.
        out["params"] = _core.resolve_params(cfg["ftl"], cfg.get("params", {}))
    except _core.FtlsimError:
        # An unknown scheme or profile: the run itself reports it.
        out["params"] = {**scheme_defaults(cfg["ftl"]), **cfg.get("params", {})}
    return out


def config_kwargs(resolved: dict) -> dict:
    """The inverse of `make_config`: a (resolved) SimConfig as keyword arguments of `simulate`."""
    cfg = copy.deepcopy(resolved)
    kwargs = {"ftl": cfg.pop("ftl"), "preset": cfg.pop("preset", None), "capacity": cfg.pop("capacity", None),
              "precondition": cfg.pop("precondition", "none")}
    trace = cfg.pop("trace", {})
    kwargs["format"] = trace.pop("format", "auto")
    for section in (cfg.pop("device", {}), trace, cfg.pop("params", {}), cfg):
        kwargs.update(section)
    return kwargs


# What a response-time plot of runs without the array model says.
# (Said alike to Python and the command line: a preset is --preset and preset=, the others -p K=V and K=V.)
NO_RESPONSE_TIMES = ("the runs have no response times; turn the multi-chip array model on with a preset that has "
                     "one (mqsim-default), or queue_depth=32 (or channels=, time_scale=)")
