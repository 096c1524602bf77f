//! sparring-select: which graded rows go into which training set, and why the
//! others do not; and decontamination ([`decontam`]), which keeps training rows
//! away from held-out rows and traces.
//!
//! Pure: rows come in as values; reading and writing files is `sparring-io`'s
//! job (`sparring_io::export` writes the trainers' formats).
//!
//! Each cut is a pure function over rows that returns what it kept and a
//! [`CutReport`]: rows in, items out, and one [`Exclusion`] per class of
//! what was left out, with the count and the rule that excluded it.
//!
//! - [`select_for_sft`]: per task (one prompt in one situation), the best
//!   `reward == 1` row; picks are spread across behaviour signatures.
//! - [`build_preference_pairs`]: DPO pairs within a task with a reward margin
//!   and matched lengths.
//! - [`select_for_rl`]: whole groups (every rollout of a task) whose pass rate
//!   lies in a band; a group is never split.
//! - [`build_reward_pairs`] and [`select_graded`]: every graded row, paired
//!   within a task (margin = reward difference) or unpaired.
//!
//! Ties are broken by draws from a seeded stream, so a cut is a function of
//! the rows and the seed alone, whatever the order of the input.

pub mod decontam;
pub mod defaults;

use serde::Serialize;
use sparring_types::seed::Stream;
use sparring_types::{EndedBy, Message, Role, Row};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// One class of exclusion: how many, of what, and the rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exclusion {
    /// How many were left out.
    pub count: usize,
    /// What `count` counts: `rows`, `pairs` or `groups`.
    pub unit: &'static str,
    /// The rule that left them out, as a sentence.
    pub why: String,
}

/// What a cut (or an export) took in, gave out, and left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CutReport {
    /// The cut: `sft`, `dpo`, `rl`, `reward_pairs`, `graded`.
    pub cut: String,
    /// Rows given to the cut.
    pub rows_in: usize,
    /// Distinct tasks among them.
    pub tasks_in: usize,
    /// Distinct rows used by what the cut kept.
    pub rows_out: usize,
    /// Items kept (rows, pairs or groups).
    pub items_out: usize,
    /// What an item is: `rows`, `pairs` or `groups`.
    pub item: &'static str,
    /// Exclusion class → count and rule. Classes with a zero count are
    /// omitted.
    pub excluded: BTreeMap<String, Exclusion>,
}

impl CutReport {
    fn new(cut: &str, item: &'static str, rows: &[Row]) -> Self {
        let tasks: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r.task_id.as_str()).collect();
        Self {
            cut: cut.to_owned(),
            rows_in: rows.len(),
            tasks_in: tasks.len(),
            item,
            ..Self::default()
        }
    }

    /// Adds `count` to an exclusion class.
    pub fn exclude(&mut self, class: &str, unit: &'static str, why: &str, count: usize) {
        if count == 0 {
            return;
        }
        self.excluded
            .entry(class.to_owned())
            .and_modify(|e| e.count += count)
            .or_insert_with(|| Exclusion {
                count,
                unit,
                why: why.to_owned(),
            });
    }

    /// Leaves out `count` rows that have no reward.
    fn exclude_ungraded(&mut self, count: usize) {
        self.exclude("ungraded", "rows", "the row has no reward", count);
    }

    /// Ends the cut: `kept` are its items, using `rows_out` distinct rows.
    fn finish<T>(mut self, kept: Vec<T>, rows_out: usize) -> (Vec<T>, Self) {
        self.items_out = kept.len();
        self.rows_out = rows_out;
        (kept, self)
    }

    /// One line per exclusion class, for people.
    pub fn render(&self) -> String {
        let mut out = format!(
            "{}: {} rows in ({} tasks) -> {} {} out ({} rows)\n",
            self.cut, self.rows_in, self.tasks_in, self.items_out, self.item, self.rows_out
        );
        for (class, e) in &self.excluded {
            let _ = writeln!(
                out,
                "  excluded {} {} [{class}]: {}",
                e.count, e.unit, e.why
            );
        }
        out
    }
}

/// Characters of the agent's turns: the text of every assistant message plus
/// the name and arguments of each tool call it makes.
pub fn agent_chars(row: &Row) -> usize {
    messages_agent_chars(&row.messages)
}

/// Characters of the agent's turns among `messages` (as [`agent_chars`]).
pub fn messages_agent_chars(messages: &[Message]) -> usize {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| {
            m.content_str().chars().count()
                + m.tool_calls
                    .iter()
                    .map(|c| c.function.name.chars().count() + c.function.arguments.chars().count())
                    .sum::<usize>()
        })
        .sum()
}

/// Whether the goal check ran on the row and failed: such a row is no
/// example to learn from, whatever a later grading stage said.
pub fn goal_not_met(row: &Row) -> bool {
    row.conduct_checks
        .as_ref()
        .and_then(|c| c.get("goal"))
        .is_some_and(|met| !met)
}

fn failed_by_error(row: &Row) -> bool {
    matches!(row.ended_by, EndedBy::AgentError | EndedBy::BackendError)
}

/// Groups row indices by task, tasks in id order and rows in `row_id` order,
/// so no cut depends on the order of its input.
fn by_task(rows: &[Row], keep: impl Fn(&Row) -> bool) -> BTreeMap<&str, Vec<usize>> {
    let mut tasks: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        if keep(row) {
            tasks.entry(row.task_id.as_str()).or_default().push(i);
        }
    }
    for indices in tasks.values_mut() {
        indices.sort_by(|&a, &b| rows[a].row_id.cmp(&rows[b].row_id));
    }
    tasks
}

/// Which agent turns of an SFT example carry loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossMask {
    /// Every agent turn (tool calls and replies); system, person and tool
    /// messages never.
    #[default]
    AgentTurns,
    /// Only the agent turns after the person's last message; earlier turns
    /// are context.
    LastExchange,
}

impl LossMask {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentTurns => "agent_turns",
            Self::LastExchange => "last_exchange",
        }
    }
}

/// Options of [`select_for_sft`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SftOptions {
    /// Seed of the tie-breaking draws.
    pub seed: u64,
    /// Reward a row needs ([`defaults::SFT_REWARD`]).
    pub reward: f64,
    /// Rows kept per task ([`defaults::SFT_PER_TASK`]).
    pub per_task: usize,
    /// Which agent turns are trained.
    pub mask: LossMask,
    /// Keep rows the person walked away from (`user_left`)
    /// ([`defaults::SFT_KEEP_USER_LEFT`]).
    pub keep_user_left: bool,
}

impl Default for SftOptions {
    fn default() -> Self {
        Self {
            seed: defaults::SEED,
            reward: defaults::SFT_REWARD,
            per_task: defaults::SFT_PER_TASK,
            mask: LossMask::default(),
            keep_user_left: defaults::SFT_KEEP_USER_LEFT,
        }
    }
}

/// One SFT example: a row and, per message, whether it carries loss.
#[derive(Clone, Debug, PartialEq)]
pub struct SftExample<'a> {
    /// The row.
    pub row: &'a Row,
    /// One flag per message of `row.messages`; `true` only on agent turns.
    pub trained: Vec<bool>,
}

/// The loss mask of a row: one flag per message.
pub fn loss_mask(messages: &[Message], mask: LossMask) -> Vec<bool> {
    let from = match mask {
        LossMask::AgentTurns => 0,
        LossMask::LastExchange => messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .map_or(0, |i| i + 1),
    };
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| i >= from && m.role == Role::Assistant)
        .collect()
}

/// SFT cut: per task, the best `reward == 1` row (fewest agent characters
/// within a behaviour), spread across behaviour signatures.
///
/// Tasks are visited in a seeded order; each picks, among its qualifying
/// signatures not yet used for it, the one used least so far across the
/// whole cut (ties drawn from the seeded stream `select/sft`). So when a task
/// offers several behaviours, the set as a whole cycles through them instead
/// of teaching one habit. Kept examples come back in input order.
pub fn select_for_sft<'a>(rows: &'a [Row], opts: &SftOptions) -> (Vec<SftExample<'a>>, CutReport) {
    let mut report = CutReport::new("sft", "rows", rows);
    let mut qualifying = vec![false; rows.len()];
    for (i, row) in rows.iter().enumerate() {
        match row.reward {
            None => report.exclude_ungraded(1),
            Some(r) if r < opts.reward => report.exclude(
                "reward_below_threshold",
                "rows",
                &format!("reward is below {}", opts.reward),
                1,
            ),
            Some(_) if failed_by_error(row) => report.exclude(
                "agent_error",
                "rows",
                "the conversation ended in an agent or backend error",
                1,
            ),
            Some(_) if goal_not_met(row) => report.exclude(
                "goal_not_met",
                "rows",
                "the row did not meet its situation's goal",
                1,
            ),
            Some(_) if row.ended_by == EndedBy::UserLeft && !opts.keep_user_left => report.exclude(
                "user_left",
                "rows",
                "the person walked away from an unanswered question (--keep-user-left keeps them)",
                1,
            ),
            Some(_) if !row.messages.iter().any(|m| m.role == Role::Assistant) => {
                report.exclude("no_agent_turn", "rows", "the agent never spoke", 1);
            }
            Some(_) => qualifying[i] = true,
        }
    }
    let tasks = by_task(rows, |_| true);
    let mut order: Vec<&str> = tasks
        .iter()
        .filter(|(_, idx)| idx.iter().any(|&i| qualifying[i]))
        .map(|(t, _)| *t)
        .collect();
    let mut stream = Stream::derive(opts.seed, "select/sft", &[]);
    stream.shuffle(&mut order);

    let mut usage: BTreeMap<&str, usize> = BTreeMap::new();
    let mut picked: Vec<usize> = Vec::new();
    let mut not_picked = 0usize;
    for task in order {
        // Signature → the task's qualifying rows with it, best first.
        let mut signatures: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in &tasks[task] {
            if qualifying[i] {
                signatures
                    .entry(rows[i].behavior_signature.as_str())
                    .or_default()
                    .push(i);
            }
        }
        for candidates in signatures.values_mut() {
            candidates.sort_by_key(|&i| (agent_chars(&rows[i]), rows[i].row_id.as_str()));
        }
        let total: usize = signatures.values().map(Vec::len).sum();
        let mut taken = 0usize;
        while taken < opts.per_task && !signatures.is_empty() {
            let least = signatures
                .keys()
                .map(|s| usage.get(s).copied().unwrap_or(0))
                .min()
                .unwrap_or(0);
            let tied: Vec<&str> = signatures
                .keys()
                .copied()
                .filter(|s| usage.get(s).copied().unwrap_or(0) == least)
                .collect();
            let signature = tied[stream.index(tied.len())];
            if let Some(candidates) = signatures.remove(signature) {
                picked.push(candidates[0]);
                *usage.entry(signature).or_default() += 1;
                taken += 1;
            }
        }
        not_picked += total - taken;
    }
    report.exclude(
        "not_picked",
        "rows",
        "another qualifying row of the same task was picked (one per task, spread across behaviour signatures)",
        not_picked,
    );
    picked.sort_unstable();
    let examples: Vec<SftExample<'a>> = picked
        .into_iter()
        .map(|i| SftExample {
            row: &rows[i],
            trained: loss_mask(&rows[i].messages, opts.mask),
        })
        .collect();
    let used = examples.len();
    report.finish(examples, used)
}

/// Options of [`build_preference_pairs`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairOptions {
    /// Seed of the tie-breaking draws.
    pub seed: u64,
    /// Least `reward(chosen) − reward(rejected)` ([`defaults::DPO_MARGIN`]).
    pub margin: f64,
    /// Largest length ratio of the two sides
    /// ([`defaults::DPO_MAX_LENGTH_RATIO`]).
    pub max_length_ratio: f64,
    /// Pairs per task at most ([`defaults::DPO_MAX_PAIRS_PER_TASK`]).
    pub max_pairs_per_task: usize,
    /// What each side of a pair is (what the format exports from the split
    /// on); the length ratio is measured on exactly that.
    pub side: PairSide,
}

impl Default for PairOptions {
    fn default() -> Self {
        Self {
            seed: defaults::SEED,
            margin: defaults::DPO_MARGIN,
            max_length_ratio: defaults::DPO_MAX_LENGTH_RATIO,
            max_pairs_per_task: defaults::DPO_MAX_PAIRS_PER_TASK,
            side: PairSide::default(),
        }
    }
}

/// What a DPO side is, from the point where the two conversations diverge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairSide {
    /// The agent turn: messages up to the next person message, cut back to
    /// end at an assistant message (`trl-dpo`).
    #[default]
    AgentTurn,
    /// The one diverging assistant message (`openai-dpo`).
    Message,
}

/// One side of a pair: what `side` takes of `messages` from `split` on.
pub fn pair_side(messages: &[Message], split: usize, side: PairSide) -> &[Message] {
    let rest = messages.get(split..).unwrap_or(&[]);
    match side {
        PairSide::Message => &rest[..rest.len().min(1)],
        PairSide::AgentTurn => {
            let end = rest
                .iter()
                .position(|m| m.role == Role::User)
                .unwrap_or(rest.len());
            let last = rest[..end]
                .iter()
                .rposition(|m| m.role == Role::Assistant)
                .map_or(0, |i| i + 1);
            &rest[..last]
        }
    }
}

/// Two rows of one task, the better one chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct PreferencePair<'a> {
    /// The row with the higher reward.
    pub chosen: &'a Row,
    /// The row with the lower reward.
    pub rejected: &'a Row,
    /// `reward(chosen) − reward(rejected)`.
    pub margin: f64,
    /// Index of the first message where the two conversations differ
    /// (the length of their common prefix).
    pub split: usize,
    /// Longer side over shorter side, in characters of agent turns, each
    /// side being what is exported from `split` on ([`PairSide`]; reward
    /// pairs, which score whole conversations, measure whole rows).
    pub length_ratio: f64,
}

/// Length of the common prefix of two conversations.
///
/// Messages are compared without their tool-call ids, which real agents
/// draw at random: two calls are the same when their names are equal and
/// their arguments are equal as parsed JSON (as text when not JSON), and two
/// tool results are the same when their text is equal and they answer the
/// call at the same place in each conversation.
pub fn common_prefix(a: &[Message], b: &[Message]) -> usize {
    // Call id → its place among the calls made so far, per side.
    let mut places_a: BTreeMap<&str, usize> = BTreeMap::new();
    let mut places_b: BTreeMap<&str, usize> = BTreeMap::new();
    let mut n = 0;
    for (x, y) in a.iter().zip(b) {
        if !same_message(x, y, &places_a, &places_b) {
            break;
        }
        for (xc, yc) in x.tool_calls.iter().zip(&y.tool_calls) {
            let place = places_a.len();
            places_a.insert(xc.id.as_str(), place);
            places_b.insert(yc.id.as_str(), place);
        }
        n += 1;
    }
    n
}

/// The call a tool result answers: its place among the calls so far, or
/// its raw id when no earlier call has it.
fn answers<'m>(m: &'m Message, places: &BTreeMap<&str, usize>) -> Option<Result<usize, &'m str>> {
    m.tool_call_id
        .as_deref()
        .map(|id| places.get(id).copied().ok_or(id))
}

fn same_message(
    x: &Message,
    y: &Message,
    places_x: &BTreeMap<&str, usize>,
    places_y: &BTreeMap<&str, usize>,
) -> bool {
    x.role == y.role
        && x.content == y.content
        && x.name == y.name
        && answers(x, places_x) == answers(y, places_y)
        && x.tool_calls.len() == y.tool_calls.len()
        && x.tool_calls.iter().zip(&y.tool_calls).all(|(c, d)| {
            c.kind == d.kind
                && c.function.name == d.function.name
                && match (c.function.parsed_arguments(), d.function.parsed_arguments()) {
                    (Some(p), Some(q)) => p == q,
                    _ => c.function.arguments == d.function.arguments,
                }
        })
}

fn length_ratio(a: usize, b: usize) -> f64 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if hi == 0 {
        1.0
    } else if lo == 0 {
        f64::INFINITY
    } else {
        hi as f64 / lo as f64
    }
}

/// The rows of a task that are paired: all of them, or, past
/// [`defaults::PAIR_MAX_ROWS_PER_TASK`], that many spread evenly over the
/// rows ordered by reward (highest first, then `row_id`), so the highest
/// and the lowest reward are among them. The rest are counted in `report`
/// as `over_max_rows_per_task`.
fn pairable(rows: &[Row], indices: &[usize], report: &mut CutReport) -> Vec<usize> {
    let cap = defaults::PAIR_MAX_ROWS_PER_TASK;
    if indices.len() <= cap {
        return indices.to_vec();
    }
    let mut by_reward = indices.to_vec();
    // Stable: rows of one reward stay in `row_id` order.
    by_reward.sort_by(|&a, &b| {
        rows[b]
            .reward
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&rows[a].reward.unwrap_or(f64::NEG_INFINITY))
    });
    let last = by_reward.len() - 1;
    let mut kept: Vec<usize> = (0..cap).map(|j| by_reward[j * last / (cap - 1)]).collect();
    report.exclude(
        "over_max_rows_per_task",
        "rows",
        &format!(
            "the task has more than {cap} usable rows; {cap} spread over its rewards are paired"
        ),
        indices.len() - cap,
    );
    kept.sort_by(|&a, &b| rows[a].row_id.cmp(&rows[b].row_id));
    kept
}

/// Every ordered pair of a task's graded rows with a positive reward
/// difference, with the seeded key that breaks ties between equal pairs.
fn task_pairs<'a>(
    rows: &'a [Row],
    indices: &[usize],
    side: Option<PairSide>,
    stream: &mut Stream,
) -> Vec<(PreferencePair<'a>, u64)> {
    let mut pairs = Vec::new();
    for &a in indices {
        for &b in indices {
            let (Some(ra), Some(rb)) = (rows[a].reward, rows[b].reward) else {
                continue;
            };
            // A chosen side that missed its goal teaches nothing good.
            if ra <= rb || goal_not_met(&rows[a]) {
                continue;
            }
            let (chosen, rejected) = (&rows[a], &rows[b]);
            let split = common_prefix(&chosen.messages, &rejected.messages);
            let chars = |row: &Row| match side {
                Some(side) => messages_agent_chars(pair_side(&row.messages, split, side)),
                None => agent_chars(row),
            };
            pairs.push((
                PreferencePair {
                    chosen,
                    rejected,
                    margin: ra - rb,
                    split,
                    length_ratio: length_ratio(chars(chosen), chars(rejected)),
                },
                stream.next_u64(),
            ));
        }
    }
    pairs
}

/// Sorts a task's pairs best first (largest margin, then closest lengths,
/// then the seeded key) and keeps `max` of them in `out`; the others are
/// left out as `over_max_pairs_per_task`, the task already having `max`
/// `better` ones (`better pairs`).
fn keep_best<'a>(
    mut pairs: Vec<(PreferencePair<'a>, u64)>,
    max: usize,
    better: &str,
    report: &mut CutReport,
    out: &mut Vec<PreferencePair<'a>>,
) {
    pairs.sort_by(|(a, ka), (b, kb)| {
        b.margin
            .total_cmp(&a.margin)
            .then(a.length_ratio.total_cmp(&b.length_ratio))
            .then(ka.cmp(kb))
    });
    let over = pairs.len().saturating_sub(max);
    pairs.truncate(max);
    report.exclude(
        "over_max_pairs_per_task",
        "pairs",
        &format!("the task already has {max} {better}"),
        over,
    );
    out.extend(pairs.into_iter().map(|(p, _)| p));
}

fn finish_pairs(
    report: CutReport,
    pairs: Vec<PreferencePair<'_>>,
) -> (Vec<PreferencePair<'_>>, CutReport) {
    let mut used: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for p in &pairs {
        used.insert(p.chosen.row_id.as_str());
        used.insert(p.rejected.row_id.as_str());
    }
    let used = used.len();
    report.finish(pairs, used)
}

/// Whether the two conversations first differ at an agent turn on both
/// sides: the point where one agent decision is preferred over another.
pub fn diverges_at_agent(pair: &PreferencePair<'_>) -> bool {
    let at = |row: &Row| row.messages.get(pair.split).map(|m| m.role);
    at(pair.chosen) == Some(Role::Assistant) && at(pair.rejected) == Some(Role::Assistant)
}

/// DPO cut: pairs of rows of one task with `reward(chosen) − reward(rejected)
/// >= margin`, whose sides (what the format exports from the split on,
/// [`PairOptions::side`]) are within `max_length_ratio` of each other in
/// characters of agent turns, so a long shared history cannot hide a side
/// that is twice as long as the other, and which first differ at an agent turn (so the pair
/// prefers one agent decision given the same history, not a different
/// person). At most `max_pairs_per_task` per task: largest margin first, then
/// closest lengths, then a seeded draw (stream `select/dpo`).
pub fn build_preference_pairs<'a>(
    rows: &'a [Row],
    opts: &PairOptions,
) -> (Vec<PreferencePair<'a>>, CutReport) {
    let mut report = CutReport::new("dpo", "pairs", rows);
    report.exclude_ungraded(rows.iter().filter(|r| r.reward.is_none()).count());
    let errors = rows
        .iter()
        .filter(|r| r.reward.is_some() && failed_by_error(r))
        .count();
    report.exclude(
        "agent_error",
        "rows",
        "the conversation ended in an agent or backend error, so it has no complete agent turn to compare",
        errors,
    );
    let tasks = by_task(rows, |r| r.reward.is_some() && !failed_by_error(r));
    let alone: usize = tasks.values().filter(|indices| indices.len() == 1).count();
    report.exclude(
        "single_row_task",
        "rows",
        "the only usable row of its task, so there is no other row to pair it with",
        alone,
    );
    let mut out = Vec::new();
    for (t, (_, indices)) in tasks.iter().enumerate() {
        let mut stream = Stream::derive(opts.seed, "select/dpo", &[t as u64]);
        let mut kept = Vec::new();
        let indices = pairable(rows, indices, &mut report);
        for (pair, key) in task_pairs(rows, &indices, Some(opts.side), &mut stream) {
            if pair.margin + 1e-12 < opts.margin {
                report.exclude(
                    "margin_below",
                    "pairs",
                    &format!("reward difference is below the margin {}", opts.margin),
                    1,
                );
            } else if pair.length_ratio > opts.max_length_ratio + 1e-12 {
                report.exclude(
                    "length_ratio_above",
                    "pairs",
                    &format!(
                        "one side's exported agent turns are more than {}x longer than the other's",
                        opts.max_length_ratio
                    ),
                    1,
                );
            } else if !diverges_at_agent(&pair) {
                report.exclude(
                    "no_agent_divergence",
                    "pairs",
                    "the conversations first differ at a person or tool message (or one ends first), so no single agent decision is preferred",
                    1,
                );
            } else {
                kept.push((pair, key));
            }
        }
        keep_best(
            kept,
            opts.max_pairs_per_task,
            "better pairs",
            &mut report,
            &mut out,
        );
    }
    finish_pairs(report, out)
}

/// Options of [`build_reward_pairs`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RewardOptions {
    /// Seed of the tie-breaking draws.
    pub seed: u64,
    /// Least reward difference for a pair ([`defaults::RM_MIN_MARGIN`]).
    pub min_margin: f64,
    /// Pairs per task at most ([`defaults::RM_MAX_PAIRS_PER_TASK`]).
    pub max_pairs_per_task: usize,
}

impl Default for RewardOptions {
    fn default() -> Self {
        Self {
            seed: defaults::SEED,
            min_margin: defaults::RM_MIN_MARGIN,
            max_pairs_per_task: defaults::RM_MAX_PAIRS_PER_TASK,
        }
    }
}

/// Reward-model cut, paired: every pair of graded rows of one task with
/// different rewards, `margin` = the reward difference. A reward model scores
/// whole conversations, so neither lengths nor the divergence point matter.
/// At most `max_pairs_per_task` per task, chosen as in
/// [`build_preference_pairs`] (stream `select/reward`).
pub fn build_reward_pairs<'a>(
    rows: &'a [Row],
    opts: &RewardOptions,
) -> (Vec<PreferencePair<'a>>, CutReport) {
    let mut report = CutReport::new("reward_pairs", "pairs", rows);
    report.exclude_ungraded(rows.iter().filter(|r| r.reward.is_none()).count());
    let tasks = by_task(rows, |r| r.reward.is_some());
    let mut out = Vec::new();
    for (t, (_, indices)) in tasks.iter().enumerate() {
        let rewards: Vec<f64> = indices.iter().filter_map(|&i| rows[i].reward).collect();
        let lo = rewards.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rewards.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if hi - lo < opts.min_margin {
            report.exclude(
                "no_reward_spread",
                "rows",
                "every graded row of the task has the same reward, so nothing to prefer (the unpaired file keeps them)",
                indices.len(),
            );
            continue;
        }
        let mut stream = Stream::derive(opts.seed, "select/reward", &[t as u64]);
        let mut kept = Vec::new();
        let indices = pairable(rows, indices, &mut report);
        for (pair, key) in task_pairs(rows, &indices, None, &mut stream) {
            if pair.margin + 1e-12 < opts.min_margin {
                report.exclude(
                    "margin_below",
                    "pairs",
                    &format!("reward difference is below {}", opts.min_margin),
                    1,
                );
            } else {
                kept.push((pair, key));
            }
        }
        keep_best(
            kept,
            opts.max_pairs_per_task,
            "pairs with larger margins",
            &mut report,
            &mut out,
        );
    }
    finish_pairs(report, out)
}

/// Reward-model cut, unpaired: every graded row, in input order.
pub fn select_graded(rows: &[Row]) -> (Vec<&Row>, CutReport) {
    let mut report = CutReport::new("graded", "rows", rows);
    let kept: Vec<&Row> = rows.iter().filter(|r| r.reward.is_some()).collect();
    report.exclude_ungraded(rows.len() - kept.len());
    let used = kept.len();
    report.finish(kept, used)
}

/// Options of [`select_for_rl`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RlOptions {
    /// Lowest pass rate kept, inclusive ([`defaults::RL_MIN_PASS_RATE`]).
    pub min_pass_rate: f64,
    /// Highest pass rate kept, inclusive ([`defaults::RL_MAX_PASS_RATE`]).
    pub max_pass_rate: f64,
    /// Fewest rollouts a group needs ([`defaults::RL_MIN_GROUP_SIZE`]).
    pub min_group_size: usize,
    /// Tasks some of whose rows were dropped before the cut (by
    /// decontamination): what is left of such a group is not the group, so
    /// it is left out whole (`group_decontaminated`).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub decontaminated_tasks: BTreeSet<String>,
}

impl Default for RlOptions {
    fn default() -> Self {
        Self {
            min_pass_rate: defaults::RL_MIN_PASS_RATE,
            max_pass_rate: defaults::RL_MAX_PASS_RATE,
            min_group_size: defaults::RL_MIN_GROUP_SIZE,
            decontaminated_tasks: BTreeSet::new(),
        }
    }
}

/// Every rollout of one task.
#[derive(Clone, Debug, PartialEq)]
pub struct RlGroup<'a> {
    /// The task.
    pub task_id: &'a str,
    /// Its rows, in `row_id` order.
    pub rows: Vec<&'a Row>,
    /// Share of rows with `reward >= 0.5`.
    pub pass_rate: f64,
    /// Mean reward.
    pub mean_reward: f64,
}

/// GRPO cut: whole groups (all rollouts of one task) whose pass rate lies in
/// `[min_pass_rate, max_pass_rate]`. A group with a row dropped by
/// decontamination ([`RlOptions::decontaminated_tasks`]), an ungraded row or
/// fewer than `min_group_size` rows is left out whole: a group is never
/// split.
pub fn select_for_rl<'a>(rows: &'a [Row], opts: &RlOptions) -> (Vec<RlGroup<'a>>, CutReport) {
    let mut report = CutReport::new("rl", "groups", rows);
    let mut out = Vec::new();
    for (task_id, indices) in by_task(rows, |_| true) {
        let group: Vec<&Row> = indices.iter().map(|&i| &rows[i]).collect();
        if opts.decontaminated_tasks.contains(task_id) {
            report.exclude(
                "group_decontaminated",
                "groups",
                "decontamination dropped a row of the group, so the rest is not the whole group (groups are never split)",
                1,
            );
            continue;
        }
        if group.iter().any(|r| r.reward.is_none()) {
            report.exclude(
                "group_has_ungraded",
                "groups",
                "a row of the group has no reward (groups are never split)",
                1,
            );
            continue;
        }
        if group.len() < opts.min_group_size {
            report.exclude(
                "group_too_small",
                "groups",
                &format!("the group has fewer than {} rollouts", opts.min_group_size),
                1,
            );
            continue;
        }
        let n = group.len() as f64;
        let passed = group
            .iter()
            .filter(|r| r.reward.is_some_and(|x| x >= defaults::PASS_THRESHOLD))
            .count();
        let pass_rate = passed as f64 / n;
        let mean_reward = group.iter().filter_map(|r| r.reward).sum::<f64>() / n;
        if pass_rate + 1e-12 < opts.min_pass_rate {
            report.exclude(
                "pass_rate_below_band",
                "groups",
                &format!(
                    "pass rate is below {} (too hard: no signal)",
                    opts.min_pass_rate
                ),
                1,
            );
        } else if pass_rate > opts.max_pass_rate + 1e-12 {
            report.exclude(
                "pass_rate_above_band",
                "groups",
                &format!(
                    "pass rate is above {} (too easy: no signal)",
                    opts.max_pass_rate
                ),
                1,
            );
        } else {
            out.push(RlGroup {
                task_id,
                rows: group,
                pass_rate,
                mean_reward,
            });
        }
    }
    let used = out.iter().map(|g| g.rows.len()).sum();
    report.finish(out, used)
}

/// Splits rows into train and holdout by task: each task is held out when a
/// draw from its own seeded stream falls below `fraction`, so a task's place
/// does not depend on which other tasks are present. When no task falls
/// below it but `fraction > 0` and there are at least two tasks, the task
/// with the lowest draw is held out, so a small run still gets a holdout.
pub fn split_by_task(rows: &[Row], seed: u64, fraction: f64) -> (Vec<&Row>, Vec<&Row>) {
    let draws: std::collections::BTreeMap<&str, f64> = rows
        .iter()
        .map(|r| {
            let name = format!("export/holdout/{}", r.task_id);
            (r.task_id.as_str(), Stream::derive(seed, &name, &[]).unit())
        })
        .collect();
    let mut held: BTreeSet<&str> = draws
        .iter()
        .filter(|(_, d)| **d < fraction)
        .map(|(t, _)| *t)
        .collect();
    if held.is_empty()
        && fraction > 0.0
        && draws.len() >= 2
        && let Some((task, _)) = draws.iter().min_by(|a, b| a.1.total_cmp(b.1))
    {
        held.insert(task);
    }
    rows.iter()
        .partition(|r| !held.contains(r.task_id.as_str()))
}
