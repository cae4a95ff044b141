#!/usr/bin/env python3
"""Whole-process speed of ftlsim against peer simulators built from source, on one synthetic trace.

    python bench/peers/run.py --flashsim /tmp/flashsim-driver --mqsim /tmp/peer-mqsim/MQSim \
        --psu /tmp/psu/src/disksim [--repeat 3]

It fetches and builds nothing: give the peers' binaries (how to build them: docs/speed-against-peers.md).
It writes one trace (SSDsim ASCII, which ftlsim, MQSim and the flashsim driver read, and the same requests in
DiskSim's ASCII format, times in milliseconds, for PSU FlashSim), the peers' configuration files, runs every
side `--repeat` times under `/usr/bin/time -v`, keeps each side's
fastest run (least user + system CPU seconds) and prints, per side: wall, user and system seconds, max RSS,
the flash operations it reports (page reads, page programs, erases; GC or merge copies), flash operations
per CPU second, and ftlsim's ratio against the peer it is compared with. `--json FILE` saves every run.

The pairs, each configured alike on one chip of 64 x 2 KiB pages a block, 1,000 blocks of them logical:
  bast: ftlsim `bast` (16 log blocks, 40 spare blocks) against flashsim's BAST (BAST_LOG_BLOCK_LIMIT 16 on
        1,040 blocks);
  page: ftlsim `page` (GC frontier of its own, greedy, 76 spare blocks) against MQSim's page-level FTL on
        1,076 blocks (7% over-provisioning, ideal mapping table, no data cache, greedy GC, no wear
        levelling), once with ftlsim's serial model and once with its event model on the one die
        (`queue_depth`), the nearer to MQSim's event engine;
  page, dftl and fast against PSU FlashSim (DiskSim 3.0 with the DFTL authors' FTLs): ftlsim's `page` and
        `dftl` with `profile=psu-flashsim`, `fast` with 40 log blocks, each with `--precondition trace` (PSU
        writes the whole trace once before it counts); PSU's chip has 1,003 logical blocks (it cannot address
        its last page, and its DFTL keeps its translation pages in the first logical pages) and 40 spare
        ones, 1,043 in all, as ftlsim's 1,000 logical and 43 spare. PSU's FAST loses pages in full merges
        (docs/matching-other-simulators.md): its counts are not the same work as ftlsim's.
Not part of the test suite: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

# The trace, shared by every side: 1,000 logical blocks of 64 x 2 KiB pages.
LOGICAL_BLOCKS = 1_000
PAGES_PER_BLOCK = 64
PAGE_BYTES = 2048
SECTOR_BYTES = 512
PAGE_SECTORS = PAGE_BYTES // SECTOR_BYTES
# Requests arrive 20 ms apart: MQSim replays arrival times; at this pace no request waits for another.
ARRIVAL_GAP_NS = 20_000_000
# Timings of flashsim's shipped ssd.conf (us); every side gets them, though counts do not depend on them.
READ_US, PROGRAM_US, ERASE_US = 25, 300, 2000

# bast against flashsim: flashsim's chip of the issue (40 blocks beyond the logical ones), 16 log blocks.
BAST_SPARE_BLOCKS = 40
BAST_LOG_BLOCKS = 16

# page against MQSim: MQSim's own over-provisioning, 7% (1,076 blocks). With 40 spare blocks MQSim stalls:
# writes wait for a plane that GC never frees and the run ends with most of the random requests never
# replayed (two thirds on the first 80,000 requests; its report then counts fewer host programs than the
# trace writes).
PAGE_SPARE_BLOCKS = 76
MQSIM_OVER_PROVISIONING = 0.07  # 1,076 x 64 x 4 x 0.93 = 256,172 logical sectors: the trace's 256,000 fit
MQSIM_GC_THRESHOLD = 0.05  # MQSim's default: GC while a plane has fewer than 53 free blocks
# The reserve with which ftlsim's page does MQSim's work on this trace: 22 gives erases and copies within
# 0.2% of MQSim's (21: -1.6%, 23: +1.2%). MQSim's nominal trigger (fewer than 53 free) read as ftlsim's
# reserve would be 52, which erases twice as much (87,716 against 44,996); where MQSim's pool count differs
# from ftlsim's free blocks is not traced to its code.
PAGE_GC_RESERVE_BLOCKS = 22

# PSU FlashSim: its FTL types (ssd_interface.c), and its chip: 3 logical blocks more than the trace's (a request
# ending at the last logical sector exits the run; DFTL's 126 translation pages sit before the data pages) and
# 40 spare, so 1,043 blocks as ftlsim's 1,000 + 43. FAST takes every spare block as a log block.
PSU_FTL_TYPES = {"page": 1, "dftl": 3, "fast": 4}
PSU_MORE_LOGICAL_BLOCKS = 3
PSU_SPARE_BLOCKS = 40
PSU_FAST_LOG_BLOCKS = PSU_SPARE_BLOCKS


def generate_trace(path: Path, requests: int, read_share: float, seed: int) -> dict[str, int]:
    """One 2 KiB page per request: the logical pages written once in order (the fill), then uniform
    random pages, a read with probability `read_share` (every read finds a written page)."""
    rng = random.Random(seed)
    logical_pages = LOGICAL_BLOCKS * PAGES_PER_BLOCK
    reads = writes = 0
    with path.open("w") as out:
        for i in range(requests):
            if i < logical_pages:
                page, op = i, 0
            else:
                page = rng.randrange(logical_pages)
                op = 1 if rng.random() < read_share else 0
            reads += op
            writes += 1 - op
            out.write(f"{i * ARRIVAL_GAP_NS} 0 {page * PAGE_SECTORS} {PAGE_SECTORS} {op}\n")
    return {"requests": requests, "reads": reads, "writes": writes}


def disksim_trace(ssdsim: Path, out: Path, capacity: int | None = None, wrap: bool = False) -> None:
    """The SSDsim trace's requests in DiskSim's ASCII format, which PSU FlashSim reads: arrival time in
    milliseconds, device 0, sector, sectors, 1 for a read. With a `capacity` in bytes, each address folded
    into it as ftlsim's `--wrap` folds it (the offset modulo the capacity, moved back to end at the capacity
    where it would run past it), and requests of no length left out, as ftlsim leaves them."""
    with ssdsim.open() as lines, out.open("w") as disksim:
        for n, line in enumerate(lines, 1):
            time_ns, _, sector, sectors, op = line.split()
            offset, length = int(sector) * SECTOR_BYTES, int(sectors) * SECTOR_BYTES
            if capacity is not None:
                if length == 0:
                    continue
                if offset + length > capacity:
                    if not wrap:
                        sys.exit(f"{ssdsim}:{n}: a request past the capacity of {capacity:,} bytes; give --wrap")
                    offset %= capacity
                    if offset + length > capacity:
                        offset = capacity - length
            disksim.write(f"{float(time_ns) / 1e6:.6f} 0 {offset // SECTOR_BYTES} {length // SECTOR_BYTES} {op}\n")


@dataclass
class Run:
    side: str
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kib: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    @property
    def flash_ops(self) -> int:
        return self.counts["page_reads"] + self.counts["page_writes"] + self.counts["erases"]

    @property
    def ops_per_cpu_s(self) -> float:
        return self.flash_ops / self.cpu_s


def timed(cmd: list[str], cwd: Path) -> tuple[str, dict[str, float]]:
    """Runs `cmd` under /usr/bin/time -v; returns its standard output and time's figures."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (in {cwd}) failed with exit code {proc.returncode}:\n{proc.stderr[-3000:]}")

    def figure(label: str) -> float:
        m = re.search(rf"^\s*{re.escape(label)}: (\S+)$", proc.stderr, re.M)
        if m is None:
            sys.exit(f"/usr/bin/time -v printed no '{label}' for {' '.join(cmd)}")
        value = m.group(1)
        if ":" in value:  # wall clock as [h:]m:ss.cc
            parts = [float(p) for p in value.split(":")]
            return sum(p * 60**i for i, p in enumerate(reversed(parts)))
        return float(value)

    return proc.stdout, {
        "wall_s": figure("Elapsed (wall clock) time (h:mm:ss or m:ss)"),
        "user_s": figure("User time (seconds)"),
        "sys_s": figure("System time (seconds)"),
        "max_rss_kib": figure("Maximum resident set size (kbytes)"),
    }


def flashsim_conf() -> str:
    """flashsim's ssd.conf: one package, die and plane of 1,040 blocks; BAST; no page payloads."""
    return (
        "\n".join(
            [
                "SSD_SIZE 1",
                "PACKAGE_SIZE 1",
                "DIE_SIZE 1",
                f"PLANE_SIZE {LOGICAL_BLOCKS + BAST_SPARE_BLOCKS}",
                f"BLOCK_SIZE {PAGES_PER_BLOCK}",
                f"PAGE_SIZE {PAGE_BYTES}",
                "BLOCK_ERASES 1000000",  # no block wears out within the run
                f"PAGE_READ_DELAY {READ_US}",
                f"PAGE_WRITE_DELAY {PROGRAM_US}",
                f"BLOCK_ERASE_DELAY {ERASE_US}",
                "PAGE_ENABLE_DATA 0",  # no 2 KiB payload per page: the lighter flashsim
                "FTL_IMPLEMENTATION 1",
                f"BAST_LOG_BLOCK_LIMIT {BAST_LOG_BLOCKS}",
                "MAP_DIRECTORY_SIZE 100",
                "PARALLELISM_MODE 0",
                "VIRTUAL_BLOCK_SIZE 1",
                "VIRTUAL_PAGE_SIZE 1",
                "RAM_READ_DELAY 0.01",
                "RAM_WRITE_DELAY 0.01",
                "BUS_CTRL_DELAY 2",
                "BUS_DATA_DELAY 10",
                "BUS_MAX_CONNECT 8",
                "BUS_TABLE_SIZE 512",
                "PLANE_REG_READ_DELAY 0.01",
                "PLANE_REG_WRITE_DELAY 0.01",
            ]
        )
        + "\n"
    )


def run_flashsim(binary: Path, trace: Path, work: Path) -> Run:
    (work / "ssd.conf").write_text(flashsim_conf())
    out, t = timed([str(binary), str(trace), str(PAGE_SECTORS)], work)

    def stat(pattern: str) -> list[int]:
        m = re.search(pattern, out)
        if m is None:
            sys.exit(f"flashsim printed no line matching {pattern!r}:\n{out[-2000:]}")
        return [int(g) for g in m.groups()]

    ftl_reads, ftl_writes, erases = stat(r"FTL Reads: (\d+)\s+Writes: (\d+)\s+Erases: (\d+)")
    (gc_writes,) = stat(r"GC  Reads: \d+\s+Writes: (\d+)")
    wl_reads, wl_writes = stat(r"WL  Reads: (\d+)\s+Writes: (\d+)")
    switch, partial, full = stat(r"Log FTL Switch: (\d+) Partial: (\d+) Full: (\d+)")
    counts = {
        "page_reads": ftl_reads,
        # BAST counts a map-block update as a write (numGCWrite) but issues it as a no-op: no program.
        "page_writes": ftl_writes - gc_writes,
        "erases": erases,
        "copies": wl_writes,
        "merges.switch": switch,
        "merges.partial": partial,
        "merges.full": full,
    }
    counts["host_writes"] = counts["page_writes"] - counts["copies"]
    return Run("flashsim bast", t["wall_s"], t["user_s"], t["sys_s"], int(t["max_rss_kib"]), counts)


def mqsim_ssdconfig() -> str:
    """MQSim's ssdconfig.xml: one channel, chip, die and plane of 1,076 blocks; page-level mapping with the
    whole table in RAM; no data cache, copyback, preemption or wear levelling; greedy GC."""
    device = {
        "Seed": 321,
        "Enabled_Preconditioning": "false",
        "Memory_Type": "FLASH",
        "HostInterface_Type": "NVME",
        "IO_Queue_Depth": 65535,
        "Queue_Fetch_Size": 512,
        "Caching_Mechanism": "SIMPLE",
        "Data_Cache_Sharing_Mode": "SHARED",
        "Data_Cache_Capacity": 0,
        "Data_Cache_DRAM_Row_Size": 8192,
        "Data_Cache_DRAM_Data_Rate": 100,
        "Data_Cache_DRAM_Data_Busrt_Size": 1,
        "Data_Cache_DRAM_tRCD": 13,
        "Data_Cache_DRAM_tCL": 13,
        "Data_Cache_DRAM_tRP": 13,
        "Address_Mapping": "PAGE_LEVEL",
        "Ideal_Mapping_Table": "true",
        "CMT_Capacity": 2097152,
        "CMT_Sharing_Mode": "SHARED",
        "Plane_Allocation_Scheme": "CWDP",
        "Transaction_Scheduling_Policy": "OUT_OF_ORDER",
        "Overprovisioning_Ratio": MQSIM_OVER_PROVISIONING,
        "GC_Exec_Threshold": MQSIM_GC_THRESHOLD,
        "GC_Block_Selection_Policy": "GREEDY",
        "Use_Copyback_for_GC": "false",
        "Preemptible_GC_Enabled": "false",
        "GC_Hard_Threshold": 0.001,
        "Dynamic_Wearleveling_Enabled": "false",
        "Static_Wearleveling_Enabled": "false",
        "Static_Wearleveling_Threshold": 100,
        "Preferred_suspend_erase_time_for_read": 700000,
        "Preferred_suspend_erase_time_for_write": 700000,
        "Preferred_suspend_write_time_for_read": 100000,
        "Flash_Channel_Count": 1,
        "Flash_Channel_Width": 1,
        "Channel_Transfer_Rate": 333,
        "Chip_No_Per_Channel": 1,
        "Flash_Comm_Protocol": "NVDDR2",
    }
    flash = {
        "Flash_Technology": "SLC",
        "CMD_Suspension_Support": "NONE",
        "Page_Read_Latency_LSB": READ_US * 1000,
        "Page_Read_Latency_CSB": READ_US * 1000,
        "Page_Read_Latency_MSB": READ_US * 1000,
        "Page_Program_Latency_LSB": PROGRAM_US * 1000,
        "Page_Program_Latency_CSB": PROGRAM_US * 1000,
        "Page_Program_Latency_MSB": PROGRAM_US * 1000,
        "Block_Erase_Latency": ERASE_US * 1000,
        "Block_PE_Cycles_Limit": 1000000,
        "Suspend_Erase_Time": 700000,
        "Suspend_Program_Time": 100000,
        "Die_No_Per_Chip": 1,
        "Plane_No_Per_Die": 1,
        "Block_No_Per_Plane": LOGICAL_BLOCKS + PAGE_SPARE_BLOCKS,
        "Page_No_Per_Block": PAGES_PER_BLOCK,
        "Page_Capacity": PAGE_BYTES,
        "Page_Metadat_Capacity": 64,
    }
    tags = lambda d: "".join(f"<{k}>{v}</{k}>" for k, v in d.items())  # noqa: E731
    return (
        '<?xml version="1.0" encoding="us-ascii"?>\n<Execution_Parameter_Set><Host_Parameter_Set>'
        "<PCIe_Lane_Bandwidth>1.0</PCIe_Lane_Bandwidth><PCIe_Lane_Count>4</PCIe_Lane_Count>"
        "<SATA_Processing_Delay>400000</SATA_Processing_Delay><Enable_ResponseTime_Logging>false"
        "</Enable_ResponseTime_Logging><ResponseTime_Logging_Period_Length>1000000"
        "</ResponseTime_Logging_Period_Length></Host_Parameter_Set>"
        f"<Device_Parameter_Set>{tags(device)}<Flash_Parameter_Set>{tags(flash)}</Flash_Parameter_Set>"
        "</Device_Parameter_Set></Execution_Parameter_Set>\n"
    )


def mqsim_workload(trace: Path) -> str:
    return (
        '<?xml version="1.0" encoding="us-ascii"?>\n<MQSim_IO_Scenarios><IO_Scenario>'
        "<IO_Flow_Parameter_Set_Trace_Based><Priority_Class>HIGH</Priority_Class>"
        "<Device_Level_Data_Caching_Mode>TURNED_OFF</Device_Level_Data_Caching_Mode>"
        "<Channel_IDs>0</Channel_IDs><Chip_IDs>0</Chip_IDs><Die_IDs>0</Die_IDs><Plane_IDs>0</Plane_IDs>"
        "<Initial_Occupancy_Percentage>0</Initial_Occupancy_Percentage>"
        f"<File_Path>{trace}</File_Path><Percentage_To_Be_Executed>100</Percentage_To_Be_Executed>"
        "<Relay_Count>1</Relay_Count><Time_Unit>NANOSECOND</Time_Unit>"
        "</IO_Flow_Parameter_Set_Trace_Based></IO_Scenario></MQSim_IO_Scenarios>\n"
    )


def run_mqsim(binary: Path, trace: Path, work: Path) -> Run:
    (work / "ssdconfig.xml").write_text(mqsim_ssdconfig())
    (work / "workload.xml").write_text(mqsim_workload(trace))
    result = work / "workload_scenario_1.xml"
    result.unlink(missing_ok=True)
    _, t = timed([str(binary), "-i", "ssdconfig.xml", "-w", "workload.xml"], work)
    ftl = ET.parse(result).getroot().find(".//SSDDevice.FTL")
    if ftl is None:
        sys.exit(f"{result} has no FTL element")

    def stat(name: str) -> float:
        value = ftl.get(name)
        if value is None:
            sys.exit(f"{result}: the FTL element has no {name}")
        return float(value)

    gc_runs = int(stat("Total_GC_Executions"))
    counts = {
        "page_reads": int(stat("Issued_Flash_Read_CMD")),
        "page_writes": int(stat("Issued_Flash_Program_CMD")),
        "erases": int(stat("Issued_Flash_Erase_CMD")),
        "copies": round(stat("Average_Page_Movement_For_GC") * gc_runs) if gc_runs else 0,
        "gc.runs": gc_runs,
    }
    counts["host_writes"] = counts["page_writes"] - counts["copies"]
    return Run("MQSim page", t["wall_s"], t["user_s"], t["sys_s"], int(t["max_rss_kib"]), counts)


def psu_parv(ftl_type: int, logical_blocks: int, spare_blocks: int) -> str:
    """PSU FlashSim's parameter file (DiskSim 3.0): one simpleflash device of `logical_blocks` and
    `spare_blocks` (of 64 x 2 KiB pages, PSU's compiled geometry) behind a driver, a bus, a controller and a
    bus, as DiskSim's example `synthsimpledisk.parv` wires a simple disk, with no statistics printed but the
    flash's. Sizes are in 512-byte sectors."""
    logical = logical_blocks * PAGES_PER_BLOCK * PAGE_SECTORS
    spare = spare_blocks * PAGES_PER_BLOCK * PAGE_SECTORS

    def flags(kind: str, names: str) -> str:
        return ",\n".join(f"Print {kind} {name} stats = 0" for name in names.split(","))

    def queue(policy: int, mapping: int) -> str:
        return (
            f"disksim_ioqueue {{ Scheduling policy = {policy}, Cylinder mapping strategy = {mapping},"
            " Write initiation delay = 0.0, Read initiation delay = 0.0, Sequential stream scheme = 0,"
            " Maximum concat size = 0, Overlapping request scheme = 0, Sequential stream diff maximum = 0,"
            " Scheduling timeout scheme = 0, Timeout time/weight = 0, Timeout scheduling = 0,"
            " Scheduling priority scheme = 0, Priority scheduling = 0 }"
        )

    bus = (
        "type = 1, Arbitration type = 1, Arbitration time = 0.0, Read block transfer time = 0.0,"
        " Write block transfer time = 0.0, Print stats = 0"
    )
    return f"""disksim_global Global {{ Init Seed = 42, Real Seed = 42, Stat definition file = statdefs }}
disksim_stats Stats {{
iodriver stats = disksim_iodriver_stats {{
{flags("driver", "size,locality,blocking,interference,queue,crit,idle,intarr,streak,stamp,per-device")} }},
bus stats = disksim_bus_stats {{ {flags("bus", "idle,arbwait")} }},
ctlr stats = disksim_ctlr_stats {{
{flags("controller", "cache,size,locality,blocking,interference,queue,crit,idle,intarr,streak,stamp,per-device")}
}},
device stats = disksim_device_stats {{
{flags("device", "queue,crit,idle,intarr,size,seek,latency,xfer,acctime,interfere,buffer")} }},
process flow stats = disksim_pf_stats {{
Print per-process stats = 0, Print per-CPU stats = 0, Print all interrupt stats = 0, Print sleep stats = 0 }}
}}
disksim_iodriver DRIVER0 {{ type = 1, Constant access time = 0.0, Scheduler = {queue(3, 1)},
Use queueing in subsystem = 1 }}
disksim_bus BUS0 {{ {bus} }}
disksim_bus BUS1 {{ {bus} }}
disksim_ctlr CTLR0 {{ type = 1, Scale for delays = 0.0, Bulk sector transfer time = 0.0,
Maximum queue length = 0, Print stats = 0 }}
disksim_simpleflash SD0 {{ Scheduler = {queue(1, 0)}, Max queue length = 1,
Block count = {logical}, Extra Block count = {spare}, FTL type = {ftl_type},
Bus transaction latency = 0.0, Bulk sector transfer time = 0.0, Never disconnect = 0, Print stats = 0 }}
instantiate [ statfoo ] as Stats
instantiate [ bus0 ] as BUS0
instantiate [ sd0 ] as SD0
instantiate [ bus1 ] as BUS1
instantiate [ driver0 ] as DRIVER0
instantiate [ ctlr0 ] as CTLR0
topology disksim_iodriver driver0 [ disksim_bus bus0 [ disksim_ctlr ctlr0 [ disksim_bus bus1 [
disksim_simpleflash sd0 [] ] ] ] ]
disksim_logorg org0 {{ Addressing mode = Parts, Distribution scheme = Asis, Redundancy scheme = Noredun,
devices = [ sd0 ], Stripe unit = {logical}, Synch writes for safety = 0, Number of copies = 2,
Copy choice on read = 6, RMW vs. reconstruct = 0.5, Parity stripe unit = 64, Parity rotation type = 1,
Time stamp interval = 0.0, Time stamp start time = 60000.0, Time stamp stop time = 10000000000.0,
Time stamp file name = stamps }}
disksim_pf Proc {{ Number of processors = 1, Process-Flow Time Scale = 1.0 }}
"""


def run_psu(
    binary: Path,
    scheme: str,
    trace: Path,
    work: Path,
    logical_blocks: int = LOGICAL_BLOCKS + PSU_MORE_LOGICAL_BLOCKS,
    spare_blocks: int = PSU_SPARE_BLOCKS,
) -> Run:
    """PSU FlashSim's `disksim` on a DiskSim trace; DiskSim's `statdefs` must sit beside the binary."""
    statdefs = binary.parent / "statdefs"
    if not statdefs.is_file():
        sys.exit(f"{statdefs} is missing: copy DiskSim's valid/statdefs beside {binary}")
    shutil.copy(statdefs, work / "statdefs")
    parv = work / f"psu-{scheme}.parv"
    parv.write_text(psu_parv(PSU_FTL_TYPES[scheme], logical_blocks, spare_blocks))
    result = work / f"psu-{scheme}.outv"
    _, t = timed([str(binary), parv.name, result.name, "ascii", str(trace), "0"], work)
    text = result.read_text()

    def stat(label: str) -> int:
        m = re.search(rf"{re.escape(label)} \(#\):\s*(\d+)", text)
        if m is None:
            sys.exit(f"{result} has no '{label} (#)': PSU FlashSim did not finish (its output: {work})")
        return int(m.group(1))

    # PSU counts GC's reads and programs apart from the host's (a DFTL's translation pages among the host's).
    copies = stat("GC page write")
    counts = {
        "page_reads": stat("Page read") + stat("GC page read"),
        "page_writes": stat("Page write") + copies,
        "erases": stat("Block erase"),
        "copies": copies,
    }
    if scheme != "dftl":  # DFTL's translation-page writes are among PSU's host-side page writes
        counts["host_writes"] = stat("Page write")
    return Run(f"PSU FlashSim {scheme}", t["wall_s"], t["user_s"], t["sys_s"], int(t["max_rss_kib"]), counts)


def ftlsim_args(scheme: str, peer: str, event_model: bool) -> list[str]:
    """ftlsim's options for `scheme` configured as its `peer` ("flashsim", "mqsim" or "psu") runs it."""
    spare = {
        "flashsim": BAST_SPARE_BLOCKS,
        "mqsim": PAGE_SPARE_BLOCKS,
        "psu": PSU_MORE_LOGICAL_BLOCKS + PSU_SPARE_BLOCKS,
    }
    args = [
        "--format",
        "ssdsim",
        "--ftl",
        scheme,
        "--capacity",
        f"{LOGICAL_BLOCKS * PAGES_PER_BLOCK * PAGE_BYTES}",
        "-p",
        f"page_bytes={PAGE_BYTES}",
        "-p",
        f"pages_per_block={PAGES_PER_BLOCK}",
        "-p",
        f"extra_blocks={spare[peer]}",
        "-p",
        f"read_us={READ_US}",
        "-p",
        f"program_us={PROGRAM_US}",
        "-p",
        f"erase_us={ERASE_US}",
    ]
    if peer == "flashsim":
        args += ["-p", f"log_blocks={BAST_LOG_BLOCKS}"]
    if peer == "mqsim":
        args += ["-p", "gc_frontier=true", "-p", f"gc_reserve_blocks={PAGE_GC_RESERVE_BLOCKS}", "-p", "victim=greedy"]
    if peer == "psu":
        args += ["--precondition", "trace"]
        args += ["-p", f"log_blocks={PSU_FAST_LOG_BLOCKS}"] if scheme == "fast" else ["-p", "profile=psu-flashsim"]
    if event_model:
        args += ["-p", "queue_depth=32"]
    return args


def run_ftlsim(ftlsim: list[str], trace: Path, work: Path, scheme: str, peer: str, event_model: bool) -> Run:
    report = work / f"ftlsim-{scheme}.json"
    args = ftlsim_args(scheme, peer, event_model)
    _, t = timed([*ftlsim, "run", str(trace), *args, "--json", str(report)], work)
    r = json.loads(report.read_text())
    counts = {
        "page_reads": r["flash.page_reads"],
        "page_writes": r["flash.page_writes"],
        "erases": r["flash.erases"],
        "spare_reads": r.get("flash.spare_reads", 0),
        "copies": r.get("gc.copied_pages", 0)
        + sum(v for k, v in r.items() if k.startswith("merges.") and k.endswith(".copied_pages")),
        "sim.wall_s": r["sim.wall_s"],
    }
    # Programs for the host: all but copies of data pages and translation-page writes (a merge may program a
    # host page among its copies, which the report counts as the merge's).
    data_copies = counts["copies"] - r.get("dftl.copies.translation", 0)
    counts["host_writes"] = r["flash.page_writes"] - r.get("flash.page_writes.map", 0) - data_copies
    for kind in ("switch", "partial", "full"):
        if f"merges.{kind}" in r:
            counts[f"merges.{kind}"] = r[f"merges.{kind}"]
    if "gc.runs" in r:
        counts["gc.runs"] = r["gc.runs"]
    side = f"ftlsim {scheme}" + (" (events)" if event_model else "")
    return Run(side, t["wall_s"], t["user_s"], t["sys_s"], int(t["max_rss_kib"]), counts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flashsim", type=Path, help="the flashsim trace driver (bench/peers/flashsim_driver.cpp)")
    ap.add_argument("--mqsim", type=Path, help="MQSim's binary")
    ap.add_argument("--psu", type=Path, help="PSU FlashSim's disksim binary, DiskSim's statdefs beside it")
    ap.add_argument("--ftlsim", default="ftlsim", help="the ftlsim command (default: ftlsim on PATH)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; the fastest is kept (default 3)")
    ap.add_argument("--requests", type=int, default=500_000)
    ap.add_argument("--read-share", type=float, default=0.25, help="share of reads after the fill")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="save every run's figures here")
    ap.add_argument("--keep", type=Path, help="write the trace and configurations here instead of a temp dir")
    opts = ap.parse_args()
    if opts.flashsim is None and opts.mqsim is None and opts.psu is None:
        ap.error("give at least one peer: --flashsim BIN, --mqsim BIN and/or --psu BIN")
    for peer in (opts.flashsim, opts.mqsim, opts.psu):
        if peer is not None and not os.access(peer, os.X_OK):
            ap.error(f"{peer} is not an executable file; build it as docs/speed-against-peers.md says")
    ftlsim = [opts.ftlsim] if shutil.which(opts.ftlsim) else ap.error(f"no command {opts.ftlsim!r} on PATH")

    work = opts.keep or Path(tempfile.mkdtemp(prefix="ftlsim-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    trace = (work / "peers.ssdsim").resolve()
    shape = generate_trace(trace, opts.requests, opts.read_share, opts.seed)
    disksim = work / "peers.disksim"
    disksim_trace(trace, disksim)
    print(
        f"trace {trace}\n{shape['requests']:,} requests: {shape['reads']:,} reads, {shape['writes']:,} writes\n"
        f"{LOGICAL_BLOCKS:,} logical blocks of {PAGES_PER_BLOCK} x {PAGE_BYTES} B pages\n"
        f"spare blocks: {BAST_SPARE_BLOCKS} (bast), {PAGE_SPARE_BLOCKS} (page against MQSim),"
        f" {PSU_MORE_LOGICAL_BLOCKS + PSU_SPARE_BLOCKS} (against PSU)"
    )
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())

    # Each pair: what it compares, the peer's run, and ftlsim's runs configured alike.
    jobs = []
    if opts.flashsim:
        jobs.append(
            (
                "bast against flashsim",
                lambda: run_flashsim(opts.flashsim.resolve(), trace, work),
                [lambda: run_ftlsim(ftlsim, trace, work, "bast", "flashsim", False)],
            )
        )
    if opts.mqsim:
        jobs.append(
            (
                "page against MQSim",
                lambda: run_mqsim(opts.mqsim.resolve(), trace, work),
                [
                    lambda: run_ftlsim(ftlsim, trace, work, "page", "mqsim", False),
                    lambda: run_ftlsim(ftlsim, trace, work, "page", "mqsim", True),
                ],
            )
        )
    if opts.psu:
        for scheme in PSU_FTL_TYPES:
            jobs.append(
                (
                    f"{scheme} against PSU FlashSim",
                    partial(run_psu, opts.psu.resolve(), scheme, disksim, work),
                    [partial(run_ftlsim, ftlsim, trace, work, scheme, "psu", False)],
                )
            )

    startup = min(
        (timed([*ftlsim, "--version"], work)[1] for _ in range(opts.repeat)), key=lambda t: t["user_s"] + t["sys_s"]
    )
    print(
        f"ftlsim's start-up alone (ftlsim --version): {startup['user_s'] + startup['sys_s']:.2f} CPU s,"
        f" {startup['max_rss_kib'] / 1024:.1f} MiB"
    )
    saved = []
    for pair, peer_job, own_jobs in jobs:
        peer = best([peer_job() for _ in range(opts.repeat)])
        ours = [best([job() for _ in range(opts.repeat)]) for job in own_jobs]
        report(pair, opts.repeat, peer, ours)
        for r in (peer, *ours):
            # Far fewer host programs than the trace's writes means a side did not replay the trace.
            host_programs = r.counts.get("host_writes")
            if host_programs is not None and abs(host_programs - shape["writes"]) > shape["writes"] / 1000:
                print(
                    f"warning: {r.side} programmed {host_programs:,} pages for the host for the trace's"
                    f" {shape['writes']:,} writes: it did not do the trace's work",
                    file=sys.stderr,
                )
        saved += [
            vars(r) | {"pair": pair, "flash_ops": r.flash_ops, "ops_per_cpu_s": r.ops_per_cpu_s} for r in (peer, *ours)
        ]
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    if opts.json:
        opts.json.write_text(json.dumps(saved, indent=1) + "\n")


def best(runs: list[Run]) -> Run:
    return min(runs, key=lambda r: r.cpu_s)


def report(pair: str, repeat: int, peer: Run, ours: list[Run]) -> None:
    """Prints one pair in 79 columns: the speed of each side, then every count side by side."""
    sides = (peer, *ours)
    print(f"\n{pair}: each side's best of {repeat} run{'s' if repeat > 1 else ''} (least CPU seconds)")
    print(
        f"{'side':<21}{'wall s':>7}{'user s':>7}{'sys s':>6}{'RSS MiB':>8}{'flash ops':>12}{'ops/cpu-s':>12}{'ratio':>6}"
    )
    for r in sides:
        ratio = r.ops_per_cpu_s / peer.ops_per_cpu_s
        print(
            f"{r.side:<21}{r.wall_s:>7.2f}{r.user_s:>7.2f}{r.sys_s:>6.2f}{r.max_rss_kib / 1024:>8.1f}"
            f"{r.flash_ops:>12,}{r.ops_per_cpu_s:>12,.0f}{ratio:>5.1f}x"
        )
    for r in ours:
        print(
            f"{r.side}: engine alone (sim.wall_s) {r.counts['sim.wall_s']:.3f} s,"
            f" {r.flash_ops / r.counts['sim.wall_s']:,.0f} flash ops/s"
        )
    keys = sorted({k for r in sides for k in r.counts} - {"sim.wall_s"})
    print(f"{'count':<16}" + "".join(f"{r.side:>21}" for r in sides))
    for k in keys:
        print(f"{k:<16}" + "".join(f"{r.counts[k]:>21,}" if k in r.counts else f"{'-':>21}" for r in sides))


if __name__ == "__main__":
    main()
