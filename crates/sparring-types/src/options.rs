//! Run options as given ([`OptionsPatch`]) and as resolved
//! ([`SimulateOptions`]).
//!
//! Each option is declared once, as a field of [`OptionsPatch`]: its name
//! (and the seeds' aliases) by serde, its range by its value type
//! (`crate::values`), which parses the same way from a spec's `options`
//! and from a command line (clap converts a flag through the type's
//! `FromStr`). `docs/options.md` documents each; `defaults.rs` names each
//! default.

use crate::defaults;
use crate::values::{
    AvgTurns, Budget, Concurrency, Effort, MaxTokens, Mode, OptionError, Patience, Phrasings,
    RepeatPolicy, Repeats, Retries, Rpm, Runs, Share, Situations, Temperature, TimeBudget, Timeout,
    TopLogprobs, TopP, Turns,
};
use crate::world_options::{WorldOptions, WorldPatch};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Options as one source gives them (a spec's `options`, a command line, a
/// library caller): every field optional, every value checked by its type.
/// [`OptionsPatch::over`] layers one source on another.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsPatch {
    /// The agent as a backend spec or command line.
    #[serde(alias = "backend", skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Output directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out: Option<String>,
    /// Rows to produce at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Run seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Rollouts in flight at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Concurrency>,
    /// Agent replies to the person before the conversation is cut off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<Turns>,
    /// Mean of the per-rollout turn caps, from 1 to `max_turns`; unset caps
    /// every conversation at `max_turns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_turns: Option<AvgTurns>,
    /// Agent requests within one turn before it is cut off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tool_steps: Option<Turns>,
    /// Rollouts per ask (k).
    #[serde(
        alias = "rollouts_per_request",
        alias = "rollouts_per_prompt",
        skip_serializing_if = "Option::is_none"
    )]
    pub repeats: Option<Repeats>,
    /// Grade rows with the conduct checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grade: Option<bool>,
    /// `normal`, `short` or `endless`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patience: Option<Patience>,
    /// Seconds an agent may take per request (per HTTP attempt for models).
    #[serde(alias = "timeout", skip_serializing_if = "Option::is_none")]
    pub agent_timeout: Option<Timeout>,
    /// Wordings written per situation (n).
    #[serde(
        alias = "n",
        alias = "requests_per_situation",
        skip_serializing_if = "Option::is_none"
    )]
    pub phrasings: Option<Phrasings>,
    /// Share of situations from the hard tiers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hard_share: Option<Share>,
    /// Covering-array post-optimisation effort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid_effort: Option<Effort>,
    /// The sandbox world's numbers (`options.world`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<WorldPatch>,
    /// Model backends: sampling temperature, 0 to 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Temperature>,
    /// Model backends: nucleus sampling mass, above 0 and at most 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<TopP>,
    /// Model backends: most tokens per reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<MaxTokens>,
    /// Model backends: ask for per-token log-probabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// Model backends: alternatives per token with `logprobs`, 0 to 20.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<TopLogprobs>,
    /// Model backends: send a `seed` derived from this and the request id;
    /// unset sends none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling_seed: Option<u64>,
    /// Model backends: requests started per minute at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm: Option<Rpm>,
    /// Model backends: retries after the first attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<Retries>,
    /// Who writes the asks: `template` or a backend spec.
    #[serde(alias = "simulator", skip_serializing_if = "Option::is_none")]
    pub writer: Option<String>,
    /// Who plays the person: `template` or a backend spec.
    #[serde(alias = "user_model", skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// A preset of counts: `eval`, `rl` or `sft`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// `fixed` (every ask gets all k) or `successive` (stop early on
    /// unanimous asks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_policy: Option<RepeatPolicy>,
    /// Distinct situations (N) to run at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub situations: Option<Situations>,
    /// Keep drawing new situations past the covering array.
    #[serde(alias = "unique", skip_serializing_if = "Option::is_none")]
    pub unique_situations: Option<bool>,
    /// Seconds the run may take before it stops scheduling rollouts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_budget: Option<TimeBudget>,
    /// Batches that finish before the next is chosen, so results do not
    /// depend on completion order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducible: Option<bool>,
    /// Times the task set is run in one call (replays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Runs>,
}

/// The names `options` accepts, with the seeds' aliases: read off
/// [`OptionsPatch`]'s serde declaration, never listed by hand.
pub fn option_names() -> Vec<&'static str> {
    let mut names = crate::introspect::field_names::<OptionsPatch>();
    for (alias, _) in OPTION_ALIASES.iter().chain(NESTED_ALIASES) {
        if !names.contains(alias) {
            names.push(alias);
        }
    }
    names
}

/// Top-level names of nested options, as the seeds use them: name → where
/// it lives. `options.fault_rate` is `options.world.fault_rate`.
pub(crate) const NESTED_ALIASES: &[(&str, &str)] = &[("fault_rate", "world.fault_rate")];

/// Other names options answer to, as the seed documents them: alias → name.
/// Serde reads them (`#[serde(alias)]`); this list only feeds the
/// did-you-mean of an unknown key, and a test keeps the two equal.
pub(crate) const OPTION_ALIASES: &[(&str, &str)] = &[
    ("n", "phrasings"),
    ("requests_per_situation", "phrasings"),
    ("rollouts_per_request", "repeats"),
    ("rollouts_per_prompt", "repeats"),
    ("unique", "unique_situations"),
    ("user_model", "person"),
    ("simulator", "writer"),
    ("backend", "agent"),
    ("timeout", "agent_timeout"),
];

/// The preset of a mode: what it sets, below anything given explicitly.
pub fn mode_preset(mode: Mode) -> OptionsPatch {
    use defaults::modes;
    let (repeats, policy, phrasings) = match mode {
        Mode::Rl => (modes::RL_REPEATS, modes::RL_POLICY, modes::RL_PHRASINGS),
        Mode::Sft => (modes::SFT_REPEATS, modes::SFT_POLICY, modes::SFT_PHRASINGS),
        Mode::Eval => (
            modes::EVAL_REPEATS,
            modes::EVAL_POLICY,
            modes::EVAL_PHRASINGS,
        ),
    };
    OptionsPatch {
        repeats: Repeats::new(repeats).ok(),
        repeat_policy: Some(policy),
        phrasings: Phrasings::new(phrasings).ok(),
        ..OptionsPatch::default()
    }
}

/// Checks a value against a closed list, naming the closest on a miss:
/// ``unknown mode `evl`; did you mean `eval`? (expected `eval`, `rl` or `sft`)``.
pub fn check_choice(what: &str, value: &str, choices: &[&str]) -> Result<(), OptionError> {
    if choices.contains(&value) {
        Ok(())
    } else {
        Err(OptionError::unknown_choice(what, value, choices))
    }
}

impl OptionsPatch {
    /// Parses a spec's `options` object. Errors are `(pointer suffix,
    /// message)`: the first key at fault, with the value type's message; an
    /// unknown key names the closest known one.
    pub fn from_value(value: &Value) -> Result<Self, (String, String)> {
        let Some(map) = value.as_object() else {
            return Err((String::new(), "must be an object".to_owned()));
        };
        let value = &nest_aliases(map)?;
        let Some(map) = value.as_object() else {
            return Err((String::new(), "must be an object".to_owned()));
        };
        let names = option_names();
        for (key, v) in map {
            if !names.contains(&key.as_str()) {
                let hint = closest(key, &names)
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err((format!("/{key}"), format!("unknown option `{key}`{hint}")));
            }
            if key == "world" {
                WorldPatch::from_value(v).map_err(|(p, m)| (format!("/world{p}"), m))?;
                continue;
            }
            if matches!(
                key.as_str(),
                "writer" | "simulator" | "person" | "user_model"
            ) && v.as_str().is_none_or(|s| s.trim().is_empty())
            {
                return Err((
                    format!("/{key}"),
                    "must be `template` or a backend spec".to_owned(),
                ));
            }
            // One key at a time, so the message names the key at fault.
            let mut one = Map::new();
            one.insert(key.clone(), v.clone());
            serde_json::from_value::<Self>(Value::Object(one))
                .map_err(|e| (format!("/{key}"), value_message(&e, v)))?;
        }
        serde_json::from_value(value.clone()).map_err(|e| (String::new(), e.to_string()))
    }

    /// Checks every value set the way a spec's `options` are checked
    /// ([`OptionsPatch::from_value`]). The value types already hold their
    /// ranges; this also checks `writer`, `person` and `world`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let value = serde_json::to_value(self)
            .map_err(|e| (String::new(), format!("cannot encode the options: {e}")))?;
        Self::from_value(&value).map(|_| ())
    }

    /// `self` where it is set, else `base` (`world` field by field).
    #[must_use]
    pub fn over(self, base: Self) -> Self {
        let world = match (self.world.clone(), base.world) {
            (Some(a), Some(b)) => Some(a.over(b)),
            (a, b) => a.or(b),
        };
        let base = Self {
            world: None,
            ..base
        };
        let (Ok(Value::Object(mut merged)), Ok(Value::Object(top))) =
            (serde_json::to_value(&base), serde_json::to_value(&self))
        else {
            return self;
        };
        merged.extend(top);
        let mut out: Self = serde_json::from_value(Value::Object(merged)).unwrap_or(self);
        out.world = world;
        out
    }

    /// The options with every unset one at its default: a mode's preset
    /// under explicit options, then the named defaults.
    pub fn resolve(&self) -> SimulateOptions {
        let this = match self.mode {
            Some(mode) => self.clone().over(mode_preset(mode)),
            None => self.clone(),
        };
        this.resolve_defaults()
    }

    fn resolve_defaults(self) -> SimulateOptions {
        SimulateOptions {
            budget: self.budget.map(Budget::get),
            seed: self.seed.unwrap_or(defaults::SEED),
            concurrency: self
                .concurrency
                .map_or(defaults::CONCURRENCY, Concurrency::get),
            max_turns: self.max_turns.map_or(defaults::MAX_TURNS, Turns::get),
            avg_turns: self.avg_turns.map(AvgTurns::get),
            max_tool_steps: self
                .max_tool_steps
                .map_or(defaults::MAX_TOOL_STEPS, Turns::get),
            repeats: self.repeats.map_or(defaults::REPEATS, Repeats::get),
            grade: self.grade.unwrap_or(defaults::GRADE),
            patience: self.patience.unwrap_or(defaults::PATIENCE),
            agent_timeout: self
                .agent_timeout
                .map_or(defaults::AGENT_TIMEOUT_SECS, Timeout::get),
            phrasings: self.phrasings.map_or(defaults::PHRASINGS, Phrasings::get),
            hard_share: self.hard_share.map_or(defaults::HARD_SHARE, Share::get),
            grid_effort: self.grid_effort.map_or(defaults::GRID_EFFORT, Effort::get),
            world: self
                .world
                .as_ref()
                .map(WorldPatch::resolve)
                .unwrap_or_default(),
            temperature: self.temperature.map(Temperature::get),
            top_p: self.top_p.map(TopP::get),
            max_tokens: self.max_tokens.map(MaxTokens::get),
            logprobs: self.logprobs.unwrap_or(defaults::LOGPROBS),
            top_logprobs: self.top_logprobs.map(TopLogprobs::get),
            sampling_seed: self.sampling_seed,
            rpm: self.rpm.map(Rpm::get),
            retries: self.retries.map_or(defaults::RETRIES, Retries::get),
            writer: self.writer.unwrap_or_else(|| defaults::TEMPLATE.to_owned()),
            person: self.person.unwrap_or_else(|| defaults::TEMPLATE.to_owned()),
            mode: self.mode,
            repeat_policy: self.repeat_policy.unwrap_or(defaults::REPEAT_POLICY),
            situations: self.situations.map(Situations::get),
            unique_situations: self
                .unique_situations
                .unwrap_or(defaults::UNIQUE_SITUATIONS),
            time_budget: self.time_budget.map(TimeBudget::get),
            reproducible: self.reproducible.unwrap_or(defaults::REPRODUCIBLE),
            runs: self.runs.map_or(defaults::RUNS, Runs::get),
        }
    }

    /// Checks what no single option can: `top_logprobs` needs `logprobs`;
    /// `avg_turns` lies from 1 to `max_turns` (its default when unset);
    /// `unique_situations` needs something to end it.
    pub fn check(&self) -> Result<(), OptionError> {
        if self.unique_situations == Some(true)
            && self.budget.is_none()
            && self.situations.is_none()
        {
            return Err(OptionError::EndlessUniqueSituations);
        }
        if self.top_logprobs.is_some() && self.logprobs != Some(true) {
            return Err(OptionError::TopLogprobsWithoutLogprobs);
        }
        if let Some(avg) = self.avg_turns {
            check_avg_turns(
                avg.get(),
                self.max_turns.map_or(defaults::MAX_TURNS, Turns::get),
            )?;
        }
        Ok(())
    }

    /// The model-backend options that are set, by name, for a warning when
    /// the agent is not a model (which ignores them).
    pub fn model_options_set(&self) -> Vec<&'static str> {
        [
            ("temperature", self.temperature.is_some()),
            ("top_p", self.top_p.is_some()),
            ("max_tokens", self.max_tokens.is_some()),
            ("logprobs", self.logprobs == Some(true)),
            ("top_logprobs", self.top_logprobs.is_some()),
            ("sampling_seed", self.sampling_seed.is_some()),
            ("rpm", self.rpm.is_some()),
            ("retries", self.retries.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}

/// `options` with the top-level names of nested options moved where they
/// live (`fault_rate` into `world`); giving both is an error.
fn nest_aliases(map: &Map<String, Value>) -> Result<Value, (String, String)> {
    let mut out = map.clone();
    for (alias, path) in NESTED_ALIASES {
        let Some(v) = out.remove(*alias) else {
            continue;
        };
        let Some((outer, inner)) = path.split_once('.') else {
            continue;
        };
        let nested = out
            .entry((*outer).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(nested) = nested.as_object_mut() else {
            return Err((format!("/{outer}"), "must be an object".to_owned()));
        };
        if nested.contains_key(inner) {
            return Err((
                format!("/{alias}"),
                format!("`{alias}` is `{path}`; give one of them, not both"),
            ));
        }
        let mut one = Map::new();
        one.insert(inner.to_owned(), v.clone());
        WorldPatch::from_value(&Value::Object(one)).map_err(|(_, m)| (format!("/{alias}"), m))?;
        nested.insert(inner.to_owned(), v);
    }
    Ok(Value::Object(out))
}

/// The message of a value serde refused: the value type's own message when
/// it gave one, else what was expected.
fn value_message(e: &serde_json::Error, v: &Value) -> String {
    let text = e.to_string();
    // serde_json appends ` at line L column C` to messages of its own.
    let text = text
        .split(" at line ")
        .next()
        .unwrap_or(text.as_str())
        .to_owned();
    if text.starts_with("invalid value") && text.ends_with("expected u64") {
        return format!("must be an integer >= 0, found {v}");
    }
    if text.starts_with("invalid type") {
        let expected = text.split("expected ").nth(1).unwrap_or("another type");
        let expected = match expected {
            "a boolean" => "true or false",
            "a string" => "a string",
            "u64" => "an integer >= 0",
            other => other,
        };
        return format!("must be {expected}, found {}", crate::spec::kind(v));
    }
    text
}

/// Checks `avg_turns` against `max_turns` as resolved: from 1 to
/// `max_turns`, naming both values when it is not.
pub fn check_avg_turns(avg_turns: f64, max_turns: u32) -> Result<(), OptionError> {
    if avg_turns >= 1.0 && avg_turns <= f64::from(max_turns) {
        Ok(())
    } else {
        Err(OptionError::AvgTurns {
            avg_turns,
            max_turns,
        })
    }
}

/// Options of a simulation, resolved: what `run.json` records.
///
/// The agent and the output directory are wiring, not options of the
/// simulation, and are recorded elsewhere in the summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimulateOptions {
    /// Rows to produce at most; `None` runs every situation `repeats` times.
    pub budget: Option<u64>,
    /// Run seed.
    pub seed: u64,
    /// Rollouts in flight at once.
    pub concurrency: usize,
    /// Agent replies to the person before the conversation is cut off.
    pub max_turns: u32,
    /// When set, every rollout draws its own turn cap, `1 +
    /// Binomial(max_turns - 1, p)` with `p = (avg_turns - 1) / (max_turns -
    /// 1)`, so the caps average `avg_turns`; unset caps every conversation
    /// at `max_turns`. Left out of `run.json` (and so of the run id) when
    /// unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_turns: Option<f64>,
    /// Agent requests within one turn before it is cut off.
    pub max_tool_steps: u32,
    /// Rollouts per ask (k).
    pub repeats: u32,
    /// Whether rows are graded with the conduct checks.
    pub grade: bool,
    /// `normal`, `short` or `endless`.
    pub patience: Patience,
    /// Seconds an agent may take per request (per HTTP attempt for models).
    pub agent_timeout: f64,
    /// Wordings written per situation (n).
    pub phrasings: u32,
    /// Share of situations from the hard tiers.
    pub hard_share: f64,
    /// Covering-array post-optimisation effort.
    pub grid_effort: f64,
    /// The sandbox world's numbers.
    #[serde(default)]
    pub world: WorldOptions,
    /// Model backends: temperature sent, if any.
    pub temperature: Option<f64>,
    /// Model backends: `top_p` sent, if any.
    pub top_p: Option<f64>,
    /// Model backends: `max_tokens` sent, if any.
    pub max_tokens: Option<u32>,
    /// Model backends: per-token log-probabilities asked for.
    pub logprobs: bool,
    /// Model backends: alternatives per token with `logprobs`.
    pub top_logprobs: Option<u32>,
    /// Model backends: the seed each request's `seed` derives from; unset
    /// sends none. Left out of `run.json` (and so of the run id) when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_seed: Option<u64>,
    /// Model backends: requests started per minute at most.
    pub rpm: Option<u32>,
    /// Model backends: retries after the first attempt.
    pub retries: u32,
    /// Who writes the asks: `template`, or a backend spec as recorded
    /// (without credentials).
    pub writer: String,
    /// Who plays the person: `template`, or a backend spec as recorded.
    pub person: String,
    /// The mode preset applied under the explicit options, if any.
    pub mode: Option<Mode>,
    /// `fixed` or `successive`.
    pub repeat_policy: RepeatPolicy,
    /// Distinct situations (N) to run at most; `None` runs the whole grid.
    pub situations: Option<u64>,
    /// Keep drawing new situations past the covering array.
    pub unique_situations: bool,
    /// Seconds the run may take before it stops scheduling rollouts.
    pub time_budget: Option<f64>,
    /// Batches finish before the next is chosen.
    pub reproducible: bool,
    /// Times the task set is run in one call.
    pub runs: u32,
}

impl Default for SimulateOptions {
    fn default() -> Self {
        OptionsPatch::default().resolve()
    }
}

/// The candidate closest to `word` by edit distance, when it is close enough
/// to be a plausible misspelling.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let len = word.chars().count();
    candidates
        .iter()
        // The distance is at least the difference in length: a word that
        // much longer (a megabyte-long key) is no misspelling, and its
        // distance would take seconds to compute.
        .filter(|c| {
            let n = c.chars().count();
            len.abs_diff(n) <= (n.max(len) / 3).max(1)
        })
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_option_names_the_closest() {
        let err = OptionsPatch::from_value(&json!({"budgt": 3})).unwrap_err();
        assert_eq!(err.0, "/budgt");
        assert!(err.1.contains("did you mean `budget`"), "{}", err.1);
        let err = OptionsPatch::from_value(&json!({"zzzzzz": 3})).unwrap_err();
        assert!(!err.1.contains("did you mean"), "{}", err.1);
    }

    #[test]
    fn every_field_and_alias_is_a_name() {
        let names = option_names();
        // Every field the resolved options record is a name `options` takes.
        let resolved = serde_json::to_value(OptionsPatch::default().resolve()).unwrap();
        for key in resolved.as_object().unwrap().keys() {
            assert!(names.contains(&key.as_str()), "{key}");
        }
        // Every alias is read by serde as its option.
        for (alias, name) in OPTION_ALIASES {
            let value = match *name {
                "unique_situations" => json!(true),
                "person" | "writer" | "agent" => json!("openai:m"),
                "agent_timeout" => json!(2.0),
                _ => json!(2),
            };
            let patch = OptionsPatch::from_value(&json!({ *alias: value.clone() })).unwrap();
            let back = serde_json::to_value(&patch).unwrap();
            assert_eq!(back[*name], value, "{alias} -> {name}");
        }
    }

    #[test]
    fn the_seeds_names_are_the_options() {
        let p = OptionsPatch::from_value(&json!({
            "simulator": "template", "backend": "openai:m", "timeout": 5, "fault_rate": 0.25,
        }))
        .unwrap();
        assert_eq!(p.writer.as_deref(), Some("template"));
        assert_eq!(p.agent.as_deref(), Some("openai:m"));
        assert_eq!(p.agent_timeout.map(Timeout::get), Some(5.0));
        let resolved = p.resolve();
        assert!((resolved.world.fault_rate - 0.25).abs() < 1e-12);
        // A top-level `fault_rate` keeps the other world options.
        let p = OptionsPatch::from_value(&json!({"fault_rate": 0.5, "world": {"page_size": 3}}))
            .unwrap()
            .resolve();
        assert_eq!(p.world.page_size, 3);
        for (bad, at, needle) in [
            (json!({"fault_rate": 2}), "/fault_rate", "from 0 to 1"),
            (
                json!({"fault_rate": 0.1, "world": {"fault_rate": 0.2}}),
                "/fault_rate",
                "not both",
            ),
            (json!({"simulator": ""}), "/simulator", "backend spec"),
            (
                json!({"fault_rat": 0.1}),
                "/fault_rat",
                "did you mean `fault_rate`",
            ),
            (json!({"timeot": 3}), "/timeot", "did you mean `timeout`"),
        ] {
            let (pointer, message) = OptionsPatch::from_value(&bad).unwrap_err();
            assert_eq!(pointer, at, "{bad}");
            assert!(message.contains(needle), "{bad}: {message}");
        }
        assert!(option_names().contains(&"fault_rate"));
    }

    #[test]
    fn user_model_is_the_person() {
        let p = OptionsPatch::from_value(&json!({"user_model": "openai:m", "writer": "template"}))
            .unwrap();
        assert_eq!(p.person.as_deref(), Some("openai:m"));
        assert_eq!(p.writer.as_deref(), Some("template"));
    }

    #[test]
    fn later_source_wins() {
        let spec = OptionsPatch::from_value(
            &json!({"budget": 3, "seed": 9, "world": {"page_size": 5, "fault_rate": 0.2}}),
        )
        .unwrap();
        let cli =
            OptionsPatch::from_value(&json!({"budget": 5, "world": {"page_size": 7}})).unwrap();
        let resolved = cli.over(spec).resolve();
        assert_eq!(resolved.budget, Some(5));
        assert_eq!(resolved.seed, 9);
        assert_eq!(resolved.concurrency, defaults::CONCURRENCY);
        assert_eq!(resolved.world.page_size, 7);
        assert!((resolved.world.fault_rate - 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_mode_sits_under_explicit_options() {
        let rl = OptionsPatch::from_value(&json!({"mode": "rl"}))
            .unwrap()
            .resolve();
        assert_eq!(rl.repeats, defaults::modes::RL_REPEATS);
        assert_eq!(rl.repeat_policy, RepeatPolicy::Successive);
        let rl3 = OptionsPatch::from_value(&json!({"mode": "rl", "repeats": 3}))
            .unwrap()
            .resolve();
        assert_eq!(rl3.repeats, 3);
        let err = OptionsPatch::from_value(&json!({"mode": "evl"})).unwrap_err();
        assert_eq!(err.0, "/mode");
        assert!(err.1.contains("did you mean `eval`"), "{}", err.1);
    }

    #[test]
    fn wrong_values_are_refused_with_the_range() {
        for (bad, needle) in [
            (json!({"budget": 0}), "from 1 to"),
            (json!({"budget": 1e11}), "from 1 to 1000000000"),
            (json!({"max_turns": 1e11}), "from 1 to 1000"),
            (json!({"grade": "yes"}), "true or false"),
            (json!({"patience": "long"}), "unknown patience `long`"),
            (json!({"temperature": 2.5}), "from 0 to 2"),
            (json!({"temperature": "hot"}), "from 0 to 2"),
            (json!({"top_p": 0}), "above 0"),
            (json!({"top_p": 1.5}), "above 0"),
            (json!({"max_tokens": 0}), "from 1"),
            (json!({"top_logprobs": 21}), "from 0 to 20"),
            (json!({"rpm": 0}), "from 1"),
            (json!({"retries": -1}), "from 0 to 100"),
            (json!({"logprobs": 1}), "true or false"),
            (json!({"agent_timeout": 1e300}), "seconds"),
            (json!({"agent_timeout": 0}), "seconds"),
            (json!({"time_budget": 1e20}), "seconds"),
            (json!({"phrasings": 10_000_000}), "from 1 to 100"),
            (json!({"writer": ""}), "backend spec"),
            (json!({"seed": -3}), "integer >= 0"),
        ] {
            let err = OptionsPatch::from_value(&bad).unwrap_err();
            let key = bad.as_object().unwrap().keys().next().unwrap().clone();
            assert_eq!(err.0, format!("/{key}"), "{bad}");
            assert!(err.1.contains(needle), "{bad}: {}", err.1);
            assert!(!err.1.contains(" at line "), "{bad}: {}", err.1);
        }
        let ok = OptionsPatch::from_value(
            &json!({"temperature": 0.2, "top_p": 0.9, "max_tokens": 64, "logprobs": true,
                    "top_logprobs": 3, "rpm": 600, "retries": 0}),
        )
        .unwrap();
        assert!(ok.check().is_ok());
        assert!(ok.validate().is_ok());
        let resolved = ok.resolve();
        assert_eq!(resolved.retries, 0);
        assert_eq!(resolved.top_logprobs, Some(3));
        let lonely = OptionsPatch::from_value(&json!({"top_logprobs": 3})).unwrap();
        let err = lonely.check().unwrap_err();
        assert_eq!(err, OptionError::TopLogprobsWithoutLogprobs);
        assert!(err.to_string().contains("needs `logprobs`"));
    }

    #[test]
    fn a_command_line_value_parses_like_a_spec_value() {
        use std::str::FromStr as _;
        assert_eq!(
            Budget::from_str("0").unwrap_err(),
            OptionError::Integer {
                min: 1,
                max: 1_000_000_000
            }
        );
        assert_eq!(
            Budget::from_str("0").unwrap_err().to_string(),
            "must be an integer from 1 to 1000000000"
        );
        assert_eq!(
            OptionsPatch::from_value(&json!({"budget": 0}))
                .unwrap_err()
                .1,
            Budget::from_str("0").unwrap_err().to_string()
        );
        assert_eq!(
            Timeout::from_str("0").unwrap_err().to_string(),
            "must be a number of seconds above 0 and at most 86400"
        );
        assert_eq!(
            Share::from_str("2").unwrap_err().to_string(),
            "must be a number from 0 to 1"
        );
        assert!(Timeout::from_str("inf").is_err());
        assert!(Timeout::from_str("1e20").is_err());
        assert!(Timeout::from_str("NaN").is_err());
        assert!((Timeout::from_str("2.5").unwrap().get() - 2.5).abs() < 1e-12);
        assert_eq!(Mode::from_str("sft").unwrap(), Mode::Sft);
        assert_eq!(
            Mode::from_str("evl").unwrap_err().to_string(),
            "unknown mode `evl`; did you mean `eval`? (expected `eval`, `rl` or `sft`)"
        );
        assert_eq!(
            check_choice("kind", "x", &["only"])
                .unwrap_err()
                .to_string(),
            "unknown kind `x` (expected `only`)"
        );
    }

    #[test]
    fn avg_turns_is_a_number_from_1_to_max_turns() {
        for bad in [json!({"avg_turns": "three"}), json!({"avg_turns": true})] {
            let err = OptionsPatch::from_value(&bad).unwrap_err();
            assert_eq!(err.0, "/avg_turns", "{bad}");
            assert!(err.1.contains("number"), "{}", err.1);
        }
        // Out of range against `max_turns` as resolved (default 10): both
        // values named.
        for (options, avg, max) in [
            (json!({"avg_turns": 10.5}), "10.5", "10"),
            (json!({"avg_turns": 4, "max_turns": 3}), "4", "3"),
        ] {
            let patch = OptionsPatch::from_value(&options).unwrap();
            let err = patch.check().unwrap_err().to_string();
            assert!(
                err.contains(&format!("`avg_turns` {avg} "))
                    && err.contains(&format!("`max_turns` {max}")),
                "{options}: {err}"
            );
        }
        for bad in [json!({"avg_turns": 0.5}), json!({"avg_turns": -2})] {
            assert!(OptionsPatch::from_value(&bad).is_err(), "{bad}");
        }
        for (options, avg) in [
            (json!({"avg_turns": 3.5}), 3.5),
            (json!({"avg_turns": 1}), 1.0),
            (json!({"avg_turns": 10}), 10.0),
            (json!({"avg_turns": 2.25, "max_turns": 3}), 2.25),
        ] {
            let patch = OptionsPatch::from_value(&options).unwrap();
            assert!(patch.check().is_ok(), "{options}");
            assert_eq!(patch.resolve().avg_turns, Some(avg));
        }
        // A command line's avg_turns is checked against the spec's max_turns.
        let spec = OptionsPatch::from_value(&json!({"max_turns": 4})).unwrap();
        let cli = OptionsPatch::from_value(&json!({"avg_turns": 5})).unwrap();
        assert!(
            cli.over(spec)
                .check()
                .unwrap_err()
                .to_string()
                .contains("`max_turns` 4")
        );
        assert!(check_avg_turns(f64::NAN, 10).is_err());
    }

    #[test]
    fn unset_avg_turns_leaves_the_recorded_options_as_they_were() {
        let unset = serde_json::to_value(OptionsPatch::default().resolve()).unwrap();
        assert!(unset.get("avg_turns").is_none(), "{unset}");
        assert!(unset.get("max_turns").is_some());
        let set = OptionsPatch::from_value(&json!({"avg_turns": 2.5}))
            .unwrap()
            .resolve();
        let value = serde_json::to_value(&set).unwrap();
        assert_eq!(value["avg_turns"], 2.5);
        let back: SimulateOptions = serde_json::from_value(value).unwrap();
        assert_eq!(back, set);
        let back: SimulateOptions = serde_json::from_value(unset).unwrap();
        assert_eq!(back.avg_turns, None);
    }
}
