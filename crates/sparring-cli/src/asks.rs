//! `sparring asks`: what the writer makes of a spec.

use anyhow::{Context as _, Result};
use serde_json::json;
use sparring::Env;
use sparring::types::OptionsPatch;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec
    spec: PathBuf,
    /// Situations to print (N): the covering array's first, then unique ones past
    /// it, as many as asked
    #[arg(long, visible_alias = "n", default_value = "20")]
    situations: sparring::types::values::Situations,
    /// Wordings per situation [default: the spec's, else 1]
    #[arg(long)]
    phrasings: Option<sparring::types::values::Phrasings>,
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
    let spec = sparring::load_spec(&args.spec)?;
    let options = OptionsPatch {
        phrasings: args.phrasings,
        seed: args.seed,
        writer: args.writer.clone(),
        ..OptionsPatch::default()
    };
    let asks = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(sparring::preview::asks(
            &spec,
            options,
            usize::try_from(args.situations.get()).unwrap_or(usize::MAX),
            &Env::process(),
        ))?;
    for w in &asks.warnings {
        eprintln!("warning: {w}");
    }
    for s in &asks.situations {
        if args.json {
            outln!(
                "{}",
                json!({"situation": {"axes": s.axes, "tier": s.tier}, "persona": s.persona,
                       "writer": s.writer, "phrasings": s.phrasings})
            );
        } else {
            let axes: Vec<String> = s.axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
            outln!(
                "[{}] {} (style {})",
                s.tier,
                axes.join(" "),
                s.persona.style
            );
            for ask in &s.phrasings {
                outln!("  - {ask}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
