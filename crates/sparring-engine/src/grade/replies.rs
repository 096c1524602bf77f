//! What an agent's reply tells the person, read sentence by sentence for
//! the goal checks (`goal.rs`): that a record cannot be found, that a
//! record is not theirs, and why an action cannot be done.
//!
//! The word lists are general English (how people say these things to a
//! customer), never a domain's words; `docs/grading.md` ("What the goal
//! checks accept") tables the accepted and the refused phrasings, each row
//! a test below or in `tests/goal.rs`.

use sparring_reading::text::{sentences, words};

/// Words that deny what follows them (`not`, `can't`, `no`, `unable`).
/// Unlike the claim reader's negations, no hedges (`unfortunately`) and no
/// failure words (`failed`): "unfortunately the look-up failed" denies
/// nothing about the record.
fn denies(word: &str) -> bool {
    matches!(
        word,
        "not" | "no" | "never" | "cannot" | "unable" | "nothing" | "none" | "neither" | "nor"
    ) || word.ends_with("n't")
}

/// How many words before it a denial reaches (`I wasn't able to find`).
const DENIAL_REACH: usize = 4;

/// Whether a denial stands within [`DENIAL_REACH`] words before `at`.
fn denied_at(w: &[String], at: usize) -> bool {
    w[at.saturating_sub(DENIAL_REACH)..at]
        .iter()
        .any(|x| denies(x))
}

/// Verbs and adjectives that, denied, say a record is not there (`I can't
/// find`, `doesn't exist`, `doesn't match any`, `I don't see`, `isn't a
/// valid number`, `isn't showing`).
const FIND_WORDS: &[&str] = &[
    "find",
    "found",
    "locate",
    "located",
    "exist",
    "exists",
    "existing",
    "match",
    "matches",
    "matching",
    "see",
    "recognise",
    "recognize",
    "recognised",
    "recognized",
    "appear",
    "appears",
    "show",
    "shows",
    "showing",
    "valid",
    "known",
    "listed",
    "registered",
];

/// Where records are kept, denied with `in`/`on` before them: `isn't in
/// our system`, `not on file`, `not in our records`.
const RECORD_PLACES: &[&str] = &["system", "systems", "records", "file", "files", "database"];

/// Phrases that say it outright.
const NOT_FOUND_PHRASES: &[&str] = &[
    "not found",
    "no record",
    "no records",
    "no match",
    "no matches",
    "no matching",
    "no such",
    "no result",
    "no results",
    "nothing under",
    "nothing matches",
    "nothing on file",
];

/// What follows `no <thing>` in the world's own wording and its
/// paraphrases: `no loan has loan_id L1`, `there's no booking
/// under that number`, `no order matches`.
const NO_THING_LINKS: &[&str] = &["has", "have", "under", "matches", "matching", "exists"];

/// What follows `no <thing> with`/`by` when it names the id: `no order
/// with that number`, `no account by this id` (not `no problem with the
/// order`).
const NO_THING_REFS: &[&str] = &["that", "this", "id", "number"];

/// Whether a reply says a record cannot be found: in the world's words
/// relayed (`no loan has loan_id L-4410`), outright (`not found`,
/// `no record of`, `no such order`), or denied (`I can't find`, `doesn't
/// exist`, `isn't in our system`, `doesn't match any`). `I couldn't look it
/// up` says nothing of the kind: the look-up may have failed.
pub(crate) fn says_not_found(text: &str) -> bool {
    sentences(text).iter().any(|s| {
        let w = words(s);
        let lower = format!(" {} ", w.join(" "));
        NOT_FOUND_PHRASES
            .iter()
            .any(|p| lower.contains(&format!(" {p} ")))
            || no_thing(&w)
            || w.iter().enumerate().any(|(i, x)| {
                let x = x.as_str();
                (FIND_WORDS.contains(&x) && denied_at(&w, i))
                    || (RECORD_PLACES.contains(&x) && in_a_place(&w, i) && denied_at(&w, i))
            })
    })
}

/// Whether `no <one or two words> <link>` stands in the words.
fn no_thing(w: &[String]) -> bool {
    w.iter().enumerate().any(|(i, x)| {
        x == "no"
            && (i + 2..=i + 3).any(|j| match w.get(j).map(String::as_str) {
                Some(link) if NO_THING_LINKS.contains(&link) => true,
                Some("with" | "by") => w
                    .get(j + 1)
                    .is_some_and(|r| NO_THING_REFS.contains(&r.as_str())),
                _ => false,
            })
    })
}

/// Whether the place word at `at` is preceded by `in`/`on` (an `our`,
/// `the` or `my` between allowed).
fn in_a_place(w: &[String], at: usize) -> bool {
    let before: Vec<&str> = w[at.saturating_sub(2)..at]
        .iter()
        .map(String::as_str)
        .collect();
    matches!(
        before.as_slice(),
        [.., "in" | "on"] | ["in" | "on", "our" | "the" | "my"]
    )
}

/// Words that tie a refusal to whose record it is.
const OWNER_WORDS: &[&str] = &[
    "account",
    "accounts",
    "belong",
    "belongs",
    "yours",
    "owner",
    "owned",
    "match",
    "matches",
    "verify",
    "verified",
    "identify",
    "identity",
    "authorised",
    "authorized",
    "access",
    "holder",
    "someone",
    "another",
    "different",
    "else",
    "else's",
];

/// Prepositions that, between a denial and `your`, place the record
/// outside the person's own (`not on your account`, `not one of your
/// loans`, `isn't linked to your profile`, `not in your name`).
const YOUR_PLACES: &[&str] = &["on", "in", "under", "of", "among", "to"];

/// Whether a sentence denies the record is among the person's own: a
/// denial, then `on/in/under/of/among/to your` (`isn't on your account`,
/// `is not one of your loans`), or `not yours`.
fn denies_yours_in(w: &[String]) -> bool {
    let Some(first_denial) = w.iter().position(|x| denies(x)) else {
        return false;
    };
    w.iter().enumerate().skip(first_denial + 1).any(|(i, x)| {
        x == "yours"
            || (x == "your"
                && w.get(i - 1)
                    .is_some_and(|p| YOUR_PLACES.contains(&p.as_str())))
    })
}

/// Whether a reply denies that the record is among the person's own
/// (`isn't on your account`, `is not one of your loans`, `not
/// yours`): for an unknown id, a way of saying it cannot be found.
pub(crate) fn denies_yours(text: &str) -> bool {
    sentences(text).iter().any(|s| denies_yours_in(&words(s)))
}

/// How many words after `only` the owner it names may come.
const ONLY_REACH: usize = 5;

/// Whether a reply tells the person the record is not theirs: a denial with
/// a word of ownership (`isn't on your account`, `doesn't match`, `can't
/// verify`, `is under a different library card`, `belongs to someone else`),
/// the record placed outside their own (`is not one of your
/// loans`), or `only` with their own (`I can only discuss your own
/// loans`).
pub(crate) fn tells_not_theirs(text: &str) -> bool {
    sentences(text).iter().any(|s| {
        let w = words(s);
        let owner = w.iter().any(|x| OWNER_WORDS.contains(&x.as_str()));
        let denied = w.iter().any(|x| denies(x) || x == "unable");
        // `only` with whose right after it: `I can only discuss your own
        // loans`, `only the account holder can`.
        let only_own = w.iter().enumerate().any(|(i, x)| {
            x == "only"
                && w[i + 1..(i + 1 + ONLY_REACH).min(w.len())]
                    .iter()
                    .any(|y| matches!(y.as_str(), "own" | "holder" | "owner" | "yours"))
        });
        (denied && owner) || denies_yours_in(&w) || only_own
    })
}

/// Words of a refusal too general to explain it: modal and linking words,
/// and the notes the world adds to say where a rule came from.
const REASON_STOP: &[&str] = &[
    "cannot",
    "needs",
    "needed",
    "requires",
    "required",
    "should",
    "against",
    "status",
    "number",
    "record",
    "records",
    "description",
    "section",
    "spec's",
    "policy",
    "allowed",
];

/// Shortest word of a refusal that can carry its reason (`lapsed`,
/// `belongs`, `overdue`; shorter state words such as `paid` are checked as
/// the goal's `says`).
const REASON_MIN_CHARS: usize = 6;

/// The terms of a refusal that say why (`order #W1003 is delivered and
/// cannot be cancelled` → `delivered`; `member M1 has status on_hold` →
/// `on hold`), lowercase with `_` as a space: a word long enough to carry
/// meaning ([`REASON_MIN_CHARS`]) or a value written with `_` (a status
/// such as `on_hold`, a field such as `card_number`), never the
/// record's id, a word of the action itself (`action_words`, the tool's and
/// its id parameter's name words, so `cancelled` explains nothing about
/// `cancel_order`), or a modal or a source note.
pub(crate) fn reason_words(reason: &str, action_words: &[String], id: Option<&str>) -> Vec<String> {
    let id_key = id.map(alnum);
    let of_action = |x: &str| {
        action_words
            .iter()
            .any(|a| a.len() >= 3 && (x.starts_with(a.as_str()) || a.starts_with(x)))
    };
    let mut out: Vec<String> = Vec::new();
    let lower = reason.to_lowercase().replace('’', "'");
    let tokens = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .filter(|t| !t.is_empty());
    for token in tokens {
        if id_key.as_ref().is_some_and(|k| &alnum(token) == k) {
            continue;
        }
        let parts: Vec<&str> = token.split('_').filter(|p| !p.is_empty()).collect();
        let term = if parts.len() > 1 {
            // A value or a field written with `_`: kept whole unless every
            // part is the action's or too general.
            let own = parts
                .iter()
                .any(|p| !of_action(p) && !REASON_STOP.contains(p) && p.len() >= 2);
            if !own || alnum(token).len() < REASON_MIN_CHARS - 2 {
                continue;
            }
            parts.join(" ")
        } else {
            let word = token.trim_matches('\'');
            if word.chars().count() < REASON_MIN_CHARS
                || REASON_STOP.contains(&word)
                || of_action(word)
            {
                continue;
            }
            word.to_owned()
        };
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// Whether a reply holds a reason term (`on hold` is held by `on_hold`
/// and `on hold` alike).
pub(crate) fn holds_term(text: &str, term: &str) -> bool {
    let said = format!(" {} ", words(&text.replace('_', " ")).join(" "));
    said.contains(&format!(" {term} "))
}

/// Lowercase letters and digits only, for comparing ids however written.
pub(crate) fn alnum(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_lowercase()
}

/// Whether a reply denies (`can't`, `cannot`, `unable`, `only`, `no longer`,
/// `ineligible`, `unfortunately`): the first half of explaining a refusal.
pub(crate) fn refuses(text: &str) -> bool {
    words(text).iter().any(|x| {
        denies(x)
            || [
                "unable",
                "only",
                "longer",
                "ineligible",
                "unfortunately",
                "failed",
            ]
            .contains(&x.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_phrasings() {
        for yes in [
            "I couldn't renew loan L-4410: no loan has loan_id `L-4410`.",
            "There's no booking under that number.",
            "I can't find order #W5702.",
            "That order doesn't exist.",
            "Order #W5702 isn't in our system.",
            "I have no record of that order.",
            "That number doesn't match any order.",
            "I wasn't able to locate it.",
            "I don't see an order #W5702.",
            "That isn't a valid order number.",
            "Sorry, order #W5702 was not found.",
            "No order matches #W5702.",
            "There is no order with that number.",
            "It's not on file.",
        ] {
            assert!(says_not_found(yes), "should say not found: {yes}");
        }
        for no in [
            "Sorry, I couldn't look up loan L-1: invalid arguments for `get_loan`.",
            "I couldn't look it up, please try again later.",
            "No problem with the order, it is on its way.",
            "I found order #W1001.",
            "Order #W1001 exists and is pending.",
            "Unfortunately the system is down.",
            "Without the order number I can't go on, sorry.",
            "Done.",
        ] {
            assert!(!says_not_found(no), "should not say not found: {no}");
        }
    }

    #[test]
    fn not_theirs_phrasings() {
        for yes in [
            "That order is not on your account, so I can't share it.",
            "L-1 is not one of your loans, so I can't discuss it.",
            "That loan is under a different library card, so I can't discuss it with you.",
            "I can only discuss your own loans.",
            "Only the account holder can see that order.",
            "I'm sorry, L-1 doesn't belong to your library account.",
            "The email doesn't match the order, so I can't act on it.",
            "I can't verify that the order is yours.",
            "I can't identify you without those details, so I can't go on, sorry.",
            "The badge number doesn't match that employee, so I can't confirm your identity.",
            "That booking belongs to someone else's profile, so I can't change it.",
        ] {
            assert!(tells_not_theirs(yes), "should say not theirs: {yes}");
        }
        for no in [
            "I can't help with that, sorry.",
            "I can't find that order.",
            "Order #W1003 is delivered.",
            "I can't help with your request right now.",
            "I can only help with what these tools do.",
            "I can only help with what these tools do: list the accounts of a member, refund to the card on file.",
        ] {
            assert!(!tells_not_theirs(no), "should not say not theirs: {no}");
        }
        assert!(denies_yours(
            "Account acc_1 is not on your account, so I can't use it."
        ));
        assert!(!denies_yours("Your account is active."));
        assert!(!denies_yours("I can't help with your request."));
    }

    #[test]
    fn reason_words_leave_out_the_action_the_id_and_modals() {
        let action = vec!["cancel".to_owned(), "order".to_owned()];
        let words = reason_words(
            "order `#W1003` is delivered and cannot be cancelled (the description of `cancel_order`)",
            &action,
            Some("#W1003"),
        );
        assert_eq!(words, vec!["delivered".to_owned()]);
        let loan = vec!["renew".to_owned(), "loan".to_owned()];
        let words = reason_words(
            "loan `L-1` belongs to card_number `C-2`, not `C-3`",
            &loan,
            Some("L-1"),
        );
        assert_eq!(words, vec!["belongs".to_owned(), "card number".to_owned()]);
        let renew = vec!["renew".to_owned(), "loan".to_owned(), "member".to_owned()];
        let words = reason_words(
            "`renew_loan` needs `member.status == active`: member `M1` has status on_hold (against active) (the spec's `world` section)",
            &renew,
            Some("M1"),
        );
        assert_eq!(words, vec!["active".to_owned(), "on hold".to_owned()]);
        assert!(holds_term("Member M1 is on_hold, so I can't.", "on hold"));
        assert!(holds_term("They are on hold.", "on hold"));
        assert!(!holds_term("They are on the hold list.", "on hold"));
    }
}
