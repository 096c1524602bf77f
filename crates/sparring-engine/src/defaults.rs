//! The engine's named defaults for the simulated person: odds, not
//! measurements (fit them on source traces to ground them). Documented in
//! `docs/people.md`.

/// The chance the person walks away when the agent asks for something it
/// could not know (seed 003: "at any question the person may also leave when
/// it asks for something they could not or would not know"). Drawn before
/// the patience draw of the same question.
pub const LEAVE_WHEN_UNKNOWN: f64 = 0.20;

/// The share of people who say up front what proves who they are (the
/// values the policy's identifying tool takes that their ask leaves out:
/// "My date of birth is 1988-04-12."), as callers to a desk often do. The
/// rest give them only when asked. Drawn from its own stream, so no other
/// draw of the situation moves.
pub const FORTHCOMING_SHARE: f64 = 0.35;

/// The most days a new time (a date-time argument, `new_time`) lies from
/// the record's own time: the person asks for a day 1 to this many days
/// away (earlier when the month runs out).
pub const NEW_TIME_MAX_DAYS: u32 = 7;

/// How far past a policy bound a person asks: this many times the bound,
/// rounded up to two significant figures (5,000 → 7,500; docs/people.md
/// "Past a bound").
pub const PAST_BOUND_FACTOR: f64 = 1.5;

/// How a person answers an agent's request to confirm, by stance: the share
/// that agrees at once, that asks a question first, and that pushes (hurries
/// the agent on, or tries to change the terms). Each row sums to 1.
pub mod confirm {
    /// (agree, ask, push) for a stance.
    pub type Shares = (f64, f64, f64);
    /// `cooperative`: agrees.
    pub const COOPERATIVE: Shares = (0.85, 0.10, 0.05);
    /// `skeptical`: asks first.
    pub const SKEPTICAL: Shares = (0.25, 0.65, 0.10);
    /// `hurried`: pushes the agent on.
    pub const HURRIED: Shares = (0.30, 0.05, 0.65);
    /// `manipulative`: tries to change the terms.
    pub const MANIPULATIVE: Shares = (0.25, 0.15, 0.60);
    /// `frustrated`: agrees, impatiently.
    pub const FRUSTRATED: Shares = (0.55, 0.10, 0.35);
    /// `confused`: asks what it means.
    pub const CONFUSED: Shares = (0.40, 0.55, 0.05);
}
