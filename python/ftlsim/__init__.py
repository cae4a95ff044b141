"""ftlsim: a fast, trustworthy, trace-driven simulator of NAND flash and Flash Translation Layers.

    >>> import ftlsim
    >>> r = ftlsim.simulate("uniform:writes=20000,seed=1", ftl="page", capacity="16MiB")
    >>> r.erases > 0
    True
"""

import importlib

__version__ = "0.1.0"

# Names load on first use (PEP 562), so that `import ftlsim` and the `ftlsim` command start fast and the
# command can catch Ctrl-C from its first line; `ftlsim.reproduce` pulls in pandas and matplotlib.
_LAZY = {
    "FtlsimError": "._core", "RunFailedError": "._core", "ram": ".ftl", "schemes": ".ftl",
    "Report": ".report", "report_schema": ".report", "simulate": ".sim", "sweep": ".sim",
    "formats": ".trace", "generate": ".trace", "info": ".trace", "presets": ".trace", "workloads": ".trace",
}
_SUBMODULES = {"config", "plot", "reproduce", "sim", "report", "trace", "ftl", "output", "cli"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ftlsim' has no attribute {name!r}")


def __dir__():
    """The API, for completion in a notebook: the lazily loaded names are listed before their first use."""
    return sorted(set(__all__) | set(_LAZY) | _SUBMODULES | {"__version__"})


__all__ = [
    "FtlsimError",
    "Report",
    "RunFailedError",
    "config",
    "formats",
    "generate",
    "info",
    "presets",
    "plot",
    "ram",
    "report_schema",
    "schemes",
    "simulate",
    "sweep",
    "workloads",
]
