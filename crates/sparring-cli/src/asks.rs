//! `sparring asks`: what the writer makes of a spec.

use anyhow::{Context as _, Result};
use serde_json::json;
use sparring_engine::plan::plan;
use sparring_io::command_agent::CommandAgent;
use sparring_io::spec_file::load_spec;
use sparring_llm::{BackendSpec, Limiter, Sampling};
use sparring_types::{Agent, OptionsPatch, defaults};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec
    spec: PathBuf,
    /// Situations to print
    #[arg(long, default_value_t = 20)]
    n: usize,
    /// Wordings per situation [default: the spec's, else 1]
    #[arg(long)]
    phrasings: Option<u32>,
    /// Seed [default: the spec's, else 0]
    #[arg(long)]
    seed: Option<u64>,
    /// One JSON object per situation
    #[arg(long)]
    json: bool,
    /// Who writes: `template` (offline) or a backend spec (`openai:MODEL[@URL]`,
    /// `anthropic:MODEL`, `command:CMD`) [default: the spec's, else template]
    #[arg(long)]
    writer: Option<String>,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    let patch = OptionsPatch {
        phrasings: args.phrasings,
        seed: args.seed,
        writer: args.writer.clone(),
        ..OptionsPatch::default()
    };
    let patch = patch.over(spec.options.clone());
    let writer_spec = crate::simulate::role_spec("writer", patch.writer.as_deref())?;
    let options = patch.resolve();
    let mut p = plan(&spec, &options).map_err(|e| crate::UsageError(e.to_string()))?;
    if let Some(backend) = writer_spec {
        write_with_model(&mut p, &spec, &backend, &options, args.n)?;
    }
    // Group wordings by situation, in plan order.
    let mut order: Vec<Vec<usize>> = Vec::new();
    let mut by_row: std::collections::BTreeMap<Vec<usize>, Vec<&sparring_engine::plan::Task>> =
        std::collections::BTreeMap::new();
    for t in &p.tasks {
        if !by_row.contains_key(&t.grid_row) {
            order.push(t.grid_row.clone());
        }
        by_row.entry(t.grid_row.clone()).or_default().push(t);
    }
    for row in order.iter().take(args.n) {
        let tasks = &by_row[row];
        let first = tasks[0];
        if args.json {
            println!(
                "{}",
                json!({"situation": {"axes": first.situation.axes, "tier": first.situation.tier},
                       "persona": first.persona,
                       // Who wrote the phrasings (a seed's first one is the seed).
                       "writer": tasks.iter().map(|t| &t.writer).find(|w| w.as_str() != defaults::TEMPLATE).unwrap_or(&first.writer),
                       "phrasings": tasks.iter().map(|t| &t.ask).collect::<Vec<_>>()})
            );
        } else {
            let axes: Vec<String> = first
                .situation
                .axes
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            println!(
                "[{}] {} (style {})",
                first.situation.tier,
                axes.join(" "),
                first.persona.style
            );
            for t in tasks {
                println!("  - {}", t.ask);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Rewrites the first `n` situations' asks with a model writer; situations
/// the model fails keep the template's asks, with a warning on stderr.
fn write_with_model(
    plan: &mut sparring_engine::plan::Plan,
    spec: &sparring_types::Spec,
    backend: &BackendSpec,
    options: &sparring_types::SimulateOptions,
    n: usize,
) -> Result<()> {
    let timeout = Duration::from_secs_f64(options.agent_timeout);
    let limiter = Limiter::new(options.concurrency, options.rpm);
    let model = crate::simulate::build_model(
        "writer",
        backend,
        Sampling::default(),
        timeout,
        options.retries,
        &limiter,
    )?;
    // The tasks of the first `n` situations.
    let mut rows = BTreeSet::new();
    let mut needed = BTreeSet::new();
    for (i, t) in plan.tasks.iter().enumerate() {
        if rows.len() < n || rows.contains(&t.grid_row) {
            rows.insert(t.grid_row.clone());
            needed.insert(i);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(async {
        let writer: Arc<dyn Agent> = match (model, backend) {
            (Some(m), _) => m,
            (None, BackendSpec::Command(command)) => {
                Arc::new(CommandAgent::start_as("writer", command, timeout, None).await?)
            }
            (None, BackendSpec::Model(e)) => {
                return Err(crate::UsageError(format!(
                    "the model backend `{}` could not be built",
                    e.describe()
                ))
                .into());
            }
        };
        anyhow::Ok(
            sparring_engine::model_people::write_asks(
                plan,
                spec,
                writer.as_ref(),
                &needed,
                &BTreeMap::new(),
                defaults::CONCURRENCY,
                "asks",
            )
            .await,
        )
    })?;
    if report.fallbacks > 0 {
        eprintln!(
            "warning: generator_fallback: {} situation(s) show the template's asks because the model writer failed",
            report.fallbacks
        );
        for e in &report.errors {
            eprintln!("  {e}");
        }
    }
    Ok(())
}
