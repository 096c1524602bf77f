//! The flags of `sparring simulate`, each parsed straight into its option's
//! checked type (`sparring::types::values`): a bad value is refused by clap
//! with the option's own message.

use sparring::types::values::{
    AvgTurns, Budget, Concurrency, Effort, MaxTokens, Phrasings, Repeats, Retries, Rpm, Runs,
    Share, Situations, Temperature, TimeBudget, Timeout, TopLogprobs, TopP, Turns,
};
use sparring::types::{Mode, OptionsPatch, Patience, RepeatPolicy, WorldPatch};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The spec: YAML, JSON or TOML
    pub(crate) spec: PathBuf,
    /// The agent: `openai:MODEL[@URL]`, `anthropic:MODEL`, or a command speaking agent
    /// protocol v1 (`command:` prefix optional); `#key=VAR` names the key's variable
    #[arg(long, visible_alias = "backend")]
    pub(crate) agent: Option<String>,
    /// Directory for rows.jsonl, run.json and run.log [default: runs/<spec name>]
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Rows to produce at most [default: every situation, `repeats` times]
    #[arg(long)]
    pub(crate) budget: Option<Budget>,
    /// Run seed [default: 0]
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Rollouts in flight at once [default: 32]
    #[arg(long)]
    pub(crate) concurrency: Option<Concurrency>,
    /// Agent replies to the person before a conversation is cut off [default: 10]
    #[arg(long)]
    pub(crate) max_turns: Option<Turns>,
    /// Mean turn cap, from 1 to --max-turns: each rollout draws its own cap, 1 +
    /// Binomial(max_turns - 1, p), averaging this; rows record it as `turn_cap`
    /// [default: every cap is --max-turns]
    #[arg(long)]
    pub(crate) avg_turns: Option<AvgTurns>,
    /// Agent requests within one turn before it is cut off [default: 8]
    #[arg(long)]
    pub(crate) max_tool_steps: Option<Turns>,
    /// Seconds the agent may take per request (per HTTP attempt for models) [default: 60]
    #[arg(long, visible_alias = "timeout")]
    pub(crate) agent_timeout: Option<Timeout>,
    /// Wordings written per situation (n) [default: 1]
    #[arg(long)]
    pub(crate) phrasings: Option<Phrasings>,
    /// Share of situations from the hard tiers: ambiguous, boundary, adversarial [default: 0.4]
    #[arg(long)]
    pub(crate) hard_share: Option<Share>,
    /// Effort of the covering-array optimiser, a multiple of its default [default: 0.1]
    #[arg(long)]
    pub(crate) grid_effort: Option<Effort>,
    /// Model agents: sampling temperature, 0 to 2 [default: the server's]
    #[arg(long)]
    pub(crate) temperature: Option<Temperature>,
    /// Model agents: nucleus sampling mass, above 0 and at most 1 [default: the server's]
    #[arg(long)]
    pub(crate) top_p: Option<TopP>,
    /// Model agents: most tokens per reply [default: the server's; 1024 for anthropic:]
    #[arg(long)]
    pub(crate) max_tokens: Option<MaxTokens>,
    /// Model agents: record per-token log-probabilities on every agent turn
    #[arg(long)]
    pub(crate) logprobs: bool,
    /// Model agents: alternatives per token with --logprobs, 0 to 20
    #[arg(long)]
    pub(crate) top_logprobs: Option<TopLogprobs>,
    /// Model agents: send each request a `seed` derived from this and the request id [default: no seed]
    #[arg(long)]
    pub(crate) sampling_seed: Option<u64>,
    /// Model agents: requests started per minute at most [default: no limit]
    #[arg(long)]
    pub(crate) rpm: Option<Rpm>,
    /// Model agents: retries of a failed request (429, 5xx, timeouts) [default: 5]
    #[arg(long)]
    pub(crate) retries: Option<Retries>,
    /// Who writes the asks: `template` (offline), or a backend spec
    /// (`openai:MODEL[@URL]`, `anthropic:MODEL`, `command:CMD`) [default: template]
    #[arg(long, visible_alias = "simulator")]
    pub(crate) writer: Option<String>,
    /// Who plays the person: `template` (offline), or a backend spec [default: template]
    #[arg(long, visible_alias = "user-model")]
    pub(crate) person: Option<String>,
    /// Rollouts per ask (k) [default: 1; the mode's]
    #[arg(long, visible_alias = "rollouts-per-request")]
    pub(crate) repeats: Option<Repeats>,
    /// A preset of counts: eval (k=1), rl (k=8, successive), sft (n=3, k=2); explicit options win
    #[arg(long)]
    pub(crate) mode: Option<Mode>,
    /// fixed (every ask gets all k) or successive (stop repeating an ask once its first
    /// rollouts agree) [default: fixed; the mode's]
    #[arg(long)]
    pub(crate) repeat_policy: Option<RepeatPolicy>,
    /// Distinct situations (N) at most; the run stops when each has all its rollouts
    #[arg(long)]
    pub(crate) situations: Option<Situations>,
    /// Keep drawing new situations (fresh worlds) past the covering array; needs
    /// --budget or --situations
    #[arg(long, visible_alias = "unique")]
    pub(crate) unique_situations: bool,
    /// Seconds the run may take; no rollout starts after it (in-flight ones finish)
    #[arg(long)]
    pub(crate) time_budget: Option<TimeBudget>,
    /// Results independent of completion order at any concurrency: rollouts go in
    /// batches, each finished before the next is chosen
    #[arg(long)]
    pub(crate) reproducible: bool,
    /// Re-run the tasks of a previous run (its directory or rows file) on their own
    /// situations, faults and world seeds; nothing new is generated
    #[arg(long, value_name = "PREV")]
    pub(crate) tasks: Option<PathBuf>,
    /// Run the task set this many times (replays, `lineage.eval_run` 0..R-1);
    /// --budget is per run [default: 1]
    #[arg(long)]
    pub(crate) runs: Option<Runs>,
    /// How long the person keeps answering: normal, short or endless [default: normal]
    #[arg(long)]
    pub(crate) patience: Option<Patience>,
    /// Grade each row with the conduct checks
    #[arg(long)]
    pub(crate) grade: bool,
    /// The world's fault rate, 0 to 1: `options.world.fault_rate` [default: 0]
    #[arg(long)]
    pub(crate) fault_rate: Option<Share>,
    /// Pin a situation axis over the spec's `axes`: `AXIS=V1,V2` (repeatable) or a
    /// JSON object as `axes` takes it (docs/axes.md)
    #[arg(long, value_name = "AXIS=VALUES")]
    pub(crate) dimensions: Vec<String>,
    /// Answer tool calls with your own world: a command speaking JSON lines, or
    /// an http(s):// URL taking one POST per call (docs/world.md); faults still
    /// come from the sandbox first
    #[arg(long)]
    pub(crate) execute: Option<String>,
    /// Continue the run in --out after a crash or Ctrl-C: its rows are kept (a
    /// torn last line is repaired) and no task runs again beyond its repeats
    #[arg(long)]
    pub(crate) resume: bool,
    /// Replace the run already in --out (a finished one, or the rows of one that
    /// did not finish); its files are replaced only once the new agent started
    #[arg(long)]
    pub(crate) force: bool,
    /// No progress bar and no summary line
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

impl Args {
    /// The options this command line sets, over the spec's: each flag is
    /// already its option's checked type.
    pub(crate) fn patch(&self) -> OptionsPatch {
        OptionsPatch {
            agent: self.agent.clone(),
            out: self.out.as_ref().map(|p| p.display().to_string()),
            budget: self.budget,
            seed: self.seed,
            concurrency: self.concurrency,
            max_turns: self.max_turns,
            avg_turns: self.avg_turns,
            repeats: self.repeats,
            grade: self.grade.then_some(true),
            patience: self.patience,
            max_tool_steps: self.max_tool_steps,
            agent_timeout: self.agent_timeout,
            phrasings: self.phrasings,
            hard_share: self.hard_share,
            grid_effort: self.grid_effort,
            world: self.fault_rate.map(|rate| {
                let mut world = serde_json::Map::new();
                world.insert("fault_rate".to_owned(), rate.get().into());
                WorldPatch(world)
            }),
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            logprobs: self.logprobs.then_some(true),
            top_logprobs: self.top_logprobs,
            sampling_seed: self.sampling_seed,
            rpm: self.rpm,
            retries: self.retries,
            writer: self.writer.clone(),
            person: self.person.clone(),
            mode: self.mode,
            repeat_policy: self.repeat_policy,
            situations: self.situations,
            unique_situations: self.unique_situations.then_some(true),
            time_budget: self.time_budget,
            reproducible: self.reproducible.then_some(true),
            runs: self.runs,
        }
    }

    /// `--dimensions` as the JSON object `axes` takes, when given: each
    /// `AXIS=V1,V2` pins one axis; a JSON object is merged in as it is.
    pub(crate) fn dimensions(&self) -> Result<Option<serde_json::Value>, crate::UsageError> {
        if self.dimensions.is_empty() {
            return Ok(None);
        }
        let mut out = serde_json::Map::new();
        for d in &self.dimensions {
            if d.trim_start().starts_with('{') {
                let value: serde_json::Value = serde_json::from_str(d).map_err(|e| {
                    crate::UsageError(format!("--dimensions `{d}` is not a JSON object: {e}"))
                })?;
                if let serde_json::Value::Object(map) = value {
                    out.extend(map);
                }
                continue;
            }
            let Some((axis, values)) = d.split_once('=') else {
                return Err(crate::UsageError(format!(
                    "--dimensions `{d}`: expected AXIS=V1,V2 (e.g. stance=hurried,manipulative)"
                )));
            };
            let values: Vec<serde_json::Value> = values
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| v.to_owned().into())
                .collect();
            out.insert(axis.trim().to_owned(), values.into());
        }
        Ok(Some(serde_json::Value::Object(out)))
    }
}
