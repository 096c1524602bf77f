//! What a run would play, without playing it: the situations and asks the
//! writer makes of a spec (`sparring asks`).

use crate::backends::{self, Env, ModelSettings};
use crate::error::{Error, Result};
use serde::Serialize;
use sparring_engine::plan::{Task, draw_unique, plan};
use sparring_llm::{Limiter, Sampling};
use sparring_types::{OptionsPatch, Persona, Spec, defaults};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// One situation with its wordings.
#[derive(Clone, Debug, Serialize)]
pub struct SituationAsks {
    /// Axis → value.
    pub axes: BTreeMap<String, String>,
    /// Difficulty tier.
    pub tier: sparring_types::Tier,
    /// Who the person is.
    pub persona: Persona,
    /// Who wrote the wordings (`template`, or the model writer).
    pub writer: String,
    /// The wordings, in order.
    pub phrasings: Vec<String>,
}

/// The first situations of a spec's plan.
#[derive(Clone, Debug, Serialize)]
pub struct Asks {
    /// The situations, in plan order.
    pub situations: Vec<SituationAsks>,
    /// Things to read before the asks (a model writer that fell back, fewer
    /// situations than asked for).
    pub warnings: Vec<String>,
}

/// The first `n` situations the writer makes of `spec` with `options` over
/// its own: the covering array's, then, past them, unique situations (fresh
/// worlds on the array's rows, as `unique_situations` draws them in a run)
/// until there are `n`; a warning says why when there cannot be `n`. A
/// model writer (`options.writer`) rewrites them, and the situations it
/// fails keep the template's asks, with a warning.
///
/// # Errors
///
/// Bad options, a spec that admits no plan, or a writer that cannot start.
pub async fn asks(spec: &Spec, options: OptionsPatch, n: usize, env: &Env) -> Result<Asks> {
    let patch = options.over(spec.options.clone());
    let writer_spec = backends::role_spec("writer", patch.writer.as_deref())?;
    let mut options = patch.resolve();
    // The preview shows situations, not a run: the whole array, whatever
    // budget the spec sets (a plan writes only what a budget reaches).
    options.budget = None;
    let mut p = plan(spec, &options).map_err(|e| Error::input(e.to_string()))?;
    let mut warnings = Vec::new();
    let planned = situations_of(&p.tasks);
    if n > planned {
        // Past the array: unique situations, drawn as a run draws them.
        options.unique_situations = true;
        options.situations = Some(n as u64);
        p = plan(spec, &options).map_err(|e| Error::input(e.to_string()))?;
        let (more, _) = draw_unique(spec, &options, &p, 0, p.unique_left, p.tasks.len())
            .map_err(|e| Error::input(e.to_string()))?;
        p.tasks.extend(more);
        let drawn = situations_of(&p.tasks);
        if drawn < n {
            warnings.push(format!(
                "{n} situations asked for, {drawn} shown: the spec's axes give no situation to draw unique ones from"
            ));
        }
    }
    // What the plan could not do as the spec says (a tool that can act on no
    // record, a `several` no owner has), as a run says it.
    let mut warnings: Vec<String> = p.warnings.iter().cloned().chain(warnings).collect();
    if let Some(backend) = writer_spec {
        let timeout = Duration::from_secs_f64(options.agent_timeout);
        let limiter = Limiter::new(options.concurrency, options.rpm);
        let settings = ModelSettings {
            timeout,
            retries: options.retries,
            limiter: &limiter,
            env,
        };
        let model = backends::build_model("writer", &backend, Sampling::default(), &settings)?;
        let writer = backends::start("writer", &backend, model, timeout, None).await?;
        // The tasks of the first `n` situations.
        let mut shown = BTreeSet::new();
        let mut needed = BTreeSet::new();
        for (i, t) in p.tasks.iter().enumerate() {
            if shown.len() < n || shown.contains(&t.scenario_id) {
                shown.insert(t.scenario_id.clone());
                needed.insert(i);
            }
        }
        let report = sparring_engine::model_people::write_asks(
            &mut p,
            spec,
            writer.as_ref(),
            &needed,
            &BTreeMap::new(),
            defaults::CONCURRENCY,
            "asks",
        )
        .await;
        if report.fallbacks > 0 {
            let mut w = format!(
                "generator_fallback: {} situation(s) show the template's asks because the model writer failed",
                report.fallbacks
            );
            for e in &report.errors {
                w.push_str("\n  ");
                w.push_str(e);
            }
            warnings.push(w);
        }
    }
    // Wordings grouped by situation, in plan order.
    let mut order: Vec<&str> = Vec::new();
    let mut by_row: BTreeMap<&str, Vec<&Task>> = BTreeMap::new();
    for t in &p.tasks {
        if !by_row.contains_key(t.scenario_id.as_str()) {
            order.push(&t.scenario_id);
        }
        by_row.entry(&t.scenario_id).or_default().push(t);
    }
    let situations = order
        .iter()
        .take(n)
        .filter_map(|row| {
            let tasks = by_row.get(*row)?;
            let first = tasks.first()?;
            Some(SituationAsks {
                axes: first.situation.axes.clone(),
                tier: first.situation.tier,
                persona: first.persona.clone(),
                // Who wrote the phrasings (a seed's first one is the seed).
                writer: tasks
                    .iter()
                    .map(|t| &t.writer)
                    .find(|w| w.as_str() != defaults::TEMPLATE)
                    .unwrap_or(&first.writer)
                    .clone(),
                phrasings: tasks.iter().map(|t| t.ask.clone()).collect(),
            })
        })
        .collect();
    Ok(Asks {
        situations,
        warnings,
    })
}

/// Distinct situations among tasks.
fn situations_of(tasks: &[Task]) -> usize {
    tasks
        .iter()
        .map(|t| t.scenario_id.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}
