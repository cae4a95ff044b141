"""The engine's registries (schemes, presets, workloads, formats, config keys), read once from the binding."""

import functools
import json
import math

from . import _core


@functools.lru_cache(maxsize=1)
def registry() -> dict:
    return json.loads(_core.registry())


def make_config(ftl: str, preset, capacity, precondition: str, format: str, options: dict) -> dict:
    """Routes keyword options to the engine's config sections: device overrides (page_bytes, erase_us, ...),
    trace options (device, writes_only, ...), run options (the engine's SimConfig keys: wrap,
    idle_threshold_us, nvram, nvram_policy, rmw, measure_from, ...) and, for everything else,
    the scheme's own parameters (checked by the engine, which lists the valid ones)."""
    keys = registry()["keys"]
    cfg = {"ftl": ftl, "params": {}, "device": {}, "trace": {"format": format}, "precondition": precondition}
    if preset is not None:
        cfg["preset"] = preset
    if capacity is not None:
        cfg["capacity"] = str(capacity)
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            # JSON has no NaN or infinity: refuse it here, by name, rather than send `NaN` to the engine.
            raise _core.FtlsimError(f"{key}={value} is not a finite number; give a finite number")
        if key in keys["device"]:
            cfg["device"][key] = value
        elif key in keys["trace"] and key != "format":
            cfg["trace"][key] = value
        elif key in keys["run"] and key not in ("ftl", "params", "device", "trace", "precondition"):
            cfg[key] = str(value) if key == "nvram" else value
        else:
            cfg["params"][key] = value
    return cfg
