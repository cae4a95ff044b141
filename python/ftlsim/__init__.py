"""ftlsim: a fast, trustworthy, trace-driven simulator of NAND flash and Flash Translation Layers.

    >>> import ftlsim
    >>> r = ftlsim.simulate("uniform:writes=20000,seed=1", ftl="page", capacity="16MiB")
    >>> r.erases > 0
    True
"""

from . import config, plot
from ._core import FtlsimError, RunFailedError
from .ftl import ram, schemes
from .report import Report, report_schema
from .sim import simulate, sweep
from .trace import formats, generate, info, presets, workloads

__version__ = "0.1.0"

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
