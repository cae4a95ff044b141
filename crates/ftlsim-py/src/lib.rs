//! The PyO3 binding of ftlsim-core: converts types (Python dicts and lists both ways, through serde), releases
//! the GIL around a run, forwards progress, and maps every engine error to `ftlsim.FtlsimError` in one place.

use ftlsim_core::config::{ConfigError, Invalid};
use ftlsim_core::error::SimError;
use ftlsim_core::sim::{self, Progress, SimConfig};
use ftlsim_core::text::clip;
use ftlsim_core::trace::analysis::info::TraceInfo;
use ftlsim_core::trace::{TraceError, TraceOptions};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use pythonize::{depythonize, pythonize};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

create_exception!(
    _core,
    FtlsimError,
    PyValueError,
    "A simulation could not run: bad input, or a scheme broke a rule. Where the engine knows them, `key` names \
     the option at fault (`device.page_bytes`, `params.log_blocks`), `value` is what was given, `expected` what \
     it takes and `suggestion` a value that works; each is None otherwise."
);

create_exception!(
    _core,
    RunFailedError,
    FtlsimError,
    "A run started and failed: a scheme broke a NAND rule, the integrity or durability check, or ran out of free blocks."
);

/// The fields of a structured error; the exception's attributes of the same names.
#[derive(Default)]
struct Fields {
    key: Option<String>,
    value: Option<PyObject>,
    expected: Option<String>,
    suggestion: Option<String>,
}

/// `FtlsimError(message)` with its fields set as attributes.
fn error_with(py: Python<'_>, message: String, fields: Fields) -> PyErr {
    let e = FtlsimError::new_err(message);
    let exc = e.value(py);
    let set =
        |name: &str, v: PyObject| exc.setattr(name, v).expect("an exception takes attributes");
    if let Some(key) = fields.key {
        set(
            "key",
            key.into_pyobject(py).expect("a str").into_any().unbind(),
        );
    }
    if let Some(value) = fields.value {
        set("value", value);
    }
    if let Some(expected) = fields.expected {
        set(
            "expected",
            expected
                .into_pyobject(py)
                .expect("a str")
                .into_any()
                .unbind(),
        );
    }
    if let Some(suggestion) = fields.suggestion {
        set(
            "suggestion",
            suggestion
                .into_pyobject(py)
                .expect("a str")
                .into_any()
                .unbind(),
        );
    }
    e
}

/// An engine error as Python sees it: a run that started and failed is a `RunFailedError`, bad input an
/// `FtlsimError` (the command line exits 1 or 2). Parameters whose values are not allowed
/// ([`SimError::invalid`]) cross as fields: `problems`, a list of {key, value, expected, suggestion,
/// alternatives} (values as text; alternatives a list of {key, value, does}: other settings that fix it), `context` the message before them ("invalid parameter: device: "), and the first problem's
/// `key`, `value`, `expected` and `suggestion`, so that each front end spells the keys its own way.
fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    use ftlsim_core::device::FlashError::{NandRule, OutOfSpace, WornOut};
    use SimError::{Durability, Flash, Integrity};
    if let Flash(NandRule { .. } | OutOfSpace { .. } | WornOut { .. })
    | Integrity { .. }
    | Durability(_) = e
    {
        return RunFailedError::new_err(e.to_string());
    }
    let message = e.to_string();
    let problems = e.invalid();
    let Some(first) = problems.first() else {
        if let SimError::Config(ConfigError::Unknown {
            key, name, valid, ..
        }) = &e
        {
            // A name not known: its key, the name, the names there are (the message is the engine's).
            let fields = Fields {
                key: Some(key.to_string()),
                value: Some(PyString::new(py, name).into_any().unbind()),
                expected: Some(format!("must be one of {valid}")),
                suggestion: None,
            };
            return error_with(py, message, fields);
        }
        if let SimError::Trace(t) = &e {
            return with_settings(py, err(message), t.settings());
        }
        return err(message);
    };
    let joined = problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    let context = message.strip_suffix(&joined).unwrap_or("").to_string();
    let listed: Vec<_> = problems
        .iter()
        .map(|p| {
            let alternatives: Vec<_> = p
                .alternatives
                .iter()
                .map(|a| serde_json::json!({"key": a.key, "value": a.value, "does": a.does}))
                .collect();
            serde_json::json!({
                "key": p.key, "value": p.value, "expected": p.expected, "suggestion": p.suggestion,
                "alternatives": alternatives,
            })
        })
        .collect();
    let fields = Fields {
        key: Some(first.key.clone()),
        value: Some(PyString::new(py, &first.value).into_any().unbind()),
        expected: Some(first.expected.clone()),
        suggestion: first.suggestion.clone(),
    };
    let e = error_with(py, message, fields);
    let exc = e.value(py);
    if let Ok(listed) = to_py(py, &listed) {
        exc.setattr("problems", listed)
            .expect("an exception takes attributes");
    }
    exc.setattr("context", context)
        .expect("an exception takes attributes");
    e
}

fn err(e: impl std::fmt::Display) -> PyErr {
    FtlsimError::new_err(e.to_string())
}

/// A trace error as Python sees it: its message, and in `settings` the {key, value} of each setting the message
/// names as `key=value` ([`TraceError::settings`]), for a front end to spell its own way.
fn trace_err(py: Python<'_>, e: TraceError) -> PyErr {
    with_settings(py, err(&e), e.settings())
}

fn with_settings(py: Python<'_>, e: PyErr, settings: &[(&str, &str)]) -> PyErr {
    let listed: Vec<_> = settings
        .iter()
        .map(|(key, value)| serde_json::json!({"key": key, "value": value}))
        .collect();
    if let Ok(listed) = to_py(py, &listed) {
        e.value(py)
            .setattr("settings", listed)
            .expect("an exception takes attributes");
    }
    e
}

/// A Python value as JSON data. A float that is not finite has no JSON form (serde would make it null):
/// it is refused by its key.
fn to_value(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    check_finite(what, obj, &mut String::new())?;
    depythonize(obj).map_err(|e| err(format!("bad {what}: {e}")))
}

fn check_finite(what: &str, obj: &Bound<'_, PyAny>, path: &mut String) -> PyResult<()> {
    if let Ok(f) = obj.downcast::<PyFloat>() {
        if !f.value().is_finite() {
            let key = path.trim_start_matches('.').to_string();
            let message = format!(
                "bad {what}: {}={} is not a finite number; give a finite number",
                clip(&key),
                f.value()
            );
            let fields = Fields {
                key: Some(key),
                value: Some(obj.clone().unbind()),
                expected: Some("is not a finite number".into()),
                suggestion: None,
            };
            return Err(error_with(obj.py(), message, fields));
        }
    } else if let Ok(d) = obj.downcast::<PyDict>() {
        for (k, v) in d.iter() {
            let len = path.len();
            path.push_str(&format!(".{k}"));
            check_finite(what, &v, path)?;
            path.truncate(len);
        }
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        for (i, v) in obj.try_iter()?.enumerate() {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            check_finite(what, &v?, path)?;
            path.truncate(len);
        }
    }
    Ok(())
}

/// A Python dict as the engine's typed configuration `T` (`what`: "run configuration", "trace options"). The
/// JSON types are kept as Python has them (`True` is not 1, `"no"` is not a bool); an error names the key.
fn typed<T: DeserializeOwned>(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<T> {
    let value = to_value(what, obj)?;
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let key = match e.path().to_string().as_str() {
            "." => None,
            path => Some(path.to_string()),
        };
        let problem = e.into_inner().to_string();
        // serde's data errors read "invalid type: string \"x\", expected u32" / "unknown field `k`, expected
        // one of ...": the part after "expected" is what the key takes.
        let expected = problem
            .split_once(", expected ")
            .map(|(_, exp)| exp.to_string());
        let given = key.as_deref().and_then(|k| lookup(&value, k));
        // A value of the wrong kind for a key the front end spells (`read_us`, `time_scale`; a scheme's
        // parameters are checked by the scheme): a problem of that key, with the value given and the kind it
        // takes in words, which the front end spells its own way (`-p read_us=fast must be a number`).
        // A field's own check (a device size: "big does not parse; ...") reads "{value} {what is wrong}": a
        // problem of that key too.
        if let (Some(k), Some(given)) = (&key, given) {
            if !k.contains('[') && !k.starts_with("params.") {
                let leaf = k.rsplit('.').next().unwrap_or(k);
                let shown = match given {
                    Value::String(text) => clip(text),
                    other => clip(&other.to_string()),
                };
                let own = problem
                    .strip_prefix(&format!("{shown} "))
                    .map(str::to_string);
                if let Some(expected) = ftlsim_core::text::wrong_kind(&problem).or(own) {
                    // Past the type's limit, a key with a tighter bound of its own states that one.
                    let (expected, fits) = match ftlsim_core::array::own_bound(leaf) {
                        Some((own, fits)) if expected.starts_with("must be at most") => {
                            (own, Some(fits))
                        }
                        _ => (expected, None),
                    };
                    let invalid = Invalid::new(leaf, shown, expected, fits);
                    return sim_err(obj.py(), SimError::from(invalid));
                }
            }
        }
        let message = match &key {
            Some(k) => format!("bad {what}: {}: {problem}", clip(k)),
            None => format!("bad {what}: {problem}"),
        };
        let py = obj.py();
        let fields = Fields {
            key,
            value: given.and_then(|v| pythonize(py, v).ok()).map(Bound::unbind),
            expected,
            suggestion: None,
        };
        error_with(py, message, fields)
    })
}

/// The value at a serde_path_to_error path (`device.page_bytes`, `params.zones[2]`), if it is there.
fn lookup<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(root, |v, part| match part.split_once('[') {
            Some((name, index)) => {
                let inner = if name.is_empty() { v } else { v.get(name)? };
                inner.get(index.trim_end_matches(']').parse::<usize>().ok()?)
            }
            None => v.get(part),
        })
}

/// A serialisable engine value as Python objects (a struct becomes a dict in its fields' order).
fn to_py<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    pythonize(py, value).map_err(err)
}

/// Trace statistics as a dict. Their byte totals are u128 (they can pass 2^64), which serialise as text beyond
/// 64 bits (pythonize has no 128-bit integer): each is set over it as an exact Python int.
fn trace_info_to_py<'py>(py: Python<'py>, info: &TraceInfo) -> PyResult<Bound<'py, PyAny>> {
    let big = [
        ("read_bytes", info.read_bytes),
        ("write_bytes", info.write_bytes),
        ("trim_bytes", info.trim_bytes),
        ("footprint_bytes", info.footprint_bytes),
        ("write_footprint_bytes", info.write_footprint_bytes),
        ("page_writes", info.page_writes),
    ];
    let dict = to_py(py, info)?.downcast_into::<PyDict>()?;
    for (key, value) in big {
        dict.set_item(key, value)?;
    }
    Ok(dict.into_any())
}

/// Runs a trace (path or workload spec) under a run configuration (a dict: `SimConfig`'s keys); returns the
/// report's flat keys as a dict. `progress(requests, done, total)` is called about every 50 ms; if it returns
/// False the run stops with `FtlsimError("run cancelled")`. Ctrl-C raises KeyboardInterrupt within about that
/// long, and an exception raised by `progress` propagates as it is.
#[pyfunction]
#[pyo3(signature = (trace, config, progress=None))]
fn simulate<'py>(
    py: Python<'py>,
    trace: String,
    config: &Bound<'py, PyAny>,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg: SimConfig = typed("run configuration", config)?;
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
    to_py(py, &report.map_err(|e| sim_err(py, e))?.flatten())
}

/// A scheme's parameters as they run: its defaults under the given ones, its profile applied.
#[pyfunction]
fn resolve_params<'py>(
    py: Python<'py>,
    ftl: &str,
    params: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let given = to_value("scheme parameters", params)?;
    let resolved =
        ftlsim_core::ftl::resolve_params(ftl, &given).map_err(|e| sim_err(py, e.into()))?;
    to_py(py, &resolved)
}

/// The report's keys: a list of {key, unit, section, description, table}, where `<...>` in a key stands for a
/// name chosen at run time and `table` says whether `ftlsim run` shows the key.
#[pyfunction]
fn report_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &ftlsim_core::report::schema())
}

/// Writes a trace (a built-in workload or a trace file) to `output` in the format its extension names, the
/// device of `config` sizing a workload (`ftlsim_core::generate`). Returns the requests written and those whose
/// tag the output's format could not keep.
#[pyfunction]
fn generate(
    py: Python<'_>,
    trace: String,
    output: String,
    config: &Bound<'_, PyAny>,
) -> PyResult<(u64, u64)> {
    let cfg: SimConfig = typed("run configuration", config)?;
    let mut raised: Option<PyErr> = None;
    let written = py.allow_threads(|| {
        let mut keep_going = || match Python::with_gil(|py| py.check_signals()) {
            Ok(()) => true,
            Err(e) => {
                raised = Some(e);
                false
            }
        };
        ftlsim_core::generate::generate(
            &trace,
            std::path::Path::new(&output),
            &cfg,
            &mut keep_going,
        )
    });
    match (raised, written) {
        (Some(e), _) => Err(e),
        (None, Err(SimError::Cancelled | SimError::Trace(TraceError::Cancelled))) => {
            Err(PyKeyboardInterrupt::new_err(""))
        }
        (None, written) => written
            .map(|w| (w.requests, w.tags_dropped))
            .map_err(|e| sim_err(py, e)),
    }
}

/// The RAM breakdown of a scheme on a device: a list of {name, bytes, layout}.
#[pyfunction]
fn ram<'py>(py: Python<'py>, config: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let items = sim::ram(&typed("run configuration", config)?).map_err(|e| sim_err(py, e))?;
    to_py(py, &items)
}

/// Whether a run of `config` has the multi-chip array model on (response times), from its device and run
/// options alone.
#[pyfunction]
fn array_model_on(py: Python<'_>, config: &Bound<'_, PyAny>) -> PyResult<bool> {
    sim::array_model_on(&typed("run configuration", config)?).map_err(|e| sim_err(py, e))
}

/// Statistics of a trace (format, devices, requests, mix, footprint, write concentration, distributions).
/// `progress(done, total)` is called every 16,384 requests; Ctrl-C raises KeyboardInterrupt, and an exception
/// raised by `progress` propagates as it is.
#[pyfunction]
#[pyo3(signature = (trace, options, block_bytes, page_bytes, progress=None))]
fn trace_info<'py>(
    py: Python<'py>,
    trace: String,
    options: &Bound<'py, PyAny>,
    block_bytes: u64,
    page_bytes: u32,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyAny>> {
    let opts: TraceOptions = typed("trace options", options)?;
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
        ftlsim_core::trace::analysis::info::info(
            &trace,
            &opts,
            block_bytes,
            page_bytes,
            &mut on_progress,
        )
    });
    if let Some(e) = raised {
        return Err(e);
    }
    trace_info_to_py(py, &info.map_err(|e| trace_err(py, e))?)
}

/// Writes per logical block and a sampled timeline of the blocks written (for `plot-refs`).
#[pyfunction]
fn write_refs<'py>(
    py: Python<'py>,
    trace: String,
    options: &Bound<'py, PyAny>,
    block_bytes: u64,
    page_bytes: u32,
    max_points: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let opts: TraceOptions = typed("trace options", options)?;
    let refs = py
        .allow_threads(|| {
            ftlsim_core::trace::analysis::refs::write_refs(
                &trace,
                &opts,
                block_bytes,
                page_bytes,
                max_points,
            )
        })
        .map_err(|e| trace_err(py, e))?;
    let dict = to_py(py, &refs)?.downcast_into::<PyDict>()?;
    dict.set_item("info", trace_info_to_py(py, &refs.info)?)?;
    Ok(dict.into_any())
}

/// Bytes of a size as the engine reads `capacity` and the other sizes ("64MiB", "4096"), so that an echo can
/// say how the size that ran differs from the one given.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    ftlsim_core::text::parse_size(text).map_err(err)
}

/// The format a trace file is read as under the trace options `options` (default: sniffing with the default
/// options): the format they name, without reading the file, or for "auto" the one sniffed from its first
/// lines with those options (`skip_bad_lines` too), as the run does; "workload" for a built-in workload spec.
/// Recorded in every report so that a saved run can be repeated exactly.
#[pyfunction]
#[pyo3(signature = (trace, options=None))]
fn sniff_format(
    py: Python<'_>,
    trace: &str,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<&'static str> {
    if ftlsim_core::trace::is_workload(trace) {
        return Ok("workload");
    }
    let opts: TraceOptions = match options {
        Some(options) => typed("trace options", options)?,
        None => TraceOptions::default(),
    };
    if opts.format != "auto" {
        return ftlsim_core::trace::format(&opts.format)
            .map(|f| f.name)
            .map_err(err);
    }
    ftlsim_core::trace::sniff(std::path::Path::new(trace), &opts)
        .map(|f| f.name)
        .map_err(|e| trace_err(py, e))
}

/// The engine's catalog (`ftlsim_core::catalog`): schemes, presets, workloads and trace formats, the keys each
/// config section takes, the run's defaults, the report's kinds and the version.
#[pyfunction]
fn registry(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &ftlsim_core::catalog::catalog())
}

/// The JSON Schema of a run configuration (`ftlsim_core::schema`): each key with its type, default and meaning.
#[pyfunction]
fn config_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, &ftlsim_core::schema::run_config())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let error = py.get_type::<FtlsimError>();
    for field in ["key", "value", "expected", "suggestion", "context"] {
        error.setattr(field, py.None())?;
    }
    error.setattr("problems", PyTuple::empty(py))?;
    error.setattr("settings", PyTuple::empty(py))?;
    m.add("FtlsimError", error)?;
    m.add("RunFailedError", py.get_type::<RunFailedError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(ram, m)?)?;
    m.add_function(wrap_pyfunction!(array_model_on, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(write_refs, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    m.add_function(wrap_pyfunction!(report_schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_params, m)?)?;
    m.add_function(wrap_pyfunction!(sniff_format, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    Ok(())
}
