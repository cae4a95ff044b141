//! The PyO3 binding of ftlsim-core: converts types (JSON strings both ways), releases the GIL around a run,
//! forwards progress, and maps every engine error to `ftlsim.FtlsimError` in one place.

use ftlsim_core::config::{from_json, DeviceOverrides, PRESETS};
use ftlsim_core::error::SimError;
use ftlsim_core::ftl::SCHEMES;
use ftlsim_core::request::Request;
use ftlsim_core::sim::{self, Progress, SimConfig};
use ftlsim_core::stats::{CacheKind, Cause, MergeKind};
use ftlsim_core::trace::{workload::WORKLOADS, RequestSource, TraceError, TraceOptions, FORMATS};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use serde_json::{json, Value};

create_exception!(
    _core,
    FtlsimError,
    PyValueError,
    "A simulation could not run: bad input, or a scheme broke a rule."
);

create_exception!(
    _core,
    RunFailedError,
    FtlsimError,
    "A run started and failed: a scheme broke a NAND rule, the integrity or durability check, or ran out of free blocks."
);

/// An engine error as Python sees it: a run that started and failed is a `RunFailedError`, bad input an
/// `FtlsimError` (the command line exits 1 or 2).
fn sim_err(e: ftlsim_core::error::SimError) -> PyErr {
    use ftlsim_core::device::FlashError::{NandRule, OutOfSpace, WornOut};
    use ftlsim_core::error::SimError::{Durability, Flash, Integrity};
    match e {
        Flash(NandRule { .. } | OutOfSpace { .. } | WornOut { .. })
        | Integrity { .. }
        | Durability(_) => RunFailedError::new_err(e.to_string()),
        e => err(e),
    }
}

fn err(e: impl std::fmt::Display) -> PyErr {
    FtlsimError::new_err(e.to_string())
}

fn config(config_json: &str) -> PyResult<SimConfig> {
    from_json("run configuration", config_json).map_err(err)
}

/// Runs a trace (path or workload spec) under a JSON `SimConfig`; returns the report as JSON.
/// `progress(requests, done, total)` is called about every 50 ms; if it returns False the run stops with
/// `FtlsimError("run cancelled")`. Ctrl-C raises KeyboardInterrupt within about that long, and an exception
/// raised by `progress` propagates as it is.
#[pyfunction]
#[pyo3(signature = (trace, config_json, progress=None))]
fn simulate(
    py: Python<'_>,
    trace: String,
    config_json: &str,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let cfg = config(config_json)?;
    let mut raised: Option<PyErr> = None;
    let report = py.allow_threads(|| {
        let mut on_progress = |p: Progress| -> bool {
            Python::with_gil(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb
                        .call1(py, (p.requests, p.done, p.total))
                        .map(|r| r.extract::<Option<bool>>(py).ok().flatten() != Some(false)),
                    None => Ok(true),
                });
                outcome.unwrap_or_else(|e| {
                    raised = Some(e);
                    false
                })
            })
        };
        sim::run(&cfg, &trace, &mut on_progress)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    report.map(|r| r.to_json()).map_err(sim_err)
}

/// The report's keys: a JSON list of {key, unit, section, description, table}, where `<...>` in a key stands
/// for a name chosen at run time and `table` says whether `ftlsim run` shows the key.
/// A scheme's parameters as they run (JSON): its defaults under the given ones, its profile applied.
#[pyfunction]
fn resolve_params(ftl: &str, params_json: &str) -> PyResult<String> {
    let given: serde_json::Value = from_json("scheme parameters", params_json).map_err(err)?;
    let resolved = ftlsim_core::ftl::resolve_params(ftl, &given).map_err(err)?;
    Ok(resolved.to_string())
}

#[pyfunction]
fn report_schema() -> String {
    serde_json::to_string(&ftlsim_core::report::schema()).expect("plain data")
}

/// Writes a trace (a built-in workload or a trace file) to `output` in the format its extension names (`.csv`
/// native with tags and times, `.trace` / `.ascii` SSDsim, `.blkparse`; `.gz` on top compresses); the device
/// of `config_json` (preset, capacity) sizes a workload. An output that is the input is refused. Returns the
/// requests written.
#[pyfunction]
fn generate(py: Python<'_>, trace: String, output: String, config_json: &str) -> PyResult<u64> {
    let cfg = config(config_json)?;
    let out = std::path::Path::new(&output);
    if output.is_empty() {
        return Err(err(
            "generate: the output path is empty; name a file such as out.csv",
        ));
    }
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(&trace), std::fs::canonicalize(out)) {
        if a == b {
            return Err(err(format!(
                "generate: the output {output} is the input trace; write to another file"
            )));
        }
    }
    ftlsim_core::trace::writer_for(out).map_err(err)?;
    let mut raised: Option<PyErr> = None;
    let written = py.allow_threads(|| {
        let source = sim::open_trace(&cfg, &trace, &mut |_| interrupted().is_none())?;
        let mut source = Interruptible {
            inner: source,
            read: 0,
            raised: &mut raised,
        };
        Ok::<u64, ftlsim_core::error::SimError>(ftlsim_core::trace::write(&mut source, out)?)
    });
    match (raised, written) {
        (Some(e), _) => Err(e),
        // Ctrl-C seen by the pre-pass (`compact`'s), which has no place to keep the exception.
        (None, Err(SimError::Cancelled | SimError::Trace(TraceError::Cancelled))) => {
            Err(PyKeyboardInterrupt::new_err(""))
        }
        (None, written) => written.map_err(err),
    }
}

/// Ctrl-C since the last look, as the KeyboardInterrupt to raise (takes the GIL briefly).
fn interrupted() -> Option<PyErr> {
    Python::with_gil(|py| py.check_signals().err())
}

/// A request source that looks for Ctrl-C every [`Interruptible::EVERY`] requests and then ends with
/// `Cancelled`, so a long `generate` stops within a fraction of a second.
struct Interruptible<'a> {
    inner: Box<dyn RequestSource>,
    read: u64,
    raised: &'a mut Option<PyErr>,
}

impl Interruptible<'_> {
    const EVERY: u64 = 1 << 14;
}

impl RequestSource for Interruptible<'_> {
    fn next_request(&mut self) -> Option<Result<Request, TraceError>> {
        self.read += 1;
        if self.read.is_multiple_of(Self::EVERY) {
            if let Some(e) = interrupted() {
                *self.raised = Some(e);
                return Some(Err(TraceError::Cancelled));
            }
        }
        self.inner.next_request()
    }

    fn skipped_lines(&self) -> u64 {
        self.inner.skipped_lines()
    }

    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }

    fn position(&self) -> Option<String> {
        self.inner.position()
    }
}

/// The RAM breakdown of a scheme on a device, as JSON: a list of {name, bytes, layout}.
#[pyfunction]
fn ram(config_json: &str) -> PyResult<String> {
    let items = sim::ram(&config(config_json)?).map_err(err)?;
    Ok(serde_json::to_string(&items).expect("plain data"))
}

/// Statistics of a trace (format, devices, requests, mix, footprint, write concentration, distributions), as
/// JSON. `progress(done, total)` is called every 16,384 requests; Ctrl-C raises KeyboardInterrupt, and an
/// exception raised by `progress` propagates as it is.
#[pyfunction]
#[pyo3(signature = (trace, options_json, block_bytes, page_bytes, progress=None))]
fn trace_info(
    py: Python<'_>,
    trace: String,
    options_json: &str,
    block_bytes: u64,
    page_bytes: u32,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let opts: TraceOptions = from_json("trace options", options_json).map_err(err)?;
    let mut raised: Option<PyErr> = None;
    let info = py.allow_threads(|| {
        let mut on_progress = |done: u64, total: u64| -> bool {
            Python::with_gil(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb
                        .call1(py, (done, total))
                        .map(|r| r.extract::<Option<bool>>(py).ok().flatten() != Some(false)),
                    None => Ok(true),
                });
                outcome.unwrap_or_else(|e| {
                    raised = Some(e);
                    false
                })
            })
        };
        ftlsim_core::trace::info::info(&trace, &opts, block_bytes, page_bytes, &mut on_progress)
    });
    if let Some(e) = raised {
        return Err(e);
    }
    Ok(serde_json::to_string(&info.map_err(err)?).expect("plain data"))
}

/// Writes per logical block and a sampled timeline of the blocks written, as JSON (for `plot-refs`).
#[pyfunction]
fn write_refs(
    py: Python<'_>,
    trace: String,
    options_json: &str,
    block_bytes: u64,
    page_bytes: u32,
    max_points: usize,
) -> PyResult<String> {
    let opts: TraceOptions = from_json("trace options", options_json).map_err(err)?;
    let refs = py
        .allow_threads(|| {
            ftlsim_core::trace::refs::write_refs(&trace, &opts, block_bytes, page_bytes, max_points)
        })
        .map_err(err)?;
    Ok(serde_json::to_string(&refs).expect("plain data"))
}

/// The format a trace file is read as under the JSON trace options `options_json` (default: sniffing with the
/// default options): the format they name, without reading the file, or for "auto" the one sniffed from its
/// first lines with those options (`skip_bad_lines` too), as the run does; "workload" for a built-in workload
/// spec. Recorded in every report so that a saved run can be repeated exactly.
#[pyfunction]
#[pyo3(signature = (trace, options_json=None))]
fn sniff_format(trace: &str, options_json: Option<&str>) -> PyResult<&'static str> {
    if ftlsim_core::trace::is_workload(trace) {
        return Ok("workload");
    }
    let opts: TraceOptions = match options_json {
        Some(json) => from_json("trace options", json).map_err(err)?,
        None => TraceOptions::default(),
    };
    if opts.format != "auto" {
        return ftlsim_core::trace::format(&opts.format)
            .map(|f| f.name)
            .map_err(err);
    }
    ftlsim_core::trace::sniff(std::path::Path::new(trace), &opts)
        .map(|f| f.name)
        .map_err(err)
}

/// The registries: schemes, presets, workloads and trace formats, and the keys each config section takes.
#[pyfunction]
fn registry() -> String {
    let keys = |v: Value| {
        v.as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    json!({
        "schemes": SCHEMES.iter().map(|s| json!({
            "name": s.name, "summary": s.summary, "citation": s.citation, "defaults": (s.defaults)(),
        })).collect::<Vec<_>>(),
        "presets": PRESETS,
        "workloads": WORKLOADS.iter().collect::<Vec<_>>(),
        "formats": FORMATS.iter().map(|f| json!({"name": f.name, "summary": f.summary})).collect::<Vec<_>>(),
        "keys": {
            "device": keys(serde_json::to_value(DeviceOverrides::default()).expect("plain data")),
            "trace": keys(serde_json::to_value(TraceOptions::default()).expect("plain data")),
            "run": keys(serde_json::to_value(SimConfig::default()).expect("plain data")),
        },
        "defaults": SimConfig::default(),
        "kinds": {
            "merge": MergeKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
            "cache": CacheKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
            "cause": Cause::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
        },
        "version": ftlsim_core::VERSION,
    })
    .to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FtlsimError", m.py().get_type::<FtlsimError>())?;
    m.add("RunFailedError", m.py().get_type::<RunFailedError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(ram, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(write_refs, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(report_schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_params, m)?)?;
    m.add_function(wrap_pyfunction!(sniff_format, m)?)?;
    Ok(())
}
