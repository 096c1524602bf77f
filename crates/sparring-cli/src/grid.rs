//! `sparring grid` and `sparring coverage-gap`.

use crate::UsageError;
use anyhow::Result;
use serde_json::json;
use sparring::engine::axes::{AXIS_NAMES, Axes, coverage_gap};
use sparring::grid::{CoveringArray, Effort, GridProblem, parse_levels};
use sparring::io::spec_file::load_spec;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A spec: print its situation axes, their values and the covering array
    spec: Option<PathBuf>,
    /// Raw mode: levels of a pairwise array to build, a comma list of `v` or `v^k` (`3^13,2^2`)
    #[arg(long, conflicts_with = "spec")]
    levels: Option<String>,
    /// Seed of the generator
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Post-optimisation effort, a multiple of the generator's default
    #[arg(long, default_value = "1")]
    effort: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let effort: Effort = args
        .effort
        .parse()
        .map_err(|e: sparring::grid::GridError| UsageError(format!("--effort: {e}")))?;
    match (&args.spec, &args.levels) {
        (None, Some(levels)) => raw(levels, args.seed, effort, args.json),
        (Some(spec), None) => spec_grid(spec, args.seed, effort, args.json),
        _ => Err(UsageError(
            "give a SPEC or --levels (`sparring grid --levels 3^13,2^2`)".to_owned(),
        )
        .into()),
    }
}

fn raw(levels: &str, seed: u64, effort: Effort, json: bool) -> Result<ExitCode> {
    let levels = parse_levels(levels).map_err(|e| UsageError(format!("--levels: {e}")))?;
    let started = Instant::now();
    let array =
        CoveringArray::generate(&GridProblem::new(levels).with_seed(seed).with_effort(effort))
            .map_err(|e| UsageError(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    if json {
        outln!(
            "{}",
            json!({"n_rows": array.n_rows(), "rows": array.rows, "pairs_planned": array.pairs_planned,
                   "pairs_covered": array.pairs_covered, "lower_bound": array.lower_bound, "seconds": seconds})
        );
    } else {
        for row in &array.rows {
            outln!(
                "{}",
                row.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        eprintln!(
            "{} rows (lower bound {}), {} of {} pairs covered, {seconds:.3} s",
            array.n_rows(),
            array.lower_bound,
            array.pairs_covered,
            array.pairs_planned
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn spec_grid(path: &std::path::Path, seed: u64, effort: Effort, json: bool) -> Result<ExitCode> {
    let spec = load_spec(path)?;
    let axes = Axes::of(&spec).map_err(|e| UsageError(format!("`{}`: {e}", path.display())))?;
    let array = axes
        .grid(seed, effort)
        .map_err(|e| UsageError(format!("`{}`: {e}", path.display())))?;
    if json {
        let values: serde_json::Map<String, serde_json::Value> = AXIS_NAMES
            .iter()
            .zip(&axes.values)
            .map(|(n, v)| ((*n).to_owned(), json!(v)))
            .collect();
        let forbidden: Vec<_> = axes
            .forbidden
            .iter()
            .map(|((a, x), (b, y))| {
                json!([
                    [AXIS_NAMES[*a], axes.values[*a][*x]],
                    [AXIS_NAMES[*b], axes.values[*b][*y]]
                ])
            })
            .collect();
        let rows: Vec<_> = array
            .rows
            .iter()
            .map(|r| {
                json!(
                    axes.named(r)
                        .into_iter()
                        .collect::<std::collections::BTreeMap<_, _>>()
                )
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "axes": values,
                "sampled": {"tool_condition": axes.conditions},
                "rules": axes.rules.iter().map(|r| json!({"id": r.id, "text": r.text})).collect::<Vec<_>>(),
                "forbidden": forbidden,
                "n_rows": array.n_rows(),
                "lower_bound": array.lower_bound,
                "pairs_planned": array.pairs_planned,
                "pairs_covered": array.pairs_covered,
                "rows": rows,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    for (name, values) in AXIS_NAMES.iter().zip(&axes.values) {
        outln!("{name} ({}): {}", values.len(), values.join(", "));
    }
    outln!(
        "tool_condition (sampled at fault_rate, not covered): {}",
        axes.conditions
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !spec.axes.pins.is_empty() {
        let pinned: Vec<&str> = spec.axes.pins.keys().map(String::as_str).collect();
        outln!("pinned by the spec: {}", pinned.join(", "));
    }
    if !axes.rules.is_empty() {
        outln!("\nrules read from the system prompt:");
        for r in &axes.rules {
            outln!("  {}: {}", r.id, r.text);
        }
    }
    outln!(
        "\n{} forbidden pairs ({} given by the spec); {} rows cover all {} allowed pairs (lower bound {})",
        axes.forbidden.len(),
        spec.axes.forbid.len(),
        array.n_rows(),
        array.pairs_planned,
        array.lower_bound
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, clap::Args)]
pub(crate) struct GapArgs {
    /// The spec
    spec: PathBuf,
    /// A text file with one ask per line
    asks: PathBuf,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn gap(args: &GapArgs) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    let text = std::fs::read_to_string(&args.asks).map_err(|e| {
        UsageError(format!(
            "cannot read `{}`: {}",
            args.asks.display(),
            e.to_string().to_lowercase()
        ))
    })?;
    let asks: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    if asks.is_empty() {
        return Err(
            UsageError(format!("`{}`: no asks (one per line)", args.asks.display())).into(),
        );
    }
    let gap = coverage_gap(&spec, &asks)
        .map_err(|e| UsageError(format!("`{}`: {e}", args.spec.display())))?;
    if args.json {
        outln!(
            "{}",
            json!({"asks": asks.len(), "tools": gap.tools,
                   "rules": gap.rules.iter().map(|r| json!({"id": r.id, "text": r.text})).collect::<Vec<_>>()})
        );
    } else {
        outln!("{} asks", asks.len());
        outln!(
            "tools no ask touches: {}",
            if gap.tools.is_empty() {
                "none".to_owned()
            } else {
                gap.tools.join(", ")
            }
        );
        if gap.rules.is_empty() {
            outln!("rules no ask touches: none");
        } else {
            outln!("rules no ask touches:");
            for r in &gap.rules {
                outln!("  {}: {}", r.id, r.text);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
