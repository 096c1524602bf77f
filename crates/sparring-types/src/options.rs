//! Run options as given and as resolved.

use crate::defaults;
use crate::world_options::{WorldOptions, WorldPatch};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The names `options` accepts, in the order they are documented.
pub(crate) const OPTION_NAMES: &[&str] = &[
    "agent",
    "out",
    "budget",
    "seed",
    "concurrency",
    "max_turns",
    "avg_turns",
    "max_tool_steps",
    "repeats",
    "grade",
    "patience",
    "agent_timeout",
    "phrasings",
    "hard_share",
    "grid_effort",
    "world",
    "temperature",
    "top_p",
    "max_tokens",
    "logprobs",
    "top_logprobs",
    "sampling_seed",
    "rpm",
    "retries",
    "writer",
    "person",
    "mode",
    "repeat_policy",
    "situations",
    "unique_situations",
    "time_budget",
    "reproducible",
    "runs",
];

/// Other names options answer to, as the seed documents them: alias → name.
pub(crate) const OPTION_ALIASES: &[(&str, &str)] = &[
    ("n", "phrasings"),
    ("requests_per_situation", "phrasings"),
    ("rollouts_per_request", "repeats"),
    ("rollouts_per_prompt", "repeats"),
    ("unique", "unique_situations"),
    ("user_model", "person"),
];

/// The run modes and what each sets (docs/options.md, "Modes").
pub const MODES: &[&str] = &["eval", "rl", "sft"];

/// The repeat policies.
pub const REPEAT_POLICIES: &[&str] = &["fixed", "successive"];

/// Options as one source gives them (a spec's `options`, a command line):
/// every field optional. [`OptionsPatch::over`] layers one source on another.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OptionsPatch {
    /// The agent as a backend spec or command line.
    pub agent: Option<String>,
    /// Output directory.
    pub out: Option<String>,
    /// Rows to produce at most.
    pub budget: Option<u64>,
    /// Run seed.
    pub seed: Option<u64>,
    /// Rollouts in flight at once.
    pub concurrency: Option<usize>,
    /// Agent replies to the person before the conversation is cut off.
    pub max_turns: Option<u32>,
    /// Mean of the per-rollout turn caps, from 1 to `max_turns`; unset caps
    /// every conversation at `max_turns`.
    pub avg_turns: Option<f64>,
    /// Agent requests within one turn before it is cut off.
    pub max_tool_steps: Option<u32>,
    /// Rollouts per ask (k).
    pub repeats: Option<u32>,
    /// Grade rows with the conduct checks.
    pub grade: Option<bool>,
    /// `normal`, `short` or `endless`.
    pub patience: Option<String>,
    /// Seconds an agent may take per request (per HTTP attempt for models).
    pub agent_timeout: Option<f64>,
    /// Wordings written per situation (n).
    pub phrasings: Option<u32>,
    /// Share of situations from the hard tiers.
    pub hard_share: Option<f64>,
    /// Covering-array post-optimisation effort.
    pub grid_effort: Option<f64>,
    /// The sandbox world's numbers (`options.world`), as given.
    #[serde(default)]
    pub world: Option<WorldPatch>,
    /// Model backends: sampling temperature, 0 to 2.
    pub temperature: Option<f64>,
    /// Model backends: nucleus sampling mass, above 0 and at most 1.
    pub top_p: Option<f64>,
    /// Model backends: most tokens per reply.
    pub max_tokens: Option<u32>,
    /// Model backends: ask for per-token log-probabilities.
    pub logprobs: Option<bool>,
    /// Model backends: alternatives per token with `logprobs`, 0 to 20.
    pub top_logprobs: Option<u32>,
    /// Model backends: send a `seed` derived from this and the request id;
    /// unset sends none.
    pub sampling_seed: Option<u64>,
    /// Model backends: requests started per minute at most.
    pub rpm: Option<u32>,
    /// Model backends: retries after the first attempt.
    pub retries: Option<u32>,
    /// Who writes the asks: `template` or a backend spec.
    pub writer: Option<String>,
    /// Who plays the person: `template` or a backend spec.
    pub person: Option<String>,
    /// A preset of counts: `eval`, `rl` or `sft`.
    pub mode: Option<String>,
    /// `fixed` (every ask gets all k) or `successive` (stop early on
    /// unanimous asks).
    pub repeat_policy: Option<String>,
    /// Distinct situations (N) to run at most.
    pub situations: Option<u64>,
    /// Keep drawing new situations past the covering array.
    pub unique_situations: Option<bool>,
    /// Seconds the run may take before it stops scheduling rollouts.
    pub time_budget: Option<f64>,
    /// Batches that finish before the next is chosen, so results do not
    /// depend on completion order.
    pub reproducible: Option<bool>,
    /// Times the task set is run in one call (replays).
    pub runs: Option<u32>,
}

/// The preset of a mode: what it sets, below anything given explicitly.
pub fn mode_preset(mode: &str) -> OptionsPatch {
    use defaults::modes;
    let (repeats, policy, phrasings) = match mode {
        "rl" => (modes::RL_REPEATS, modes::RL_POLICY, modes::RL_PHRASINGS),
        "sft" => (modes::SFT_REPEATS, modes::SFT_POLICY, modes::SFT_PHRASINGS),
        _ => (
            modes::EVAL_REPEATS,
            modes::EVAL_POLICY,
            modes::EVAL_PHRASINGS,
        ),
    };
    OptionsPatch {
        repeats: Some(repeats),
        repeat_policy: Some(policy.to_owned()),
        phrasings: Some(phrasings),
        ..OptionsPatch::default()
    }
}

/// Checks a value against a closed list, naming the closest on a miss:
/// ``unknown mode `evl`; did you mean `eval`? (expected `eval`, `rl` or `sft`)``.
pub fn check_choice(what: &str, value: &str, choices: &[&str]) -> Result<(), String> {
    if choices.contains(&value) {
        return Ok(());
    }
    let hint = closest(value, choices)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    let list: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
    let expected = match list.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => list.join(""),
    };
    Err(format!(
        "unknown {what} `{value}`{hint} (expected {expected})"
    ))
}

impl OptionsPatch {
    /// Parses a spec's `options` object. Errors are `(pointer suffix,
    /// message)`; an unknown key names the closest known one.
    pub fn from_value(value: &Value) -> Result<Self, (String, String)> {
        let Some(map) = value.as_object() else {
            return Err((String::new(), "must be an object".to_owned()));
        };
        let mut patch = Self::default();
        for (key, v) in map {
            let at = |msg: &str| (format!("/{key}"), msg.to_owned());
            let name = OPTION_ALIASES
                .iter()
                .find(|(alias, _)| alias == key)
                .map_or(key.as_str(), |(_, name)| name);
            match name {
                "agent" => patch.agent = Some(string(v).ok_or_else(|| at("must be a string"))?),
                "writer" | "person" => {
                    let role = string(v)
                        .filter(|s| !s.trim().is_empty())
                        .ok_or_else(|| at("must be `template` or a backend spec"))?;
                    if key == "writer" {
                        patch.writer = Some(role);
                    } else {
                        patch.person = Some(role);
                    }
                }
                "out" => patch.out = Some(string(v).ok_or_else(|| at("must be a string"))?),
                "patience" => {
                    let p = string(v).ok_or_else(|| at("must be a string"))?;
                    check_patience(&p).map_err(|m| at(&m))?;
                    patch.patience = Some(p);
                }
                "budget" => patch.budget = Some(positive(v).ok_or_else(|| at(POSITIVE))?),
                "seed" => {
                    patch.seed = Some(v.as_u64().ok_or_else(|| at("must be an integer >= 0"))?);
                }
                "sampling_seed" => {
                    patch.sampling_seed =
                        Some(v.as_u64().ok_or_else(|| at("must be an integer >= 0"))?);
                }
                "concurrency" => {
                    patch.concurrency = Some(positive(v).ok_or_else(|| at(POSITIVE))? as usize);
                }
                "max_turns" => patch.max_turns = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                "avg_turns" => {
                    // The bounds (1 to `max_turns`) are checked by
                    // [`OptionsPatch::check`], once `max_turns` is known.
                    let avg = v
                        .as_f64()
                        .filter(|a| a.is_finite())
                        .ok_or_else(|| at("must be a number from 1 to `max_turns`"))?;
                    patch.avg_turns = Some(avg);
                }
                "max_tool_steps" => {
                    patch.max_tool_steps = Some(small(v).ok_or_else(|| at(POSITIVE))?);
                }
                "repeats" => patch.repeats = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                "grade" => {
                    patch.grade = Some(v.as_bool().ok_or_else(|| at("must be true or false"))?);
                }
                "phrasings" => patch.phrasings = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                "hard_share" => {
                    let share = v
                        .as_f64()
                        .filter(|s| (0.0..=1.0).contains(s))
                        .ok_or_else(|| at("must be a number from 0 to 1"))?;
                    patch.hard_share = Some(share);
                }
                "grid_effort" => {
                    let effort = v
                        .as_f64()
                        .filter(|s| (0.0..=1000.0).contains(s))
                        .ok_or_else(|| at("must be a number from 0 to 1000"))?;
                    patch.grid_effort = Some(effort);
                }
                "agent_timeout" => {
                    let secs = v
                        .as_f64()
                        .filter(|s| *s > 0.0)
                        .ok_or_else(|| at("must be a number of seconds > 0"))?;
                    patch.agent_timeout = Some(secs);
                }
                "world" => {
                    patch.world = Some(
                        WorldPatch::from_value(v).map_err(|(p, m)| (format!("/world{p}"), m))?,
                    );
                }
                "temperature" => {
                    let t = v.as_f64().ok_or_else(|| at(TEMPERATURE))?;
                    check_temperature(t).map_err(|m| at(&m))?;
                    patch.temperature = Some(t);
                }
                "top_p" => {
                    let p = v.as_f64().ok_or_else(|| at(TOP_P))?;
                    check_top_p(p).map_err(|m| at(&m))?;
                    patch.top_p = Some(p);
                }
                "max_tokens" => patch.max_tokens = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                "logprobs" => {
                    patch.logprobs = Some(v.as_bool().ok_or_else(|| at("must be true or false"))?);
                }
                "top_logprobs" => {
                    let k = v
                        .as_u64()
                        .and_then(|k| u32::try_from(k).ok())
                        .ok_or_else(|| at(TOP_LOGPROBS))?;
                    check_top_logprobs(k).map_err(|m| at(&m))?;
                    patch.top_logprobs = Some(k);
                }
                "rpm" => patch.rpm = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                "retries" => {
                    patch.retries = Some(
                        v.as_u64()
                            .and_then(|n| u32::try_from(n).ok())
                            .ok_or_else(|| at("must be an integer >= 0"))?,
                    );
                }
                "mode" => {
                    let m = string(v).ok_or_else(|| at("must be a string"))?;
                    check_choice("mode", &m, MODES).map_err(|e| at(&e))?;
                    patch.mode = Some(m);
                }
                "repeat_policy" => {
                    let p = string(v).ok_or_else(|| at("must be a string"))?;
                    check_choice("repeat policy", &p, REPEAT_POLICIES).map_err(|e| at(&e))?;
                    patch.repeat_policy = Some(p);
                }
                "situations" => patch.situations = Some(positive(v).ok_or_else(|| at(POSITIVE))?),
                "unique_situations" => {
                    patch.unique_situations =
                        Some(v.as_bool().ok_or_else(|| at("must be true or false"))?);
                }
                "time_budget" => {
                    let secs = v
                        .as_f64()
                        .filter(|s| *s > 0.0)
                        .ok_or_else(|| at("must be a number of seconds > 0"))?;
                    patch.time_budget = Some(secs);
                }
                "reproducible" => {
                    patch.reproducible =
                        Some(v.as_bool().ok_or_else(|| at("must be true or false"))?);
                }
                "runs" => patch.runs = Some(small(v).ok_or_else(|| at(POSITIVE))?),
                other => {
                    let names: Vec<&str> = OPTION_NAMES
                        .iter()
                        .copied()
                        .chain(OPTION_ALIASES.iter().map(|(a, _)| *a))
                        .collect();
                    let hint = closest(other, &names)
                        .map(|c| format!("; did you mean `{c}`?"))
                        .unwrap_or_default();
                    return Err((
                        format!("/{other}"),
                        format!("unknown option `{other}`{hint}"),
                    ));
                }
            }
        }
        Ok(patch)
    }

    /// `self` where it is set, else `base`.
    #[must_use]
    pub fn over(self, base: Self) -> Self {
        Self {
            agent: self.agent.or(base.agent),
            out: self.out.or(base.out),
            budget: self.budget.or(base.budget),
            seed: self.seed.or(base.seed),
            concurrency: self.concurrency.or(base.concurrency),
            max_turns: self.max_turns.or(base.max_turns),
            avg_turns: self.avg_turns.or(base.avg_turns),
            max_tool_steps: self.max_tool_steps.or(base.max_tool_steps),
            repeats: self.repeats.or(base.repeats),
            grade: self.grade.or(base.grade),
            patience: self.patience.or(base.patience),
            agent_timeout: self.agent_timeout.or(base.agent_timeout),
            phrasings: self.phrasings.or(base.phrasings),
            hard_share: self.hard_share.or(base.hard_share),
            grid_effort: self.grid_effort.or(base.grid_effort),
            world: match (self.world, base.world) {
                (Some(a), Some(b)) => Some(a.over(b)),
                (a, b) => a.or(b),
            },
            temperature: self.temperature.or(base.temperature),
            top_p: self.top_p.or(base.top_p),
            max_tokens: self.max_tokens.or(base.max_tokens),
            logprobs: self.logprobs.or(base.logprobs),
            top_logprobs: self.top_logprobs.or(base.top_logprobs),
            sampling_seed: self.sampling_seed.or(base.sampling_seed),
            rpm: self.rpm.or(base.rpm),
            retries: self.retries.or(base.retries),
            writer: self.writer.or(base.writer),
            person: self.person.or(base.person),
            mode: self.mode.or(base.mode),
            repeat_policy: self.repeat_policy.or(base.repeat_policy),
            situations: self.situations.or(base.situations),
            unique_situations: self.unique_situations.or(base.unique_situations),
            time_budget: self.time_budget.or(base.time_budget),
            reproducible: self.reproducible.or(base.reproducible),
            runs: self.runs.or(base.runs),
        }
    }

    /// Fills every unset field from the mode's preset, then with its default.
    pub fn resolve(self) -> SimulateOptions {
        let this = match self.mode.as_deref() {
            Some(mode) => self.clone().over(mode_preset(mode)),
            None => self,
        };
        this.resolve_defaults()
    }

    fn resolve_defaults(self) -> SimulateOptions {
        SimulateOptions {
            budget: self.budget,
            seed: self.seed.unwrap_or(defaults::SEED),
            concurrency: self.concurrency.unwrap_or(defaults::CONCURRENCY),
            max_turns: self.max_turns.unwrap_or(defaults::MAX_TURNS),
            avg_turns: self.avg_turns,
            max_tool_steps: self.max_tool_steps.unwrap_or(defaults::MAX_TOOL_STEPS),
            repeats: self.repeats.unwrap_or(defaults::REPEATS),
            grade: self.grade.unwrap_or(defaults::GRADE),
            patience: self
                .patience
                .unwrap_or_else(|| defaults::PATIENCE.to_owned()),
            agent_timeout: self.agent_timeout.unwrap_or(defaults::AGENT_TIMEOUT_SECS),
            phrasings: self.phrasings.unwrap_or(defaults::PHRASINGS),
            hard_share: self.hard_share.unwrap_or(defaults::HARD_SHARE),
            grid_effort: self.grid_effort.unwrap_or(defaults::GRID_EFFORT),
            world: self
                .world
                .as_ref()
                .map(WorldPatch::resolve)
                .unwrap_or_default(),
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            logprobs: self.logprobs.unwrap_or(defaults::LOGPROBS),
            top_logprobs: self.top_logprobs,
            sampling_seed: self.sampling_seed,
            rpm: self.rpm,
            retries: self.retries.unwrap_or(defaults::RETRIES),
            writer: self.writer.unwrap_or_else(|| defaults::TEMPLATE.to_owned()),
            person: self.person.unwrap_or_else(|| defaults::TEMPLATE.to_owned()),
            mode: self.mode,
            repeat_policy: self
                .repeat_policy
                .unwrap_or_else(|| defaults::REPEAT_POLICY.to_owned()),
            situations: self.situations,
            unique_situations: self
                .unique_situations
                .unwrap_or(defaults::UNIQUE_SITUATIONS),
            time_budget: self.time_budget,
            reproducible: self.reproducible.unwrap_or(defaults::REPRODUCIBLE),
            runs: self.runs.unwrap_or(defaults::RUNS),
        }
    }

    /// Checks what no single option can: `top_logprobs` needs `logprobs`;
    /// `avg_turns` lies from 1 to `max_turns` (its default when unset).
    pub fn check(&self) -> Result<(), String> {
        if self.unique_situations == Some(true)
            && self.budget.is_none()
            && self.situations.is_none()
        {
            return Err(
                "`unique_situations` keeps drawing new situations and needs `budget` or `situations` to end"
                    .to_owned(),
            );
        }
        if self.top_logprobs.is_some() && self.logprobs != Some(true) {
            return Err("`top_logprobs` needs `logprobs` set to true".to_owned());
        }
        if let Some(avg) = self.avg_turns {
            check_avg_turns(avg, self.max_turns.unwrap_or(defaults::MAX_TURNS))?;
        }
        Ok(())
    }

    /// The model-backend options that are set, by name, for a warning when
    /// the agent is a command (which ignores them).
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

const TEMPERATURE: &str = "must be a number from 0 to 2";
const TOP_P: &str = "must be a number above 0 and at most 1";
const TOP_LOGPROBS: &str = "must be an integer from 0 to 20";

/// Checks a temperature (0 to 2, as OpenAI-compatible servers accept).
pub fn check_temperature(t: f64) -> Result<(), String> {
    if t.is_finite() && (0.0..=2.0).contains(&t) {
        Ok(())
    } else {
        Err(TEMPERATURE.to_owned())
    }
}

/// Checks a `top_p`.
pub fn check_top_p(p: f64) -> Result<(), String> {
    if p.is_finite() && p > 0.0 && p <= 1.0 {
        Ok(())
    } else {
        Err(TOP_P.to_owned())
    }
}

/// Checks a `top_logprobs` (OpenAI accepts 0 to 20).
pub fn check_top_logprobs(k: u32) -> Result<(), String> {
    if k <= 20 {
        Ok(())
    } else {
        Err(TOP_LOGPROBS.to_owned())
    }
}

/// Checks `avg_turns` against `max_turns` as resolved: from 1 to
/// `max_turns`, naming both values when it is not.
pub fn check_avg_turns(avg_turns: f64, max_turns: u32) -> Result<(), String> {
    if avg_turns >= 1.0 && avg_turns <= f64::from(max_turns) {
        Ok(())
    } else {
        Err(format!(
            "`avg_turns` {avg_turns} must be from 1 to `max_turns` {max_turns}"
        ))
    }
}

const POSITIVE: &str = "must be an integer >= 1";

fn string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

fn positive(v: &Value) -> Option<u64> {
    v.as_u64().filter(|n| *n >= 1)
}

fn small(v: &Value) -> Option<u32> {
    positive(v).and_then(|n| u32::try_from(n).ok())
}

/// Checks a patience level.
pub(crate) fn check_patience(p: &str) -> Result<(), String> {
    if matches!(p, "normal" | "short" | "endless") {
        Ok(())
    } else {
        Err(format!(
            "unknown patience `{p}`; expected `normal`, `short` or `endless`"
        ))
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
    pub patience: String,
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
    pub mode: Option<String>,
    /// `fixed` or `successive`.
    pub repeat_policy: String,
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
    candidates
        .iter()
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
    fn user_model_is_the_person() {
        let p = OptionsPatch::from_value(&json!({"user_model": "openai:m", "writer": "template"}))
            .unwrap();
        assert_eq!(p.person.as_deref(), Some("openai:m"));
        assert_eq!(p.writer.as_deref(), Some("template"));
    }

    #[test]
    fn later_source_wins() {
        let spec = OptionsPatch::from_value(&json!({"budget": 3, "seed": 9})).unwrap();
        let cli = OptionsPatch {
            budget: Some(5),
            ..OptionsPatch::default()
        };
        let resolved = cli.over(spec).resolve();
        assert_eq!(resolved.budget, Some(5));
        assert_eq!(resolved.seed, 9);
        assert_eq!(resolved.concurrency, defaults::CONCURRENCY);
    }

    #[test]
    fn wrong_types_are_refused() {
        assert!(OptionsPatch::from_value(&json!({"budget": 0})).is_err());
        assert!(OptionsPatch::from_value(&json!({"grade": "yes"})).is_err());
        assert!(OptionsPatch::from_value(&json!({"patience": "long"})).is_err());
        for bad in [
            json!({"temperature": 2.5}),
            json!({"temperature": "hot"}),
            json!({"top_p": 0}),
            json!({"top_p": 1.5}),
            json!({"max_tokens": 0}),
            json!({"top_logprobs": 21}),
            json!({"rpm": 0}),
            json!({"retries": -1}),
            json!({"logprobs": 1}),
        ] {
            assert!(OptionsPatch::from_value(&bad).is_err(), "{bad}");
        }
        let ok = OptionsPatch::from_value(
            &json!({"temperature": 0.2, "top_p": 0.9, "max_tokens": 64, "logprobs": true,
                    "top_logprobs": 3, "rpm": 600, "retries": 0}),
        )
        .unwrap();
        assert!(ok.check().is_ok());
        let resolved = ok.resolve();
        assert_eq!(resolved.retries, 0);
        assert_eq!(resolved.top_logprobs, Some(3));
        let lonely = OptionsPatch::from_value(&json!({"top_logprobs": 3})).unwrap();
        assert!(lonely.check().unwrap_err().contains("needs `logprobs`"));
    }

    #[test]
    fn avg_turns_is_a_number_from_1_to_max_turns() {
        // Not a number: refused where it stands, naming it.
        for bad in [json!({"avg_turns": "three"}), json!({"avg_turns": true})] {
            let err = OptionsPatch::from_value(&bad).unwrap_err();
            assert_eq!(err.0, "/avg_turns", "{bad}");
            assert!(err.1.contains("number"), "{}", err.1);
        }
        // Out of range against `max_turns` as resolved (default 10): both
        // values named.
        for (options, avg, max) in [
            (json!({"avg_turns": 0.5}), "0.5", "10"),
            (json!({"avg_turns": 10.5}), "10.5", "10"),
            (json!({"avg_turns": 4, "max_turns": 3}), "4", "3"),
            (json!({"avg_turns": -2}), "-2", "10"),
        ] {
            let patch = OptionsPatch::from_value(&options).unwrap();
            let err = patch.check().unwrap_err();
            assert!(
                err.contains(&format!("`avg_turns` {avg} "))
                    && err.contains(&format!("`max_turns` {max}")),
                "{options}: {err}"
            );
        }
        // In range, fractional and at both ends.
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
        let cli = OptionsPatch {
            avg_turns: Some(5.0),
            ..OptionsPatch::default()
        };
        assert!(
            cli.over(spec)
                .check()
                .unwrap_err()
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
