"""Every key a run or sweep config file takes: where it goes, its default (the engine's, read from the
registry) and what it means. One source for `ftlsim config --example run|sweep` and for the validator in
`ftlsim.config` that refuses unknown keys: a key the engine gains without a meaning here fails
`tests/test_config_reference.py`, so the reference cannot fall behind."""

from __future__ import annotations

from ._registry import registry, scheme_defaults

# Keys of a run file besides the engine's options: what to run and where the report goes.
FILE_KEYS = {
    "trace": "the trace: a file in any supported format (gzip read transparently) or a built-in workload "
             "`name:key=value,...` (ftlsim list)",
    "ftl": "the scheme (ftlsim list)",
    "preset": "device preset: geometry and timing from the papers (ftlsim list); none: lee2007",
    "capacity": "logical capacity the host sees, e.g. \"64MiB\"; none: the preset's, else the trace's highest "
                "address rounded up to a block (64 MiB for a built-in workload)",
    "precondition": "none; full: write every logical page once first, then reset the counters; trace: write "
                    "every request of the trace once first",
    "params": "the scheme's own parameters (a table; they may also be given at top level)",
}
RUN_OUTPUTS = {
    "json": "write the report as JSON here (`ftlsim run -c` of that file repeats the run)",
    "csv": "write the report as one CSV row here",
}
SWEEP_KEYS = {
    "traces": "the traces of the grid: a list of trace files or built-in workloads (`trace` for one)",
    "schemes": "a list of scheme names, or a table of scheme -> its own grid (parameter -> list of values)",
    "grid": "parameter -> list of values, for every scheme that takes the parameter (the others run once "
            "without it)",
    "store": "results store: a .parquet or .csv file or a directory; points already done are not run again",
    "csv": "write one row per point as CSV here",
    "plot": "draw erase count and elapsed time against the first swept parameter that is a number, else as bars "
            "(PNG, PDF or SVG)",
    "scheduler": "run the points on a Dask cluster, e.g. \"tcp://host:8786\"",
    "jobs": "parallel local runs; none: every core",
    "backend": "where points run: processes (default), threads or dask",
}
# Aliases a sweep file accepts for the keys above.
SWEEP_ALIASES = {"trace": "traces", "ftl": "schemes"}

# The engine's options (SimConfig and its trace and device sections), by name.
OPTIONS = {
    # trace options
    "format": "trace format (ftlsim list); auto: sniffed from the file",
    "device": "keep only the requests of this device / ASU / disk number of a multi-device trace (a number, or a "
              "blkparse major,minor: \"8,16\" is 2064)",
    "devices": "how the devices of a multi-device trace share the address space: fold (one space), concat "
               "(a range per device) or a list of devices to keep, concatenated in that order",
    "writes_only": "drop reads and trims",
    "skip_bad_lines": "count lines that do not parse and go on, instead of failing",
    "time_unit": "unit of the time column of ssdsim / disksim traces: ns, us, ms or s; none: the format's own",
    "blkparse_event": "blkparse: which event is the request: D (dispatch), Q (queue) or C (completion)",
    "compact": "map the 1 MiB extents the trace touches densely onto the device: a trace spanning terabytes "
               "runs on a device of its footprint",
    # run options
    "wrap": "fold requests beyond the capacity into it (offset modulo capacity) instead of failing",
    "idle_threshold_us": "a gap between two requests longer than this lets the scheme work in idle time",
    "nvram": "size of an NVRAM write cache in front of the scheme, e.g. \"128KiB\"; none: no NVRAM",
    "nvram_policy": "what the NVRAM absorbs: metadata (writes tagged metadata), region, lru or bplru",
    "nvram_regions": "region policy: byte ranges, e.g. \"0-64KiB,1MiB-2MiB\" (end exclusive)",
    "nvram_read_us": "NVRAM time per page read in microseconds; none: FeRAM's",
    "nvram_write_us": "NVRAM time per page write in microseconds; none: FeRAM's",
    "nvram_flush_at_end": "write the NVRAM's dirty pages to flash at the end of the trace",
    "rmw": "a partial-page write reads the old page first; false writes the page without reading it",
    "measure_from": "zero the counters once the run reaches this request number (1000) or trace time (\"30s\", "
                    "\"1500ms\"): a warm-up window inside the trace",
    "extra_blocks": "physical blocks beyond the logical ones, for every scheme; none: the scheme's own default",
    "over_provisioning": "the same as a fraction of the logical blocks (give this or extra_blocks)",
    "power_cuts": "crash test: cut the power at this many random flash operations, mount from flash after each "
                  "and check every logical page",
    "power_cut_seed": "seed of the power-cut points",
    "mount_at_end": "mount the scheme from flash once after the trace: its boot cost (mount.* keys)",
    "torn_pages": "a power cut on a page program tears it: the page reads back uncorrectable",
    "queue_depth": "multi-chip array model: most requests in the device at once (others wait in the host); "
                   "giving it turns the model on (response_us.*, throughput.*); none: 32 when the model is on",
    "time_scale": "multi-chip array model: requests arrive at trace time x this (0.5: twice as fast, 0: all at "
                  "once); giving it turns the model on; none: 1",
    # device overrides (none: the preset's)
    "page_bytes": "data bytes of a page; none: the preset's",
    "spare_bytes": "spare (OOB) bytes of a page, at least 13; none: the preset's",
    "pages_per_block": "pages of an erase block; none: the preset's",
    "sequential_program": "MLC rule: the pages of a block are programmed in increasing order; none: the preset's",
    "read_us": "page read latency; none: the preset's",
    "spare_read_us": "spare-area read latency; none: the preset's",
    "program_us": "page program latency; none: the preset's",
    "spare_program_us": "spare-area program latency; none: the preset's",
    "erase_us": "block erase latency; none: the preset's",
    "bad_block_ratio": "fraction of the chip's blocks bad from the factory, 0 to 0.5",
    "endurance": "erases a block survives before an erase fails and it goes bad (e.g. 10000 MLC)",
    "bad_block_reserve": "chip blocks kept to replace bad blocks; none: the factory share plus 2% with endurance",
    "bad_block_seed": "seed of the factory bad blocks' positions (default 1; no count depends on where they are)",
    "channels": "multi-chip array: flash channels; more than one plane in all turns the array model on and "
                "stripes every scheme's block over the planes; none: the preset's (1)",
    "chips_per_channel": "multi-chip array: chips on each channel; none: the preset's (1)",
    "dies_per_chip": "multi-chip array: dies in each chip; none: the preset's (1)",
    "planes_per_die": "multi-chip array: planes in each die; none: the preset's (1)",
    "blocks_per_plane": "multi-chip array: the logical capacity in blocks per plane (the scheme's spare blocks "
                        "come on top), e.g. 16 to shrink mqsim-default; none: the preset's",
    "channel_mts": "channel transfer rate in MT/s (mqsim-default: 333); none: transfers take no time",
    "channel_width_bytes": "bytes per channel transfer (mqsim-default: 1)",
    "command_us": "command and address cycles of every flash operation on its channel, in microseconds",
    "placement": "multi-chip array: striped (default: one scheme instance, its block striped over every plane) "
                 "or per-die (a scheme instance per die, a page's die chosen by its address)",
}
# Keys of the engine's SimConfig that a config file gives otherwise: at top level (ftl, preset, capacity,
# precondition), as sections ([params]) or as the trace itself.
STRUCTURAL = {"ftl", "params", "device", "trace", "precondition", "preset", "capacity"}

# The schemes' own parameters. A name means the same in every scheme that takes it, apart from the
# log-block counts of the on-flash-map schemes, said here too.
PARAMS = {
    "over_provisioning": "physical space beyond the logical capacity, as a fraction of it (0 to 1)",
    "gc_reserve_blocks": "free blocks kept in reserve; garbage collection runs when fewer remain",
    "gc_frontier": "GC copies go to a write frontier of their own (hot/cold separation)",
    "victim": "victim policy; page, DFTL: GC's, greedy (most invalid pages) or cost-benefit; TinyFTL: the log "
              "block to compact, lru (§V.E) or switchable (first, as Logblock, FAST §3.7)",
    "wear_leveling_threshold": "static wear levelling: migrate the coldest full block when erase counts spread "
                               "by more than this; 0: off",
    "cmt_entries": "entries of DFTL's cached mapping table (CMT)",
    "cmt_policy": "DFTL's CMT replacement: slru (segmented LRU, §3.1), lru, or age (PSU FlashSim's)",
    "writeback": "DFTL's dirty eviction writes its translation page with every dirty entry of that page made "
                 "clean (page), or only the evicted one (entry, PSU FlashSim's)",
    "gc": "DFTL's garbage collection: before every write that needs a block (per-write), or only when the "
          "frontier is full (burst, PSU FlashSim's)",
    "lazy_copy_dirty": "DFTL's GC move of a cached entry makes it dirty (§3.3); false leaves it clean (PSU "
                       "FlashSim's)",
    "profile": "a named parameter set that makes the scheme behave as another simulator's (psu-flashsim); "
               "a parameter given beside it wins over the profile's value, whatever its value (the scheme's "
               "default too)",
    "fold_in_place": "the replacement scheme folds a chain into its last block when it can (Linux NFTL's "
                     "NFTL_foldchain), not into a new block",
    "entry_bytes": "bytes of one map entry in a translation page (DFTL §3.1: 4)",
    "log_blocks": "log blocks (BAST, FAST, LAST: the log buffer; MAST: all areas; TinyFTL, superblock: blocks "
                  "beyond the logical ones)",
    "partial_merge": "reclaim a log block holding offsets 0..k in place by copying the missing pages (FAST §3.4)",
    "zone_blocks": "logical blocks per zone of a block map kept on flash; 0: the whole map in RAM",
    "lazy_merge": "O-FAST (§3.6): do not merge a logical block whose pages in the victim all have newer copies",
    "lookup_table": "NFTL technique 1 (§3.2): replacement-block table and page-status bitmap in RAM",
    "page_cache": "NFTL technique 2 (§3.3): entries of the page cache; 0: none",
    "page_cache_policy": "NFTL page cache replacement: fifo (the paper's) or lru",
    "spare_blocks": "physical blocks beyond the logical ones (at least 2)",
    "replacement_blocks": "replacement blocks in use at once (Shim et al. §4.2: 64)",
    "block_table_cache_units": "block tables the TinyFTL block table cache holds (§V.E: 8)",
    "block_table_entries": "entries in a TinyFTL block table (§V.E: 256)",
    "map_blocks": "blocks reserved for TinyFTL's block tables and directory (§V.E: 256)",
    "page_table_cache_entries": "page tables the TinyFTL page mapping cache holds (§V.E: 128)",
    "page_table_entries": "logical pages one page table covers (TinyFTL §V.E: 16; superblock: 32)",
    "reserved_free_blocks": "free blocks TinyFTL keeps for compaction (§V.C: 3)",
    "cache_entries": "page tables the superblock scheme's page-map cache holds (TinyFTL paper §VI.B: 16)",
    "extra_blocks_per_superblock": "the most extra blocks one superblock may hold at a time",
    "superblock_blocks": "adjacent logical blocks in a superblock (N)",
    "seq_log_blocks": "LAST: sequential log blocks; 0: log_blocks / 16, at least 1",
    "seq_threshold_bytes": "LAST: a request of at least this many bytes is sequential",
    "hot_window_pages": "LAST: a page is hot if rewritten within this many random-buffer writes; 0: half the "
                        "random buffer's pages",
    "hot_blocks": "LAST: initial blocks of the hot partition; 0: half the random log blocks",
    "la_blocks": "MAST: random log blocks of LA; 0: an eighth of the log blocks",
    "ha_blocks": "MAST: blocks of HA; 0: an eighth of the log blocks",
    "migrate_valid_pages": "MAST: an LA block leaving with more live pages than this migrates whole to CA; "
                           "0: half a block",
    "dynamic_sizing": "MAST: resize LA and CA by their utilization (§3)",
    "ca_util_low": "MAST: CA utilization below this grows LA (0 to 1)",
    "ha_util_high": "MAST: HA utilization above this shrinks LA (0 to 1)",
    "ca_min_share": "MAST (a deviation from the paper): dynamic sizing keeps CA at least this share of the "
                    "random log blocks",
    "idle_merges": "MAST: CA merges at most per idle period",
}


def option_keys() -> list[str]:
    """The engine's options a config file gives at top level, in the registry's order: trace options, run
    options, device overrides."""
    keys = registry()["keys"]
    out = [k for k in keys["trace"]] + [k for k in keys["run"] if k not in STRUCTURAL] + list(keys["device"])
    return list(dict.fromkeys(out))


def option_default(key: str):
    """An option's default from the engine's SimConfig (None: decided by the preset or the scheme)."""
    defaults = registry()["defaults"]
    for section in (defaults, defaults["trace"], defaults["device"]):
        if key in section and not isinstance(section[key], dict):
            return section[key]
    return None


def run_keys() -> list[str]:
    """Every top-level key of a run file (besides the scheme's parameters, which may sit there too)."""
    return list(FILE_KEYS) + [k for k in option_keys() if k not in FILE_KEYS] + list(RUN_OUTPUTS)


def sweep_keys() -> list[str]:
    """Every top-level key of a sweep file."""
    common = [k for k in list(FILE_KEYS) + option_keys() if k not in ("trace", "ftl")]
    return list(SWEEP_KEYS) + list(SWEEP_ALIASES) + [k for k in dict.fromkeys(common) if k not in SWEEP_KEYS]


def meaning(key: str) -> str:
    return {**PARAMS, **OPTIONS, **SWEEP_KEYS, **RUN_OUTPUTS, **FILE_KEYS}.get(key, "")


def toml_value(value) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


# Comment lines of an example file fit an 80-column editor.
WIDTH = 79


def _comment(text: str) -> list[str]:
    """`text` as comment lines of at most `WIDTH` columns."""
    import textwrap

    return textwrap.wrap(text, WIDTH, initial_indent="# ", subsequent_indent="# ")


def _line(key: str, value, text: str | None = None) -> list[str]:
    """``# meaning`` (`text`, else the key's meaning) then ``key = value``; a key without a default is shown
    commented out."""
    return _comment(text or meaning(key)) + ([f"{key} = {toml_value(value)}"] if value is not None else [f"# {key} ="])


EXAMPLE_VALUES = {"trace": "uniform:writes=150000,seed=1", "precondition": "none"}


def example_run() -> str:
    """An annotated run file (TOML) with every key, its default and its meaning."""
    out = _comment("ftlsim run config: `ftlsim run -c run.toml`. Every key is optional and shows its default; a "
                   "key written `# key =` has none (the preset, the scheme or the trace decides). Options given on "
                   "the command line override the file.") + [""]
    for key in FILE_KEYS:
        if key != "params":
            out += _line(key, EXAMPLE_VALUES.get(key, registry()["defaults"].get(key)))
    out += ["", "# Trace, run and device options"]
    for key in option_keys():
        out += _line(key, option_default(key))
    out += ["", "# Outputs"] + [line for key in RUN_OUTPUTS for line in _line(key, None)]
    out += [""] + _comment("The scheme's own parameters, here page's (the default scheme) with their defaults.")
    out += _params_reference()
    # A parameter that is also a run option (page's over_provisioning) is that option, written above: here it
    # would set the option, and the run would echo it as a setting off its default.
    own = {k: v for k, v in scheme_defaults("page").items() if k not in option_keys()}
    out += ["[params]"] + [f"{k} = {toml_value(v)}" if v is not None else f"# {k} =" for k, v in own.items()]
    return "\n".join(out) + "\n"


def example_sweep() -> str:
    """An annotated sweep file (TOML) with every key, its default and its meaning."""
    out = _comment("ftlsim sweep config: `ftlsim sweep -c sweep.toml`. A grid of traces x schemes x parameters; "
                   "every point runs once and is kept in the store. Keys written `# key =` have no default.") + [""]
    out += _line("traces", ["uniform:writes=150000,seed=1"])
    for key in ("store", "csv", "plot", "scheduler", "jobs"):
        out += _line(key, {"store": "results.parquet"}.get(key), SWEEP_KEYS[key])
    out += _line("backend", "processes")
    out += ["", "# Options of every point (the run file's keys)"]
    for key in [k for k in FILE_KEYS if k not in ("trace", "ftl", "params")] + option_keys():
        default = "none" if key == "precondition" else (option_default(key) if key in option_keys() else None)
        out += _line(key, default)
    out += [""] + _comment("[grid]: parameter -> values, for every scheme that takes it; e.g. log_blocks = "
                           "[4, 8, 16]")
    out += ["[grid]", ""] + _comment("[schemes]: each scheme with its own grid (one value or a list per "
                                     "parameter); {} runs its defaults.")
    out += _params_reference()
    out += ["[schemes]", "page = {}", "fast = { log_blocks = [4, 8, 16] }"]
    return "\n".join(out) + "\n"


def _params_reference() -> list[str]:
    """Comment lines: every scheme with its parameters and their defaults, then each parameter's meaning."""
    import textwrap

    out = ["# Every scheme's parameters (defaults):"]
    for s in registry()["schemes"]:
        # A key without a default is left out of a file (TOML has no null): said as unset.
        # Each `key = value` whole on one line (a no-break space inside it while wrapping).
        params = ", ".join((f"{k} = {toml_value(v)}" if v is not None else f"{k} (unset)").replace(" ", "\xa0")
                           for k, v in (s["defaults"] or {}).items()) or "(none)"
        out += [line.replace("\xa0", " ") for line in textwrap.wrap(
            f"{s['name']}: {params}", WIDTH, initial_indent="#   ", subsequent_indent="#     ",
            break_on_hyphens=False)]
    out.append("# What they mean:")
    names = sorted({k for s in registry()["schemes"] for k in (s["defaults"] or {})})
    for k in names:
        out += textwrap.wrap(f"{k}: {PARAMS.get(k, '')}", WIDTH, initial_indent="#   ", subsequent_indent="#     ",
                             break_on_hyphens=False)  # a value such as per-write is read whole
    return out
