//! The stages after `simulate`, over rows the Python layer hands over as
//! JSON lines (or a rows file it wrote): grading, the score's reports, gold
//! labels, the judge's measurement, the training cuts, decontamination,
//! export and coverage gaps. Each calls the `sparring` crate.

use crate::callables::{Callable, PyGrader};
use crate::run::spec_of;
use crate::{encode, parse, py_err};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{Value, json};
use sparring::grading::{GradeSettings, Grading, grade_rows, judge_same_model, start_judge};
use sparring::reports;
use sparring::training::{self, Cut, CutSettings};
use sparring::types::{Grader, Row};
use sparring::{Env, LogSlot};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(grade, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(delta, m)?)?;
    m.add_function(wrap_pyfunction!(eval_variance, m)?)?;
    m.add_function(wrap_pyfunction!(judge_agreement, m)?)?;
    m.add_function(wrap_pyfunction!(hack_scan, m)?)?;
    m.add_function(wrap_pyfunction!(attach_labels, m)?)?;
    m.add_function(wrap_pyfunction!(judge_trust, m)?)?;
    m.add_function(wrap_pyfunction!(cut, m)?)?;
    m.add_function(wrap_pyfunction!(export, m)?)?;
    m.add_function(wrap_pyfunction!(coverage_gap, m)?)?;
    Ok(())
}

/// Rows from JSON lines, each in the documented row format.
fn rows_of(jsonl: &str) -> PyResult<Vec<Row>> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| PyValueError::new_err(format!("row {i} is not a sparring row: {e}")))
        })
        .collect()
}

fn score_rows(jsonl: &str) -> PyResult<Vec<reports::ScoreRow>> {
    sparring::score::input::parse_score_rows(Path::new("rows"), jsonl)
        .map_err(|e| py_err(&e.into()))
}

fn runtime() -> PyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the async runtime: {e}")))
}

fn opt_f64(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn opt_u64(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn opt_str(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn secs(v: &Value, key: &str) -> PyResult<Option<Duration>> {
    match opt_f64(v, key) {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => {
            Ok(Some(Duration::from_secs_f64(s)))
        }
        Some(s) => Err(PyValueError::new_err(format!(
            "`{key}` must be seconds above 0 and at most 86400, got {s}"
        ))),
    }
}

/// Grades rows: conduct checks, then a grader (a callable, a command or a
/// URL), then an LLM judge. Returns the graded rows and the pass summary.
#[pyfunction]
#[pyo3(signature = (rows, settings, grader=None))]
fn grade(
    py: Python<'_>,
    rows: &str,
    settings: &str,
    grader: Option<Py<PyAny>>,
) -> PyResult<String> {
    let rows = rows_of(rows)?;
    let s = parse("the grade settings", settings)?;
    let mut settings = GradeSettings {
        conduct: s.get("conduct").and_then(Value::as_bool).unwrap_or(true),
        grader: opt_str(&s, "grader"),
        judge: opt_str(&s, "judge"),
        rubric: opt_str(&s, "rubric").map(PathBuf::from),
        ..GradeSettings::default()
    };
    if let Some(kind) = opt_str(&s, "judge_kind") {
        settings.judge_kind =
            sparring::engine::judge::JudgeKind::parse(&kind).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "`judge_kind` `{kind}` is not a judge kind; expected `score` or `decision`"
                ))
            })?;
    }
    if let Some(t) = secs(&s, "timeout")? {
        settings.timeout = t;
    }
    if let Some(c) = opt_u64(&s, "concurrency") {
        settings.concurrency = usize::try_from(c).unwrap_or(usize::MAX).max(1);
    }
    let given: Option<Arc<dyn Grader>> = grader.map(|func| {
        Arc::new(PyGrader(Callable {
            func: Arc::new(func),
            name: opt_str(&s, "grader_name").unwrap_or_else(|| "grader".to_owned()),
            log: LogSlot::new(),
        })) as Arc<dyn Grader>
    });
    let runtime = runtime()?;
    let (graded, summary) = py
        .detach(move || {
            runtime.block_on(async move {
                let grading = Grading::start_with(&settings, &Env::process(), &rows, given).await?;
                let mut out: Vec<Row> = Vec::new();
                let summary = grade_rows(rows, &grading, &mut out).await?;
                Ok::<_, sparring::Error>((out, summary))
            })
        })
        .map_err(|e| py_err(&e))?;
    encode(&json!({"rows": graded, "summary": summary}))
}

/// `sparring report`: pass@1 with its interval over tasks, pass@k, pass^k,
/// per category.
#[pyfunction]
fn report(rows: &str, options: &str) -> PyResult<String> {
    let rows = score_rows(rows)?;
    let o = parse("the report options", options)?;
    let mut options = reports::ReportOptions::default();
    if let Some(ks) = o.get("k").and_then(Value::as_array) {
        options.ks = ks.iter().filter_map(Value::as_u64).collect();
        if options.ks.is_empty() || options.ks.contains(&0) {
            return Err(PyValueError::new_err("`k` must be a list of integers >= 1"));
        }
    }
    if let Some(seed) = opt_u64(&o, "seed") {
        options.seed = seed;
    }
    let r = reports::report(&rows, &options).map_err(|e| py_err(&e.into()))?;
    encode(&json!({"report": r, "text": reports::render(&r)}))
}

/// `sparring delta`: paired before/after per task.
#[pyfunction]
fn delta(before: &str, after: &str, options: &str) -> PyResult<String> {
    let before = score_rows(before)?;
    let after = score_rows(after)?;
    let o = parse("the delta options", options)?;
    let mut options = reports::DeltaOptions::default();
    if let Some(names) = o.get("must_not_regress").and_then(Value::as_array) {
        options.must_not_regress = names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    if let Some(seed) = opt_u64(&o, "seed") {
        options.seed = seed;
    }
    let d = reports::delta(&before, &after, ("before", "after"), &options)
        .map_err(|e| py_err(&e.into()))?;
    let failed: Vec<&str> = d.failed_markers().iter().map(|(n, _)| *n).collect();
    encode(
        &json!({"delta": d, "failed_markers": failed, "text": sparring::score::delta::render(&d)}),
    )
}

/// `sparring eval-variance`: pass@1 per eval run.
#[pyfunction]
fn eval_variance(rows: &str) -> PyResult<String> {
    let rows = score_rows(rows)?;
    let r = reports::eval_variance(&rows, "rows").map_err(|e| py_err(&e.into()))?;
    encode(&r)
}

/// `sparring judge-agreement`: the rows' rewards against gold labels.
#[pyfunction]
#[pyo3(signature = (rows, labels=None))]
fn judge_agreement(rows: &str, labels: Option<&str>) -> PyResult<String> {
    let rows = score_rows(rows)?;
    // Without labels, the gold labels on the rows (`attach_labels`), as the
    // CLI reads them.
    let (labels, from) = match labels {
        Some(text) => (
            sparring::score::input::parse_labels(Path::new("labels"), text)
                .map_err(|e| py_err(&e.into()))?,
            "labels",
        ),
        None => (sparring::score::input::labels_from_rows(&rows), "rows"),
    };
    let r = reports::judge_agreement(&rows, &labels, (Path::new("rows"), Path::new(from)))
        .map_err(|e| py_err(&e.into()))?;
    encode(&r)
}

/// `sparring hack-scan`: features that track reward within tasks.
#[pyfunction]
fn hack_scan(rows: &str, seed: u64) -> PyResult<String> {
    let rows = score_rows(rows)?;
    let r = reports::hack_scan(&rows, "rows", seed).map_err(|e| py_err(&e.into()))?;
    encode(&r)
}

/// `sparring labels attach`: gold labels (`{"row_id", "reward"}` lines) on
/// rows.
#[pyfunction]
fn attach_labels(rows: &str, labels: &str, kind: &str, author: &str) -> PyResult<String> {
    let mut rows = rows_of(rows)?;
    let labels: Vec<sparring::io::rows::Label> = labels
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let v = parse("a label", l)?;
            Ok(sparring::io::rows::Label {
                row_id: opt_str(&v, "row_id").ok_or_else(|| {
                    PyValueError::new_err(format!("label {} has no `row_id`", i + 1))
                })?,
                reward: opt_f64(&v, "reward")
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "label {} needs a reward from 0 to 1 (or a pass/fail)",
                            i + 1
                        ))
                    })?,
                author: opt_str(&v, "author"),
            })
        })
        .collect::<PyResult<_>>()?;
    let labelled = sparring::grading::attach_labels(
        &mut rows,
        &labels,
        Path::new("labels"),
        kind,
        Some(author),
    )
    .map_err(|e| py_err(&e))?;
    encode(&json!({"rows": rows, "labelled": labelled}))
}

/// `sparring judge-trust`: a judge measured against gold labels and probes.
#[pyfunction]
fn judge_trust(py: Python<'_>, rows: &str, settings: &str) -> PyResult<String> {
    let rows = rows_of(rows)?;
    let s = parse("the judge-trust settings", settings)?;
    let judge = opt_str(&s, "judge")
        .ok_or_else(|| PyValueError::new_err("judge_trust needs `judge` (a backend spec)"))?;
    let rubric = opt_str(&s, "rubric").map(PathBuf::from);
    let kind = match opt_str(&s, "judge_kind") {
        Some(k) => sparring::engine::judge::JudgeKind::parse(&k).ok_or_else(|| {
            PyValueError::new_err(format!("`judge_kind` `{k}` is not `score` or `decision`"))
        })?,
        None => sparring::engine::judge::JudgeKind::Score,
    };
    let timeout = secs(&s, "timeout")?.unwrap_or(GradeSettings::default().timeout);
    let mut options = sparring::engine::trust::TrustOptions::default();
    if let Some(seed) = opt_u64(&s, "seed") {
        options.seed = seed;
    }
    if let Some(n) = opt_u64(&s, "probe_rows") {
        options.probe_rows = usize::try_from(n).unwrap_or(usize::MAX);
    }
    let runtime = runtime()?;
    let report = py
        .detach(move || {
            runtime.block_on(async move {
                let judge = start_judge(
                    &judge,
                    rubric.as_deref(),
                    None,
                    kind,
                    timeout,
                    &Env::process(),
                )
                .await?;
                options.same_model = judge_same_model(&rows, &judge.model());
                Ok::<_, sparring::Error>(
                    sparring::engine::trust::judge_trust(&judge, &rows, &options).await,
                )
            })
        })
        .map_err(|e| py_err(&e))?;
    encode(&report)
}

/// The cut settings the Python layer names (`sparring select`'s flags).
fn cut_settings(rows_file: &str, s: &Value) -> PyResult<CutSettings> {
    let mask = match opt_str(s, "mask") {
        Some(m) => Some(training::parse_mask(&m).map_err(|e| py_err(&e))?),
        None => None,
    };
    let usize_of = |k: &str| opt_u64(s, k).map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    Ok(CutSettings {
        rows: PathBuf::from(rows_file),
        system_prompt: opt_str(s, "system_prompt"),
        tools: opt_str(s, "tools_file").map(PathBuf::from),
        holdout: opt_str(s, "holdout").map(PathBuf::from),
        traces: s
            .get("traces")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(Value::as_str)
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default(),
        decontam_threshold: opt_f64(s, "threshold"),
        seed: opt_u64(s, "seed"),
        mask,
        per_task: usize_of("per_task"),
        keep_user_left: s
            .get("keep_user_left")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        margin: opt_f64(s, "margin"),
        max_length_ratio: opt_f64(s, "max_length_ratio"),
        max_pairs_per_task: usize_of("max_pairs_per_task"),
        min_pass_rate: opt_f64(s, "min_pass_rate"),
        max_pass_rate: opt_f64(s, "max_pass_rate"),
        holdout_fraction: opt_f64(s, "holdout_fraction"),
        inline_trace: s.get("inline_trace").and_then(Value::as_bool) == Some(true),
    })
}

/// `sparring select`: one training cut after decontamination (`cut` null:
/// decontamination alone). Returns the rows kept, the cut's report, the
/// pairs of a pair cut, and what decontamination dropped.
#[pyfunction]
fn cut(rows_file: &str, cut: Option<&str>, settings: &str) -> PyResult<String> {
    let s = parse("the cut settings", settings)?;
    let prepared = training::prepare(&cut_settings(rows_file, &s)?).map_err(|e| py_err(&e))?;
    let decontam = prepared.decontam.clone();
    let Some(name) = cut else {
        return encode(&json!({"rows": prepared.rows, "decontam": decontam}));
    };
    let cut: Cut = name.parse().map_err(|e: sparring::Error| py_err(&e))?;
    let selection = training::select(&prepared, cut);
    encode(&json!({
        "rows": selection.rows,
        "report": selection.report,
        "pairs": selection.pairs,
        "decontam": decontam,
    }))
}

/// `sparring export`: a cut written in a trainer's format (`format` null:
/// every format, as a dataset folder).
#[pyfunction]
fn export(rows_file: &str, format: Option<&str>, out: &str, settings: &str) -> PyResult<String> {
    let s = parse("the export settings", settings)?;
    let format = match format {
        Some(f) => Some(
            f.parse::<training::Format>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        ),
        None => None,
    };
    let prepared = training::prepare(&cut_settings(rows_file, &s)?).map_err(|e| py_err(&e))?;
    let reports = training::export(prepared, format, Path::new(out)).map_err(|e| py_err(&e))?;
    encode(&reports)
}

/// `sparring coverage-gap`: the tools and policy rules no ask touches.
#[pyfunction]
// PyO3 extracts a Python list as an owned Vec; it cannot lend a slice.
#[allow(clippy::needless_pass_by_value)]
fn coverage_gap(request: &str, asks: Vec<String>) -> PyResult<String> {
    let request = parse("the coverage-gap request", request)?;
    let spec = spec_of(&request)?;
    let gap = sparring::engine::axes::coverage_gap(&spec, &asks)
        .map_err(|e| PyValueError::new_err(format!("`{}`: {e}", spec.name)))?;
    encode(&json!({
        "asks": asks.len(),
        "tools": gap.tools,
        "rules": gap.rules.iter().map(|r| json!({"id": r.id, "text": r.text})).collect::<Vec<_>>(),
    }))
}
