//! Validated option values: each parses from a command-line string (clap
//! converts through [`std::str::FromStr`]) and from a JSON value (a spec's
//! `options`) with the same check and the same one-line message, so a bad
//! value fails where it is parsed.
//!
//! Every count and duration has a documented upper bound: a run's work and
//! memory follow what it is asked for, and nothing can ask for forever.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// A closed vocabulary: names, a did-you-mean on a miss.
pub trait Vocabulary: Sized + Copy + 'static {
    /// What one value is called in messages (`mode`, `repeat policy`).
    const WHAT: &'static str;
    /// Every value, in documentation order.
    const ALL: &'static [Self];
    /// The wire name.
    fn as_str(self) -> &'static str;

    /// Parses a wire name, naming the closest value on a miss:
    /// ``unknown mode `evl`; did you mean `eval`? (expected `eval`, `rl` or `sft`)``.
    fn parse(value: &str) -> Result<Self, OptionError> {
        if let Some(v) = Self::ALL.iter().find(|v| v.as_str() == value) {
            return Ok(*v);
        }
        let names: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
        Err(OptionError::unknown_choice(Self::WHAT, value, &names))
    }
}

/// Why an option value, or a combination of options, is refused. Whichever
/// way the value came (command line, spec, library), the message is the
/// same one line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionError {
    /// A name outside a closed list: ``unknown mode `evl`; did you mean
    /// `eval`? (expected `eval`, `rl` or `sft`)``.
    #[error("unknown {what} `{value}`{} (expected {})", did_you_mean(.closest.as_deref()), either(.choices))]
    UnknownChoice {
        /// What one value is called (`mode`, `repeat policy`).
        what: String,
        /// The value given.
        value: String,
        /// The known value nearest to it, when one is near.
        closest: Option<String>,
        /// Every known value, in documentation order.
        choices: Vec<String>,
    },
    /// Not an integer, or one outside `min..=max`.
    #[error("must be an integer from {min} to {max}")]
    Integer {
        /// The least value.
        min: u64,
        /// The greatest value.
        max: u64,
    },
    /// Not a finite number, or one outside its range: from `min` (above it
    /// when `open`) to `max`.
    #[error(
        "must be {what} {} {min} {} {max}",
        if *.open { "above" } else { "from" },
        if *.open { "and at most" } else { "to" }
    )]
    Number {
        /// What the number is (`a number of seconds`).
        what: &'static str,
        /// The bound below.
        min: f64,
        /// The greatest value.
        max: f64,
        /// Whether `min` itself is excluded.
        open: bool,
    },
    /// `unique_situations` with neither `budget` nor `situations` to end it.
    #[error(
        "`unique_situations` keeps drawing new situations and needs `budget` or `situations` to end"
    )]
    EndlessUniqueSituations,
    /// `top_logprobs` without `logprobs`.
    #[error("`top_logprobs` needs `logprobs` set to true")]
    TopLogprobsWithoutLogprobs,
    /// `avg_turns` outside 1 to `max_turns` (as resolved).
    #[error("`avg_turns` {avg_turns} must be from 1 to `max_turns` {max_turns}")]
    AvgTurns {
        /// The mean turn cap given.
        avg_turns: f64,
        /// The turn cap it must not pass.
        max_turns: u32,
    },
}

impl OptionError {
    /// `value` is none of `choices`: the error naming the closest.
    pub fn unknown_choice(what: &str, value: &str, choices: &[&str]) -> Self {
        Self::UnknownChoice {
            what: what.to_owned(),
            value: value.to_owned(),
            closest: crate::options::closest(value, choices).map(str::to_owned),
            choices: choices.iter().map(|c| (*c).to_owned()).collect(),
        }
    }
}

/// `; did you mean `x`?`, or nothing without a near value.
fn did_you_mean(closest: Option<&str>) -> String {
    closest
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// The choices in backticks: `` `a`, `b` or `c` ``.
fn either(choices: &[String]) -> String {
    let list: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
    match list.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => list.join(""),
    }
}

/// Declares a closed vocabulary: an enum with serde `snake_case` names,
/// [`Vocabulary`], `FromStr` and `Display`.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident, $what:literal, { $($(#[$vmeta:meta])* $variant:ident => $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        // By name, with the did-you-mean of `parse` on a miss.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = serde_json::Value::deserialize(d)?;
                match v.as_str() {
                    Some(s) => <Self as $crate::values::Vocabulary>::parse(s)
                        .map_err(serde::de::Error::custom),
                    None => Err(serde::de::Error::custom(format!(
                        "must be a string, one of {}",
                        <Self as $crate::values::Vocabulary>::ALL
                            .iter()
                            .map(|v| format!("`{}`", v.as_str()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))),
                }
            }
        }

        impl $crate::values::Vocabulary for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }

        impl $name {
            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::values::OptionError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <Self as $crate::values::Vocabulary>::parse(s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use vocabulary;

/// The getter, parsing, printing and serde of a bounded value type: text
/// and JSON go through its `new` check, so every way in gives the same
/// message.
macro_rules! value_traits {
    ($name:ident, $inner:ty) => {
        impl $name {
            /// The value.
            pub fn get(self) -> $inner {
                self.0
            }
        }

        impl FromStr for $name {
            type Err = OptionError;
            fn from_str(s: &str) -> Result<Self, OptionError> {
                s.trim()
                    .parse::<$inner>()
                    .map_err(|_| Self::out_of_range())
                    .and_then(Self::new)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = Value::deserialize(d)?;
                Self::from_json(&v).map_err(serde::de::Error::custom)
            }
        }
    };
}

/// Declares an integer option type bounded to `MIN..=MAX`.
macro_rules! bounded_int {
    ($(#[$meta:meta])* $name:ident($inner:ty), $min:expr, $max:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($inner);

        impl $name {
            /// The least value.
            pub const MIN: $inner = $min;
            /// The greatest value.
            pub const MAX: $inner = $max;

            /// Checks `value`.
            pub fn new(value: $inner) -> Result<Self, OptionError> {
                if (Self::MIN..=Self::MAX).contains(&value) {
                    Ok(Self(value))
                } else {
                    Err(Self::out_of_range())
                }
            }

            fn out_of_range() -> OptionError {
                OptionError::Integer { min: $min, max: $max }
            }

            fn from_json(v: &Value) -> Result<Self, OptionError> {
                v.as_u64()
                    .and_then(|n| <$inner>::try_from(n).ok())
                    .map_or_else(|| Err(Self::out_of_range()), Self::new)
            }
        }

        value_traits!($name, $inner);
    };
}

/// Declares a number option type bounded to a range, `MIN` excluded when
/// `$open` is true.
macro_rules! bounded_float {
    ($(#[$meta:meta])* $name:ident, $min:expr, $max:expr, open: $open:expr, $what:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
        pub struct $name(f64);

        impl $name {
            /// The bound below.
            pub const MIN: f64 = $min;
            /// The greatest value.
            pub const MAX: f64 = $max;

            /// Checks `value`.
            pub fn new(value: f64) -> Result<Self, OptionError> {
                let above = if $open { value > Self::MIN } else { value >= Self::MIN };
                if value.is_finite() && above && value <= Self::MAX {
                    Ok(Self(value))
                } else {
                    Err(Self::out_of_range())
                }
            }

            fn out_of_range() -> OptionError {
                OptionError::Number {
                    what: $what,
                    min: Self::MIN,
                    max: Self::MAX,
                    open: $open,
                }
            }

            fn from_json(v: &Value) -> Result<Self, OptionError> {
                v.as_f64().map_or_else(|| Err(Self::out_of_range()), Self::new)
            }
        }

        value_traits!($name, f64);
    };
}

bounded_int!(
    /// Rows a run produces at most (`budget`).
    Budget(u64), 1, 1_000_000_000
);
bounded_int!(
    /// Distinct situations (`situations`).
    Situations(u64), 1, 10_000_000
);
bounded_int!(
    /// Rollouts in flight at once (`concurrency`).
    Concurrency(usize), 1, 100_000
);
bounded_int!(
    /// Agent replies before a conversation is cut off (`max_turns`), or
    /// requests within one turn (`max_tool_steps`).
    Turns(u32), 1, 1_000
);
bounded_int!(
    /// Rollouts per ask (`repeats`).
    Repeats(u32), 1, 10_000
);
bounded_int!(
    /// Wordings per situation (`phrasings`).
    Phrasings(u32), 1, 100
);
bounded_int!(
    /// Replays of the task set (`runs`).
    Runs(u32), 1, 1_000
);
bounded_int!(
    /// Most tokens per model reply (`max_tokens`).
    MaxTokens(u32), 1, 10_000_000
);
bounded_int!(
    /// Requests started per minute at most (`rpm`).
    Rpm(u32), 1, 10_000_000
);
bounded_int!(
    /// Retries of a failed model request (`retries`).
    Retries(u32), 0, 100
);
bounded_int!(
    /// Alternatives per token with `logprobs` (OpenAI accepts 0 to 20).
    TopLogprobs(u32), 0, 20
);
bounded_float!(
    /// Seconds an agent, grader or judge may take per request (at most a
    /// day).
    Timeout, 0.0, 86_400.0, open: true, "a number of seconds"
);
bounded_float!(
    /// Seconds a run may take (`time_budget`, at most thirty days).
    TimeBudget, 0.0, 2_592_000.0, open: true, "a number of seconds"
);
bounded_float!(
    /// A share from 0 to 1 (`hard_share`).
    Share, 0.0, 1.0, open: false, "a number"
);
bounded_float!(
    /// Effort of the covering-array optimiser, a multiple of its default.
    Effort, 0.0, 1_000.0, open: false, "a number"
);
bounded_float!(
    /// Sampling temperature (OpenAI-compatible servers take 0 to 2).
    Temperature, 0.0, 2.0, open: false, "a number"
);
bounded_float!(
    /// Nucleus sampling mass.
    TopP, 0.0, 1.0, open: true, "a number"
);
bounded_float!(
    /// Mean turn cap (`avg_turns`); checked against `max_turns` once both
    /// are known.
    AvgTurns, 1.0, 1_000.0, open: false, "a number"
);

vocabulary!(
    /// A preset of counts (docs/options.md, "Modes").
    Mode, "mode", {
        /// One rollout per ask; pass@1 over many tasks.
        Eval => "eval",
        /// Groups of rollouts per ask for group-relative training.
        Rl => "rl",
        /// Several wordings and two rollouts per ask.
        Sft => "sft",
    }
);

vocabulary!(
    /// How many of its k rollouts an ask gets.
    RepeatPolicy, "repeat policy", {
        /// Every ask gets all k.
        Fixed => "fixed",
        /// Stop repeating an ask once its first rollouts agree.
        Successive => "successive",
    }
);

impl Default for RepeatPolicy {
    fn default() -> Self {
        crate::defaults::REPEAT_POLICY
    }
}

vocabulary!(
    /// How long the simulated person keeps answering the agent's questions.
    Patience, "patience", {
        /// Answers the first question; may leave from the second.
        Normal => "normal",
        /// Leaves sooner.
        Short => "short",
        /// Never leaves.
        Endless => "endless",
    }
);

impl Default for Patience {
    fn default() -> Self {
        crate::defaults::PATIENCE
    }
}

vocabulary!(
    /// How the simulated person stands towards the agent (the `stance` axis).
    Stance, "stance", {
        /// Gives what is asked.
        Cooperative => "cooperative",
        /// Short on time, pushes for speed.
        Hurried => "hurried",
        /// Unsure what they want or what things are called.
        Confused => "confused",
        /// Annoyed by what went before.
        Frustrated => "frustrated",
        /// Doubts what the agent says; asks before agreeing.
        Skeptical => "skeptical",
        /// Tries to get what the rules forbid.
        Manipulative => "manipulative",
    }
);

vocabulary!(
    /// The state of the record a situation is about (the `world_state` axis).
    #[derive(Default)]
    WorldState, "world state", {
        /// The person's record, in a state the tool can act on.
        #[default]
        Exists => "exists",
        /// An id no record has.
        Missing => "missing",
        /// A record in a status the tool cannot act on (or the rules refuse).
        Terminal => "terminal",
        /// The person has several records the ask could mean.
        Several => "several",
        /// A record of someone other than the person.
        SomeoneElse => "someone_else",
    }
);

vocabulary!(
    /// How the situation's tool answers (the `tool_condition` axis): `ok`, or
    /// the fault scheduled on its first call.
    #[derive(Default)]
    ToolCondition, "tool condition", {
        /// No scheduled fault.
        #[default]
        Ok => "ok",
        /// A timeout.
        Timeout => "timeout",
        /// A server error.
        ServerError => "server_error",
        /// A rate limit.
        RateLimited => "rate_limited",
        /// A malformed answer.
        Malformed => "malformed",
        /// An empty answer.
        Empty => "empty",
    }
);

impl ToolCondition {
    /// The condition a fault is.
    pub const fn of_fault(kind: crate::FaultKind) -> Self {
        match kind {
            crate::FaultKind::Timeout => Self::Timeout,
            crate::FaultKind::ServerError => Self::ServerError,
            crate::FaultKind::RateLimited => Self::RateLimited,
            crate::FaultKind::Malformed => Self::Malformed,
            crate::FaultKind::Empty => Self::Empty,
        }
    }

    /// The fault this condition schedules: none for `ok`.
    pub const fn fault(self) -> Option<crate::FaultKind> {
        match self {
            Self::Ok => None,
            Self::Timeout => Some(crate::FaultKind::Timeout),
            Self::ServerError => Some(crate::FaultKind::ServerError),
            Self::RateLimited => Some(crate::FaultKind::RateLimited),
            Self::Malformed => Some(crate::FaultKind::Malformed),
            Self::Empty => Some(crate::FaultKind::Empty),
        }
    }
}

vocabulary!(
    /// What went before the conversation (the `history` axis).
    #[derive(Default)]
    History, "history", {
        /// A first contact.
        #[default]
        Fresh => "fresh",
        /// The person has been here before.
        Returning => "returning",
        /// An earlier attempt failed.
        FailedBefore => "failed_before",
        /// Someone handed the person over.
        HandedOff => "handed_off",
    }
);

vocabulary!(
    /// How hard a situation's ask is to read (`situation.tier`).
    Tier, "tier", {
        /// Says what is needed.
        Ordinary => "ordinary",
        /// Asks for more than one thing.
        Complex => "complex",
        /// Leaves out what the agent must ask for.
        Ambiguous => "ambiguous",
        /// Sits at the edge of a rule.
        Boundary => "boundary",
        /// Argues against the policy.
        Adversarial => "adversarial",
        /// A seed ask, kept word for word.
        Seed => "seed",
        /// A conversation sparring did not write, read by the rows reader
        /// (`sparring_io::rows::parse_rows`).
        Imported => "imported",
    }
);

impl Tier {
    /// The tiers `hard_share` draws from.
    pub const HARD: [Self; 3] = [Self::Ambiguous, Self::Boundary, Self::Adversarial];

    /// Whether `hard_share` draws this tier.
    pub fn is_hard(self) -> bool {
        Self::HARD.contains(&self)
    }
}

vocabulary!(
    /// The search arm that chose a situation (`lineage.arm`).
    Arm, "arm", {
        /// A seed ask of the spec.
        Seed => "seed",
        /// The next row of the covering array (or a unique situation past it).
        Structured => "structured",
        /// No arm: a conversation sparring did not write (see
        /// [`Tier::Imported`]).
        Imported => "imported",
    }
);

vocabulary!(
    /// A grading stage (`grades[].stage`).
    Stage, "stage", {
        /// The deterministic conduct checks.
        Conduct => "conduct",
        /// A grader hook: a command or an HTTP URL.
        Grader => "grader",
        /// An LLM judge.
        Judge => "judge",
    }
);

vocabulary!(
    /// The kind of a situation's goal (`situation.goal.kind`): what done
    /// looks like (`docs/grading.md`, "Goals").
    GoalKind, "goal kind", {
        /// The tool succeeds on the person's record with the arguments the
        /// person means; the record changes as the world says it should.
        Act => "act",
        /// The right record is read and the final reply states the fact.
        Inform => "inform",
        /// The rules forbid the action for this record: the record is
        /// checked, the action is not done, the person is told why.
        Decline => "decline",
        /// The record does not exist: nothing is done to it, and the agent
        /// says it cannot find it or asks for the right id.
        NotFound => "not_found",
        /// The record is someone else's: it is neither changed nor
        /// disclosed to this person.
        OtherOwner => "other_owner",
        /// Several records match: the agent asks which before acting, and
        /// acts on none but the one the person means.
        Disambiguate => "disambiguate",
        /// The person asks for more than the policy lets the agent do (past
        /// a bound of an `escalate` rule): the action is not done, and the
        /// person is handed on with one of the rule's hand-off tools.
        HandOff => "hand_off",
        /// No tool is the situation's: no state-changing call.
        NoAction => "no_action",
        /// The seed said what done is (`seeds[].expect`): the expected
        /// calls succeed in order, the records hold the expected fields,
        /// the final reply states the expected facts.
        Expected => "expected",
    }
);

vocabulary!(
    /// How the simulated person answered the agent's request to confirm
    /// (`confirmations[].answer`, docs/people.md).
    ConfirmationKind, "confirmation answer", {
        /// Said yes.
        Agree => "agree",
        /// Asked a question before saying yes (the next request is a yes).
        AskFirst => "ask_first",
        /// Said yes and hurried the agent on.
        Push => "push",
        /// Said yes and tried to change the terms (a manipulative person).
        ChangeTerms => "change_terms",
        /// Said no: the proposal named an amount or a record other than the
        /// person's, and the answer gave the right one.
        Correct => "correct",
    }
);

/// The zero values of the vocabularies, for empty rows (`Row::new`,
/// `Default` of the row's parts); a run always sets them.
macro_rules! zero_values {
    ($($name:ident => $variant:ident),+ $(,)?) => {
        $(
            #[allow(clippy::derivable_impls)] // the macro's enums derive no Default
            impl Default for $name {
                fn default() -> Self {
                    Self::$variant
                }
            }
        )+
    };
}

zero_values!(
    Stance => Cooperative,
    Tier => Ordinary,
    Arm => Structured,
    Stage => Conduct,
);
