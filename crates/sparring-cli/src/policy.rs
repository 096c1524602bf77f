//! `sparring policy SPEC [--json]`: the rules read from a spec's policy,
//! with their ids, classes, tools and sentences.

use crate::UsageError;
use anyhow::Result;
use sparring::engine::policy::Policy;
use sparring::load_spec;
use sparring::types::RuleClass;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec whose policy to read (its `policy_rules` corrections applied)
    spec: PathBuf,
    /// Print JSON: `{"spec", "rules": [{id, class, check, text, tools, reads, detail}], "classes"}`
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode> {
    let spec = load_spec(&args.spec)?;
    let policy = Policy::of_spec(&spec)
        .map_err(|e| UsageError(format!("`{}`: {e}", args.spec.display())))?;
    let mut classes: BTreeMap<&str, usize> = BTreeMap::new();
    for r in policy.rules() {
        *classes.entry(r.class.as_str()).or_default() += 1;
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&policy.to_json(&spec.name))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let counts: Vec<String> = RuleClass::ALL
        .iter()
        .filter_map(|c| classes.get(c.as_str()).map(|n| format!("{n} {c}")))
        .collect();
    outln!(
        "{} rules read from the policy of `{}`: {}",
        policy.rules().len(),
        spec.name,
        if counts.is_empty() {
            "none".to_owned()
        } else {
            counts.join(", ")
        }
    );
    for r in policy.rules() {
        let check = r.class.check().map_or_else(
            || match r.class {
                RuleClass::Judge => "the judge".to_owned(),
                _ => "the world".to_owned(),
            },
            str::to_owned,
        );
        let tools = if r.tools.is_empty() {
            "no tool in particular".to_owned()
        } else {
            r.tools.join(", ")
        };
        outln!("\n{}  [{}, checked by {check}]", r.id, r.class);
        outln!("  tools: {tools}");
        for detail in r.details() {
            outln!("  reads: {detail}");
        }
        outln!("  {}", r.text);
    }
    Ok(ExitCode::SUCCESS)
}
