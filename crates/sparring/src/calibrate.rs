//! Calibration: can an eval tell a good agent from a bad one?
//!
//! [`calibrate`] runs a spec against the three calibration agents of
//! `examples/agents/` (`do_nothing`, `reckless`, `careful`; protocol v1,
//! generic over any spec's tools; built into the binary,
//! [`BUILT_IN_AGENTS`], and handed the policy as the checks read it,
//! [`POLICY_READING_ENV`]), grades every row with the conduct checks
//! and the goal check, and compares their pass@1. The eval ranks them when
//! each pass@1 interval lies wholly above the next one's
//! (`careful > reckless > do_nothing`). When it does not, [`Calibration::why`]
//! says why, from the rows: goal kinds the do-nothing agent meets anyway
//! (they cannot fail an agent that does nothing), goal kinds where careful
//! work fails too, the conversations the person walked away from, and the
//! person's answers that said they knew nothing more.

use crate::{Error, Output, Result, Simulation};
use serde::Serialize;
use sparring_engine::policy::Policy;
use sparring_score::Estimate;
use sparring_score::input::{ScoreRow, parse_score_rows};
use sparring_score::report::{ReportOptions, report};
use sparring_types::values::Situations;
use sparring_types::{OptionsPatch, Row};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The calibration agents, worst first: the order the eval must rank them in.
pub const AGENTS: &[&str] = &["do_nothing", "reckless", "careful"];

/// How one calibration agent scored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentScore {
    /// `do_nothing`, `reckless` or `careful`.
    pub agent: String,
    /// Rows graded.
    pub n_rows: u64,
    /// pass@1 with its bootstrap interval over tasks.
    pub pass_at_1: Estimate,
    /// Goal group → (rows, rows that passed).
    pub by_goal: BTreeMap<String, (u64, u64)>,
    /// Rows the person walked away from.
    pub user_left: u64,
    /// Rows where the person answered that they knew nothing more.
    pub person_lacked: u64,
}

/// The verdict of a calibration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The agents, worst first.
    pub agents: Vec<AgentScore>,
    /// Whether every agent's pass@1 interval lies above the worse one's.
    pub ranked: bool,
    /// Why the eval cannot rank them, when it cannot; what to read else.
    pub why: Vec<String>,
}

/// The environment variable that hands the calibration agents the policy
/// as the conduct checks read it: the path of a JSON file holding what
/// `sparring policy SPEC --json` prints ([`Policy::to_json`]). Only
/// `sparring calibrate` sets it; a real agent never gets it.
pub const POLICY_READING_ENV: &str = "SPARRING_POLICY_READING";

/// The calibration agents, built into the binary so `sparring calibrate`
/// runs from any directory: file name and text (`examples/agents/`).
pub const BUILT_IN_AGENTS: &[(&str, &str)] = &[
    (
        "calibration.py",
        include_str!("../../../examples/agents/calibration.py"),
    ),
    (
        "do_nothing.py",
        include_str!("../../../examples/agents/do_nothing.py"),
    ),
    (
        "reckless.py",
        include_str!("../../../examples/agents/reckless.py"),
    ),
    (
        "careful.py",
        include_str!("../../../examples/agents/careful.py"),
    ),
];

/// Runs `spec` against each calibration agent (`python3 <dir>/<agent>.py`,
/// the built-in agents unless `agents_dir` names a directory of them) with
/// `options` over the spec's, the rows graded and kept in memory; without
/// `budget` or `situations` each agent plays `CALIBRATION_SITUATIONS` fresh
/// situations. Each agent gets the policy as the checks read it in
/// [`POLICY_READING_ENV`]; the built-in agents and that file live in a
/// temporary directory removed when the calibration ends.
pub fn calibrate(
    spec: &Path,
    agents_dir: Option<&Path>,
    options: &OptionsPatch,
) -> Result<Calibration> {
    let scratch = tempfile::Builder::new()
        .prefix("sparring-calibrate-")
        .tempdir()
        .map_err(|e| Error::io("make a directory in", &std::env::temp_dir(), &e))?;
    let dir: PathBuf = match agents_dir {
        Some(d) => d.to_owned(),
        None => write_built_in(scratch.path())?,
    };
    let reading = write_policy_reading(spec, scratch.path())?;
    let mut scores = Vec::new();
    for agent in AGENTS {
        let script: PathBuf = dir.join(format!("{agent}.py"));
        if !script.is_file() {
            return Err(Error::input(format!(
                "calibration agent `{}` not found\nhint: pass --agents DIR, the directory holding do_nothing.py, reckless.py and careful.py, or leave it out for the built-in agents",
                script.display()
            )));
        }
        let patch = sized(OptionsPatch {
            grade: Some(true),
            ..options.clone()
        });
        let result = Simulation::from_file(spec)?
            .agent(format!(
                "env {POLICY_READING_ENV}={} python3 {}",
                quoted(&reading),
                quoted(&script)
            ))
            .options(patch)
            .output(Output::Memory)
            .run_blocking()?;
        scores.push(score(agent, &result.rows)?);
    }
    Ok(verdict(scores))
}

/// Writes the built-in agents into `scratch/agents` and returns that
/// directory.
fn write_built_in(scratch: &Path) -> Result<PathBuf> {
    let dir = scratch.join("agents");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("make", &dir, &e))?;
    for (name, text) in BUILT_IN_AGENTS {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| Error::io("write", &path, &e))?;
    }
    Ok(dir)
}

/// Writes the policy of `spec` as the checks read it ([`Policy::to_json`]) to
/// `scratch/policy.json` and returns its path: what [`POLICY_READING_ENV`]
/// names for the calibration agents.
///
/// # Errors
///
/// When the spec does not load, its policy rules do not apply, or the file
/// cannot be written.
pub fn write_policy_reading(spec: &Path, scratch: &Path) -> Result<PathBuf> {
    let loaded = crate::load_spec(spec)?;
    let policy =
        Policy::of_spec(&loaded).map_err(|e| Error::input(format!("`{}`: {e}", spec.display())))?;
    let path = scratch.join("policy.json");
    let text = serde_json::to_string_pretty(&policy.to_json(&loaded.name))
        .map_err(|e| Error::input(format!("the policy does not serialise: {e}")))?;
    std::fs::write(&path, text).map_err(|e| Error::io("write", &path, &e))?;
    Ok(path)
}

/// A path as one word of a command line (single quotes, as a shell and
/// the agent command's splitter read them).
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// The options with the calibration's own size when the caller set none:
/// [`CALIBRATION_SITUATIONS`](sparring_types::defaults::CALIBRATION_SITUATIONS)
/// fresh situations, so the intervals can rank the agents.
fn sized(patch: OptionsPatch) -> OptionsPatch {
    if patch.budget.is_some() || patch.situations.is_some() {
        return patch;
    }
    OptionsPatch {
        situations: Situations::new(sparring_types::defaults::CALIBRATION_SITUATIONS).ok(),
        unique_situations: Some(true),
        ..patch
    }
}

/// The score of one agent's rows.
pub fn score(agent: &str, rows: &[Row]) -> Result<AgentScore> {
    let mut text = String::new();
    for row in rows {
        let line = serde_json::to_string(row)
            .map_err(|e| Error::input(format!("a row of `{agent}` does not serialise: {e}")))?;
        text.push_str(&line);
        text.push('\n');
    }
    let parsed: Vec<ScoreRow> = if rows.is_empty() {
        Vec::new()
    } else {
        parse_score_rows(Path::new(agent), &text)?
    };
    let figures = report(&parsed, &ReportOptions::default())?;
    let mut by_goal: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for row in &parsed {
        if let Some(goal) = &row.goal {
            let entry = by_goal.entry(goal.clone()).or_default();
            entry.0 += 1;
            entry.1 += u64::from(row.passed() == Some(true));
        }
    }
    let lacked = rows
        .iter()
        .filter(|r| {
            r.messages.iter().any(|m| {
                m.role == sparring_types::Role::User
                    && m.content_str()
                        .to_lowercase()
                        .contains("don't know anything more")
            })
        })
        .count() as u64;
    Ok(AgentScore {
        agent: agent.to_owned(),
        n_rows: rows.len() as u64,
        pass_at_1: figures.pass_at_1,
        by_goal,
        user_left: rows
            .iter()
            .filter(|r| r.ended_by == sparring_types::EndedBy::UserLeft)
            .count() as u64,
        person_lacked: lacked,
    })
}

/// Whether the scores rank the agents, and why not.
pub fn verdict(agents: Vec<AgentScore>) -> Calibration {
    let mut why = Vec::new();
    let mut ranked = agents.len() == AGENTS.len();
    for pair in agents.windows(2) {
        let (worse, better) = (&pair[0], &pair[1]);
        let apart = match (worse.pass_at_1.ci95, better.pass_at_1.ci95) {
            (Some([_, hi]), Some([lo, _])) => lo > hi,
            _ => false,
        };
        if !apart {
            ranked = false;
            why.push(format!(
                "`{}` ({}) is not clearly above `{}` ({}): the intervals overlap",
                better.agent,
                crate::calibrate::pct(better.pass_at_1.value),
                worse.agent,
                crate::calibrate::pct(worse.pass_at_1.value),
            ));
            why.extend(differences(worse, better));
        }
    }
    if let Some(idle) = agents.iter().find(|a| a.agent == "do_nothing") {
        for (goal, (n, passed)) in &idle.by_goal {
            if *n > 0 && *passed * 2 >= *n {
                why.push(format!(
                    "goal `{goal}` cannot fail an agent that does nothing: `do_nothing` passes {passed} of {n}"
                ));
            }
        }
    }
    if let Some(careful) = agents.iter().find(|a| a.agent == "careful") {
        for (goal, (n, passed)) in &careful.by_goal {
            if *n > 0 && *passed * 2 < *n {
                why.push(format!(
                    "goal `{goal}` fails careful work too: `careful` passes {passed} of {n}"
                ));
            }
        }
        if careful.person_lacked > 0 || careful.user_left > 0 {
            why.push(format!(
                "the people lack facts or patience: with `careful`, {} conversations had the person say they knew nothing more and {} ended with the person gone",
                careful.person_lacked, careful.user_left
            ));
        }
    }
    Calibration {
        agents,
        ranked,
        why,
    }
}

/// The goal groups where the better agent does no better.
fn differences(worse: &AgentScore, better: &AgentScore) -> Vec<String> {
    better
        .by_goal
        .iter()
        .filter_map(|(goal, &(n, passed))| {
            let (wn, wp) = worse.by_goal.get(goal).copied().unwrap_or((0, 0));
            (n > 0 && wn > 0 && passed * wn <= wp * n).then(|| {
                format!(
                    "on goal `{goal}` `{}` passes {passed} of {n}, `{}` {wp} of {wn}",
                    better.agent, worse.agent
                )
            })
        })
        .collect()
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |p| format!("{:.1}%", p * 100.0))
}

/// The calibration as text: one line per agent, per goal group, then the
/// verdict.
pub fn render(c: &Calibration) -> String {
    let mut out = String::new();
    let groups: Vec<&String> = {
        let mut g: Vec<&String> = c.agents.iter().flat_map(|a| a.by_goal.keys()).collect();
        g.sort();
        g.dedup();
        g
    };
    let _ = write!(
        out,
        "{:<11}  {:>5}  {:>7}  {:<16}",
        "agent", "rows", "pass@1", "ci95"
    );
    for g in &groups {
        let _ = write!(out, "  {g:>12}");
    }
    out.push('\n');
    for a in &c.agents {
        let ci = a.pass_at_1.ci95.map_or_else(
            || "-".to_owned(),
            |[lo, hi]| format!("[{}, {}]", pct(Some(lo)), pct(Some(hi))),
        );
        let _ = write!(
            out,
            "{:<11}  {:>5}  {:>7}  {ci:<16}",
            a.agent,
            a.n_rows,
            pct(a.pass_at_1.value)
        );
        for g in &groups {
            let cell = a
                .by_goal
                .get(*g)
                .map_or_else(|| "-".to_owned(), |(n, p)| format!("{p}/{n}"));
            let _ = write!(out, "  {cell:>12}");
        }
        out.push('\n');
    }
    if c.ranked {
        out.push_str("\nranked: careful > reckless > do_nothing, each interval above the next\n");
    } else {
        out.push_str("\nnot ranked: this eval cannot tell the agents apart by a clear margin\n");
    }
    for w in &c.why {
        let _ = writeln!(out, "  - {w}");
    }
    out
}
