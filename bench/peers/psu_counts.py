#!/usr/bin/env python3
"""ftlsim's `page` and `dftl` with `profile=psu-flashsim` beside PSU FlashSim itself, on any trace: counts.

    python bench/peers/psu_counts.py TRACE --psu PSU/src/disksim --capacity 64MiB --wrap

Both run on PSU's device: 2 KiB pages, 64 a block (compiled into PSU FlashSim). ftlsim runs the trace with
`--precondition trace -p rmw=false`: PSU writes every request once before it counts (`warmFlash`) and does no
read-modify-write of a partly written page. PSU reads the same requests in DiskSim's format, written here
from `ftlsim convert`'s SSDsim copy of the trace: times in milliseconds, every device number 0, and, with
`--wrap`, each address folded into the capacity as ftlsim's `--wrap` folds it. PSU's chip has as many blocks as
ftlsim's, with more of them logical: it cannot address its last logical page, and its DFTL keeps its
translation pages in the first logical pages, so its spare blocks are fewer by as many. How to build PSU
FlashSim: docs/speed-against-peers.md. The counts on Financial1: docs/matching-other-simulators.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from run import PAGE_BYTES, PAGES_PER_BLOCK, disksim_trace, run_psu

# PSU's DFTL: map entries per translation page (`MAP_ENTRIES_PER_PAGE`, 4-byte entries in 2 KiB pages).
PSU_ENTRIES_PER_PAGE = 512


def psu_more_logical_blocks(scheme: str, logical_blocks: int) -> int:
    """The blocks PSU's logical space needs beyond ftlsim's: one, so that its last logical page is never one a
    request ends on (it stops the run there), and for DFTL as many more as hold its translation pages, which
    sit before the data and count themselves (one entry for each logical page, its own among them)."""
    more = 1
    while scheme == "dftl":
        pages = (logical_blocks + more) * PAGES_PER_BLOCK
        translation_pages = -(-pages // PSU_ENTRIES_PER_PAGE)
        if more * PAGES_PER_BLOCK > translation_pages:
            break
        more += 1
    return more


def ftlsim_report(ftlsim: str, trace: Path, scheme: str, capacity: str, wrap: bool, work: Path) -> dict:
    report = work / f"ftlsim-{scheme}.json"
    args = [
        ftlsim, "run", str(trace), "--format", "ssdsim", "--ftl", scheme, "-p", "profile=psu-flashsim",
        "-p", f"page_bytes={PAGE_BYTES}", "-p", f"pages_per_block={PAGES_PER_BLOCK}", "--capacity", capacity,
        "--precondition", "trace", "-p", "rmw=false", "--json", str(report),
    ]  # fmt: skip
    if wrap:
        args.append("--wrap")
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return json.loads(report.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path, help="any trace ftlsim reads")
    ap.add_argument("--psu", type=Path, required=True, help="PSU FlashSim's disksim, DiskSim's statdefs beside it")
    ap.add_argument("--capacity", required=True, help="ftlsim's logical capacity, e.g. 64MiB")
    ap.add_argument("--wrap", action="store_true", help="fold addresses past the capacity into it")
    ap.add_argument("--ftlsim", default="ftlsim", help="the ftlsim command (default: ftlsim on PATH)")
    ap.add_argument("--keep", type=Path, help="write the traces, configurations and reports here")
    opts = ap.parse_args()
    if shutil.which(opts.ftlsim) is None:
        ap.error(f"no command {opts.ftlsim!r} on PATH")
    work = opts.keep or Path(tempfile.mkdtemp(prefix="ftlsim-psu-"))
    work.mkdir(parents=True, exist_ok=True)

    ssdsim = work / "trace.ascii"
    convert = subprocess.run(
        [opts.ftlsim, "convert", str(opts.trace), "-o", str(ssdsim)], capture_output=True, text=True
    )
    if convert.returncode != 0:
        sys.exit(f"ftlsim convert {opts.trace} failed:\n{convert.stderr[-2000:]}")
    print(f"{opts.trace}: {work}")
    columns = ("page reads", "page programs", "erases", "GC copies")
    print(f"{'run':<14}" + "".join(f"{c:>15}" for c in columns))
    disksim = work / "trace.disksim"
    for scheme in ("page", "dftl"):
        r = ftlsim_report(opts.ftlsim, ssdsim, scheme, opts.capacity, opts.wrap, work)
        logical, spare = r["config.logical_blocks"], r["device.extra_blocks"]
        capacity = logical * PAGES_PER_BLOCK * PAGE_BYTES
        disksim_trace(ssdsim, disksim, capacity, opts.wrap)
        more = psu_more_logical_blocks(scheme, logical)
        if spare - more < 1:
            sys.exit(f"{scheme}: ftlsim's {spare} spare blocks leave PSU none beside its {more} more logical ones")
        psu = run_psu(opts.psu.resolve(), scheme, disksim, work, logical + more, spare - more).counts
        copies = r["gc.copied_pages"]
        ours = (r["flash.page_reads"], r["flash.page_writes"], r["flash.erases"], copies)
        theirs = (psu["page_reads"], psu["page_writes"], psu["erases"], psu["copies"])
        print(f"{'PSU ' + scheme:<14}" + "".join(f"{v:>15,}" for v in theirs))
        print(f"{'ftlsim ' + scheme:<14}" + "".join(f"{v:>15,}" for v in ours))
        if scheme == "dftl":
            # PSU counts the translation-page writes for GC's moves among its GC writes.
            updates = r["dftl.translation_writes.gc_update"]
            print(f"{'':<14}ftlsim's GC copies with GC's {updates:,} translation updates: {copies + updates:,}")
        print(f"{'':<14}chip: ftlsim {logical} + {spare} blocks, PSU {logical + more} + {spare - more}")


if __name__ == "__main__":
    main()
