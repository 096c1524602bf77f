//! Which units are rules, of which class, covering which tools.
//!
//! A unit is a rule when it says what the agent (or the person, or a
//! record) must, must not, may only or should do: a modal (`must`,
//! `should`, `have to`, `need to`), a prohibition or restriction (`never`,
//! `do not`, `cannot`, `only`, `not allowed`, `at most`), an imperative
//! (`Ask …`, `If it is on, guide the user …`), or a conditional permission
//! (`once authenticated, you can …`, `can only be cancelled if …`).
//! Descriptions (`There are three cabin classes`, `a speed test should
//! return …`, `For MMS to work, the user must have …`), pointers (`Refer
//! to …`) and fragments (`Required for some app functions …`) are not.
//!
//! Classes are tried in a fixed order, the first that fits wins:
//! `confirm_before`, `authenticate_first`, `escalate`, `never_reveal`,
//! `limit`, `precondition`, `order`, and `judge` for the rest.

use super::read::Unit;
use super::words::{Plain, find_in, main_clause, number, split_words};
use super::{Bound, Counted, Detail, Tool, Trigger};
use crate::tool::Operation;
use sparring_types::RuleClass;
use sparring_types::singular;

/// What the reader makes of a rule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reading {
    pub(crate) class: RuleClass,
    pub(crate) tools: Vec<String>,
    pub(crate) detail: Detail,
}

/// Markers that make a sentence normative wherever they stand.
const STRONG: &[&[&str]] = &[
    &["must"],
    &["never"],
    &["always"],
    &["do", "not"],
    &["cannot"],
    &["can", "not"],
    &["may", "not"],
    &["should", "not"],
    &["should", "never"],
    &["should", "only"],
    &["should", "always"],
    &["not", "allowed"],
    &["allowed", "to"],
    &["not", "permitted"],
    &["prohibited"],
    &["forbidden"],
    &["at", "most"],
    &["no", "more", "than"],
    &["maximum"],
    &["not", "exceed"],
    &["only"],
    &["but", "not"],
    &["but", "nothing", "else"],
    &["make", "sure"],
    &["be", "sure"],
    &["limited", "to"],
];

/// Base verbs that open an instruction (`Ask …`, `Use …`, `guide the user
/// …`). `refer` and `see` are pointers, not rules.
const IMPERATIVES: &[&str] = &[
    "ask",
    "confirm",
    "check",
    "ensure",
    "verify",
    "use",
    "guide",
    "escalate",
    "transfer",
    "offer",
    "obtain",
    "collect",
    "do",
    "refuse",
    "deny",
    "decline",
    "tell",
    "inform",
    "send",
    "remind",
    "investigate",
    "be",
    "remember",
    "list",
    "state",
    "wait",
    "look",
    "find",
    "apply",
    "calculate",
    "gather",
    "follow",
    "explain",
    "read",
    "keep",
    "avoid",
    "try",
    "give",
    "get",
    "provide",
    "identify",
    "authenticate",
    "locate",
    "help",
    "hand",
    "call",
    "contact",
    "notify",
    "record",
    "cancel",
    "refund",
    "book",
    "modify",
    "update",
    "treat",
    "answer",
    "reply",
    "respond",
    "repeat",
    "show",
    "share",
    "mention",
    "say",
    "stop",
    "hold",
    "let",
    "take",
    "put",
    "greet",
    "escalate",
    "suggest",
    "recommend",
    "instruct",
    "walk",
    "double",
    "make",
    "invoke",
    "run",
    "execute",
    "perform",
    "search",
    "unlock",
    "log",
    "create",
    "submit",
    "issue",
    "open",
    "close",
    "end",
    "start",
    "reset",
    "restart",
    "switch",
    "turn",
    "enable",
    "disable",
    "add",
    "remove",
    "change",
    "schedule",
    "direct",
    "route",
    "mark",
    "flag",
    "warn",
    "advise",
    "encourage",
    "return",
    "process",
    "handle",
];

/// Leading words that do not change what a sentence says.
const ADVERBIALS: &[&str] = &[
    "first",
    "then",
    "also",
    "otherwise",
    "finally",
    "next",
    "please",
    "generally",
    "additionally",
    "again",
    "so",
];

/// Participles of actions on records: `can be cancelled` permits an
/// action, `can be used to` describes a tool.
const ACTION_PARTICIPLES: &[&str] = &[
    "cancelled",
    "canceled",
    "modified",
    "exchanged",
    "returned",
    "refunded",
    "booked",
    "changed",
    "suspended",
    "lifted",
    "refueled",
    "refuelled",
    "kept",
    "added",
    "removed",
    "upgraded",
    "downgraded",
    "transferred",
    "updated",
    "edited",
    "deleted",
    "resumed",
    "reactivated",
    "paid",
    "issued",
    "approved",
    "offered",
    "compensated",
    "reserved",
    "charged",
    "sent",
];

/// Who can be told what to do.
const ACTORS: &[&str] = &[
    "you",
    "agent",
    "agents",
    "user",
    "users",
    "customer",
    "customers",
    "they",
    "we",
    "i",
    "caller",
    "traveler",
    "passenger",
];

/// The person the agent serves.
/// Words for the person besides its nouns (`sparring_types::words::PERSON_NOUNS`).
const PERSON_WORDS: &[&str] = &[
    "them",
    "they",
    "their",
    "explicit",
    "explicitly",
    "he",
    "she",
];

/// Whether `word` names the person the agent serves.
fn person(word: &str) -> bool {
    PERSON_WORDS.contains(&word) || sparring_types::words::names_person(word)
}

/// What `find` finds in the nearest line of `context` (the headings and
/// lead-ins above a text, outermost first) where it finds anything.
fn nearest(context: &[String], find: impl Fn(&Plain) -> Vec<String>) -> Vec<String> {
    context
        .iter()
        .rev()
        .map(|c| find(&Plain::new(c)))
        .find(|t| !t.is_empty())
        .unwrap_or_default()
}

/// Whether a unit is a rule at all.
pub(crate) fn normative(unit: &Unit) -> bool {
    match &unit.lead {
        Some(lead) => lead_normative(lead),
        None => sentence_normative(&unit.text),
    }
}

/// A procedure is a rule when its opening sentence is, or when it is a
/// bare condition (`If the booking user is a regular member:`).
fn lead_normative(lead: &str) -> bool {
    let p = Plain::new(lead);
    let conditional =
        ["if", "when", "unless"].contains(&p.words.first().map_or("", String::as_str));
    if conditional && !p.text.contains(',') {
        return true;
    }
    sentence_normative(lead)
}

fn sentence_normative(text: &str) -> bool {
    let p = Plain::new(text);
    let w = &p.words;
    let Some(first) = w.first() else {
        return false;
    };
    if text.trim_end().ends_with('?') {
        return false;
    }
    // Pointers and fragments.
    if ["refer", "see", "required", "needed", "optional"].contains(&first.as_str()) {
        return false;
    }
    // A technical prerequisite: `For MMS to work, the user must …`.
    if p.has(&["to", "work"]) && (first == "for" || p.has(&["to", "work", "properly"])) {
        return false;
    }
    // A requirement said as what does not suffice.
    if p.has(&["not", "enough"]) || p.has(&["not", "sufficient"]) {
        return true;
    }
    if STRONG.iter().any(|m| p.has(m)) || not_able(w) {
        return true;
    }
    // The rest counts in the main clause only: `… refund if the user needs
    // to cancel` is not a duty.
    let main = main_clause(&p.text);
    let main_text = main.split(" if ").next().unwrap_or(main);
    let mw = split_words(main_text);
    let has = |phrase: &[&str]| find_in(&mw, phrase).is_some();
    for (i, x) in mw.iter().enumerate() {
        if (x == "have" || x == "has") && mw.get(i + 1).is_some_and(|n| n == "to") {
            let future = i > 0 && ["will", "would"].contains(&mw[i - 1].as_str());
            if !future {
                return true;
            }
        }
        if x == "should" {
            let subject = mw[..i]
                .iter()
                .rev()
                .take(2)
                .any(|s| ACTORS.contains(&s.as_str()));
            let passive = mw.get(i + 1).is_some_and(|n| n == "be")
                && mw.get(i + 2).is_some_and(|n| n.ends_with("ed"));
            if subject || passive {
                return true;
            }
        }
        if x == "can"
            && mw.get(i + 1).is_some_and(|n| n == "be")
            && mw
                .get(i + 2)
                .is_some_and(|n| ACTION_PARTICIPLES.contains(&n.as_str()))
        {
            return true;
        }
    }
    let needs = has(&["need", "to"]) || has(&["needs", "to"]);
    if (needs && !has(&["no", "need", "to"])) || has(&["required", "to"]) {
        return true;
    }
    // `requires confirmation from the customer`, `without their consent`,
    // `No transfer may be made …`.
    let consent =
        p.has_stem(&["confirm", "approv", "consent", "permission", "agree"]) || p.any(&["yes"]);
    if consent
        && p.words.iter().any(|w| person(w))
        && p.any(&[
            "require", "requires", "required", "need", "needs", "without", "until",
        ])
    {
        return true;
    }
    if first == "no" && p.any(&["may", "can", "shall", "should", "will"]) {
        return true;
    }
    if is_limit(&p) && p.any(&["may", "can", "allowed", "only", "must", "should", "cannot"]) {
        return true;
    }
    if p.any(&["required"]) && p.has_stem(&["verif", "secur", "safety", "identit", "authenticat"]) {
        return true;
    }
    // A permission under a condition: `once authenticated, you can …`.
    let conditioned = p.any(&["if", "once", "after", "unless", "provided", "when"])
        && !["check", "see", "ask", "know", "determine"]
            .iter()
            .any(|v| p.has(&[v, "if"]));
    if conditioned {
        for (i, x) in w.iter().enumerate() {
            if (x == "can" || x == "may")
                && i > 0
                && ["you", "agent", "agents", "we"].contains(&w[i - 1].as_str())
            {
                return true;
            }
        }
    }
    // `Before booking, changing flights or cancelling, read the details
    // back …`: the leading clause may hold commas of its own.
    imperative(main) || main != p.text && after_commas(&p.text).any(imperative)
}

/// The text after each comma outside brackets and quotes.
fn after_commas(text: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0i32;
    let mut quote = false;
    let mut at = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '"' => quote = !quote,
            ',' if depth == 0 && !quote => at.push(i + 1),
            _ => {}
        }
    }
    at.into_iter().map(move |i| text[i..].trim_start())
}

/// `not refundable`, `non-transferable`: an action's `-able` word denied
/// (`not suitable` describes, it does not forbid).
fn not_able(w: &[String]) -> bool {
    let action_able = |word: &str| {
        word.strip_suffix("able").is_some_and(|stem| {
            !stem.is_empty()
                && (ACTION_STEMS.iter().any(|(s, _)| stem.starts_with(s))
                    || ["accept", "negoti", "allow", "permiss"]
                        .iter()
                        .any(|s| stem.starts_with(s)))
        })
    };
    w.windows(2)
        .any(|p| (p[0] == "not" || p[0] == "non") && action_able(&p[1]))
        || w.iter().any(|x| {
            x.strip_prefix("non")
                .is_some_and(|rest| action_able(rest.trim_start_matches('-')))
        })
}

/// Whether the clause opens with an instruction.
fn imperative(clause: &str) -> bool {
    if let Some((_, after)) = clause.rsplit_once(':')
        && opens_instruction(split_words(after))
    {
        return true;
    }
    let mut w = split_words(clause);
    // A label such as `Note:` or `Important:` before the sentence.
    if let Some(colon) = clause.find(':')
        && clause[..colon].split_whitespace().count() <= 2
    {
        w = split_words(&clause[colon + 1..]);
    }
    while w.first().is_some_and(|x| ADVERBIALS.contains(&x.as_str())) {
        w.remove(0);
    }
    opens_instruction(w)
}

fn opens_instruction(mut w: Vec<String>) -> bool {
    while w.first().is_some_and(|x| ADVERBIALS.contains(&x.as_str())) {
        w.remove(0);
    }
    if w.first().is_some_and(|x| x == "in") && w.get(1).is_some_and(|x| x == "particular") {
        w.drain(..2);
    }
    w.first().is_some_and(|x| IMPERATIVES.contains(&x.as_str()))
}

/// How a unit reads: `None` when it is not a rule.
pub(crate) fn read_unit(unit: &Unit, tools: &[Tool]) -> Option<Reading> {
    if !normative(unit) {
        return None;
    }
    Some(read_text(
        &unit.text,
        &unit.context,
        unit.lead.as_deref(),
        None,
        tools,
    ))
}

/// Reads a rule's class, tools and details from its text; `class` forces
/// the class (a spec's override) and `lead` marks a procedure.
pub(crate) fn read_text(
    text: &str,
    context: &[String],
    lead: Option<&str>,
    class: Option<RuleClass>,
    tools: &[Tool],
) -> Reading {
    let p = Plain::new(text);
    let scope = Scope::new(tools);
    let own = scope.of(&p);
    let in_context = || nearest(context, |c| scope.of(c));
    let anaphoric = p.any(&["this", "it", "that"]) && p.has(&["action"])
        || p.has(&["the", "action"])
        || p.has(&["this", "action"]);
    // Its own actions first, then the heading it stands under, then the
    // things it names (not for the classes about one action: a sentence
    // about changing a plan is not about `suspend_line` because both
    // mention a line).
    let strong = if !own.is_empty() && !anaphoric {
        own
    } else {
        in_context()
    };
    let by_nouns = || {
        let nouns = scope.by_nouns(&p);
        if nouns.is_empty() {
            nearest(context, |c| scope.by_nouns(c))
        } else {
            nouns
        }
    };
    let named = if strong.is_empty() {
        by_nouns()
    } else {
        strong.clone()
    };
    let all_writes = any_action_that_writes(&p);
    let writes = |list: &[String]| -> Vec<String> {
        if all_writes {
            return scope.writes();
        }
        list.iter().filter(|t| scope.is_write(t)).cloned().collect()
    };
    let order = order_detail(&p, lead, &scope, in_context);
    let guess = || -> RuleClass {
        if is_confirm(&p, lead) {
            RuleClass::ConfirmBefore
        } else if is_auth(&p) {
            RuleClass::AuthenticateFirst
        } else if is_escalate(&p, &scope) {
            RuleClass::Escalate
        } else if is_reveal(&p) {
            RuleClass::NeverReveal
        } else if is_limit(&p) {
            RuleClass::Limit
        } else if is_precondition(&p) {
            RuleClass::Precondition
        } else if order.is_some() {
            RuleClass::Order
        } else {
            RuleClass::Judge
        }
    };
    let class = class.unwrap_or_else(guess);
    let (tools, detail) = match class {
        RuleClass::ConfirmBefore | RuleClass::Precondition => (writes(&strong), Detail::None),
        RuleClass::AuthenticateFirst => {
            let gated = scope.personal(&in_context());
            (gated, Detail::Auth { via: Vec::new() })
        }
        RuleClass::Escalate => {
            let to = scope.escalation();
            let triggers = triggers(text);
            // `Never file a claim for more than $5,000 yourself: transfer …`:
            // the bound on the action the rule hands off instead; the rule
            // covers that action too.
            let unnamed = to
                .iter()
                .fold(text.to_owned(), |t, name| t.replace(name.as_str(), " "));
            let acted: Vec<String> = writes(&scope.of(&Plain::new(&unnamed)))
                .into_iter()
                .filter(|t| !to.contains(t))
                .collect();
            let bounds: Vec<Bound> = bounds(text, &p, &acted, &scope)
                .into_iter()
                .filter(|b| matches!(b.counted, Counted::Argument { .. }))
                .collect();
            let mut tools = to.clone();
            for b in &bounds {
                if let Counted::Argument { tool, .. } = &b.counted
                    && !tools.contains(tool)
                {
                    tools.push(tool.clone());
                }
            }
            (
                tools,
                Detail::Escalate {
                    to,
                    triggers,
                    bounds,
                },
            )
        }
        RuleClass::NeverReveal => {
            let (fields, cards) = reveal_fields(&p);
            let reads = if named.is_empty() {
                scope.reads()
            } else {
                named.clone()
            };
            (reads, Detail::Reveal { fields, cards })
        }
        RuleClass::Limit => {
            let bounds = bounds(text, &p, &named, &scope);
            let per_message = bounds
                .iter()
                .any(|b| matches!(b.counted, Counted::CallsPerMessage));
            let tools = if per_message {
                scope.all()
            } else {
                named.clone()
            };
            (tools, Detail::Limit(bounds))
        }
        RuleClass::Order => match order {
            Some((first, then)) => {
                let mut all = first.clone();
                for t in &then {
                    if !all.contains(t) {
                        all.push(t.clone());
                    }
                }
                (scope.sorted(&all), Detail::Order { first, then })
            }
            None => (named.clone(), Detail::None),
        },
        RuleClass::Judge => (named.clone(), Detail::None),
    };
    Reading {
        class,
        tools: scope.sorted(&tools),
        detail,
    }
}

/// `any action that updates the database`, `any change to the account`.
fn any_action_that_writes(p: &Plain) -> bool {
    let any_action = p.words.windows(2).any(|w| {
        w[0] == "any"
            && (w[1].starts_with("action")
                || w[1] == "change"
                || w[1] == "changes"
                || w[1] == "write")
    });
    any_action && p.has_stem(&["updat", "chang", "modif", "write", "writes"])
}

const OBJECTS: &[&str] = &[
    "price", "prices", "amount", "cost", "charge", "fee", "total", "details", "detail", "action",
    "changes", "plan", "summary", "payee", "yes",
];

fn is_confirm(p: &Plain, lead: Option<&str>) -> bool {
    let confirm = p.has_stem(&["confirm"]) || p.any(&["yes"]) || p.has(&["go", "ahead"]);
    let consent = p.words.iter().enumerate().any(|(i, x)| {
        if ![
            "approval",
            "consent",
            "permission",
            "agreement",
            "approve",
            "agree",
        ]
        .contains(&x.as_str())
        {
            return false;
        }
        let before = p.words[i.saturating_sub(3)..i]
            .iter()
            .any(|b| person(b) || b == "written" || b == "verbal");
        let after = p.words.get(i + 1).is_some_and(|a| a == "from" || a == "of")
            && p.words
                .get(i + 2..i + 4)
                .is_some_and(|n| n.iter().any(|a| person(a)));
        before || after
    });
    if !(confirm || consent) {
        return false;
    }
    if p.any(&["facts", "fact"]) {
        return false;
    }
    let who = p.words.iter().any(|w| person(w)) || p.any(OBJECTS) || consent;
    let acts = p.any(&[
        "before",
        "proceed",
        "proceeding",
        "action",
        "actions",
        "prior",
    ]) || lead.is_some()
        || p.has_stem(&ACTION_STEMS.iter().map(|(s, _)| *s).collect::<Vec<_>>());
    who && acts
}

fn is_auth(p: &Plain) -> bool {
    if p.has_stem(&["authenticat"]) || p.any(&["identity", "verification"]) {
        return true;
    }
    let near_person = |verb: &str| {
        p.words.iter().enumerate().any(|(i, x)| {
            x.starts_with(verb)
                && (p.words[i + 1..].iter().take(3).any(|n| person(n))
                    || p.words[i.saturating_sub(3)..i].iter().any(|n| person(n)))
        })
    };
    if near_person("identif") || near_person("verif") {
        return true;
    }
    if p.has(&["who", "the", "customer", "is"])
        || p.has(&["who", "the", "user", "is"])
        || p.has(&["who", "they", "are"])
        || p.has(&["who", "you", "are", "talking", "to"])
        || p.has(&["who", "you", "are", "speaking", "to"])
    {
        return true;
    }
    // `look the customer up by phone`, `look them up by email`.
    let looks_up = p.words.iter().enumerate().any(|(i, x)| {
        x == "look"
            && p.words
                .get(i + 1..i + 4)
                .is_some_and(|n| n.iter().any(|w| person(w)) && n.iter().any(|w| w == "up"))
    });
    if looks_up {
        return true;
    }
    // `find their profile`, `pull up the customer's record`.
    let record = p.words.iter().enumerate().any(|(i, x)| {
        ["find", "locate", "look", "pull", "open"].contains(&x.as_str())
            && p.words.get(i + 1..i + 4).is_some_and(|n| {
                n.iter()
                    .any(|w| ["their", "customer's", "user's", "his", "her"].contains(&w.as_str()))
                    && n.iter()
                        .any(|w| ["profile", "record"].contains(&w.as_str()))
            })
    });
    if record {
        return true;
    }
    let id_of_person =
        p.has(&["user", "id"]) || p.has(&["customer", "id"]) || p.has(&["account", "id"]);
    id_of_person
        && p.has_stem(&[
            "obtain", "provid", "ask", "locat", "look", "find", "give", "gives",
        ])
}

fn is_escalate(p: &Plain, scope: &Scope) -> bool {
    if p.has_stem(&["escalat"])
        || p.has(&["hand", "off"])
        || p.has(&["hand", "over"])
        || p.any(&["handoff"])
    {
        return true;
    }
    if p.has(&["human", "agent"]) || p.has(&["human", "agents"]) {
        return true;
    }
    if scope.escalation().iter().any(|t| p.any(&[t.as_str()])) {
        return true;
    }
    let money = p.any(&["money", "funds", "dollars", "amount", "balance", "payment"])
        || p.text.contains('$');
    // `Do not transfer without asking`: a bare transfer, where the only
    // tools that transfer hand the person off.
    let only_hand_offs = !scope.escalation().is_empty()
        && scope
            .all()
            .iter()
            .filter(|t| t.contains("transfer"))
            .all(|t| scope.escalation().contains(t));
    if p.has_stem(&["transfer"]) && !money && only_hand_offs {
        return true;
    }
    p.has_stem(&["transfer"])
        && !money
        && p.any(&[
            "human",
            "agent",
            "supervisor",
            "manager",
            "specialist",
            "representative",
            "team",
            "support",
            "department",
            "needed",
        ])
}

const REVEAL_VERBS: &[&str] = &[
    "share", "reveal", "disclose", "show", "display", "expose", "read", "repeat", "print", "tell",
    "mention", "give", "send", "spell", "include", "leak", "away",
];

/// Sensitive things and the field names that hold them.
const SENSITIVE: &[(&[&str], &[&str])] = &[
    (&["card", "number"], &["card_number", "cc_number", "pan"]),
    (&["card", "numbers"], &["card_number", "cc_number", "pan"]),
    (&["full", "card"], &["card_number", "cc_number", "pan"]),
    (&["cvv"], &["cvv", "cvc", "security_code"]),
    (&["security", "code"], &["cvv", "cvc", "security_code"]),
    (&["pin"], &["pin"]),
    (&["password"], &["password", "passcode"]),
    (&["passwords"], &["password", "passcode"]),
    (&["ssn"], &["ssn", "social_security"]),
    (&["social", "security"], &["ssn", "social_security"]),
    (&["account", "number"], &["account_number"]),
    (&["account", "numbers"], &["account_number"]),
    (&["routing"], &["routing_number", "routing"]),
    (&["sort", "code"], &["sort_code"]),
    (&["iban"], &["iban"]),
    (&["salary"], &["salary"]),
    (&["salaries"], &["salary"]),
    (
        &["date", "of", "birth"],
        &["dob", "date_of_birth", "birth_date"],
    ),
    (&["dob"], &["dob", "date_of_birth", "birth_date"]),
    (&["api", "key"], &["api_key", "key", "token", "secret"]),
    (&["token"], &["token"]),
    (
        &["credentials"],
        &["password", "token", "secret", "api_key"],
    ),
    (&["internal", "notes"], &["internal_notes", "notes"]),
    (&["internal"], &[]),
];

fn is_reveal(p: &Plain) -> bool {
    let negated = p.any(&["never", "not", "cannot"]) || p.has(&["keep"]);
    let verb =
        p.any(REVEAL_VERBS) || p.any(&["private", "confidential", "secret", "masked", "mask"]);
    let sensitive = SENSITIVE.iter().any(|(phrase, _)| p.has(phrase))
        || p.has(&["system", "prompt"])
        || p.has(&["last", "four"])
        || ["another", "other", "someone"].iter().any(|o| {
            p.has(&[o, "customer's"]) || p.has(&[o, "user's"]) || p.has(&[o, "customers"])
        });
    negated && verb && sensitive
}

fn reveal_fields(p: &Plain) -> (Vec<String>, bool) {
    let mut fields: Vec<String> = Vec::new();
    for (phrase, names) in SENSITIVE {
        if p.has(phrase) {
            for n in *names {
                if !fields.iter().any(|f| f == n) {
                    fields.push((*n).to_owned());
                }
            }
        }
    }
    let cards =
        p.has(&["card", "number"]) || p.has(&["card", "numbers"]) || p.has(&["full", "card"]);
    (fields, cards)
}

fn is_limit(p: &Plain) -> bool {
    const PHRASES: &[&[&str]] = &[
        &["at", "most"],
        &["no", "more", "than"],
        &["not", "more", "than"],
        &["maximum"],
        &["not", "exceed"],
        &["at", "a", "time"],
        &["once", "per"],
        &["called", "once"],
        &["a", "single"],
        &["limit", "of"],
        &["limited", "to"],
    ];
    let negated = p.any(&["never", "not", "cannot", "no"]);
    if negated && (p.has(&["more", "than"]) || p.any(&["exceed"])) {
        return true;
    }
    let bound_word = ["under", "below", "less", "lower"].iter().any(|b| {
        p.words.iter().enumerate().any(|(i, x)| {
            x == b && {
                let next = if p.words.get(i + 1).is_some_and(|n| n == "than") {
                    i + 2
                } else {
                    i + 1
                };
                p.words.get(next).and_then(|n| number(n)).is_some()
            }
        })
    });
    if bound_word && p.any(&["must", "should", "stay", "keep", "only", "always"]) {
        return true;
    }
    if PHRASES.iter().any(|ph| p.has(ph)) {
        return true;
    }
    // `up to` counts with a number after it only.
    if p.find(&["up", "to"])
        .and_then(|i| p.words.get(i + 2))
        .and_then(|w| number(w))
        .is_some_and(|n| {
            n > 1.0
                || p.words
                    .iter()
                    .any(|w| w.chars().all(|c| c.is_ascii_digit()))
        })
    {
        return true;
    }
    // `only … one`, `only once`, `can only have one`.
    p.words.iter().enumerate().any(|(i, x)| {
        x == "only"
            && p.words[i + 1..].iter().take(3).any(|n| {
                n == "once"
                    || n == "one"
                    || (n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            })
    })
}

/// States a record can be in.
const STATES: &[&[&str]] = &[
    &["pending"],
    &["delivered"],
    &["processed"],
    &["shipped"],
    &["cancelled"],
    &["canceled"],
    &["active"],
    &["inactive"],
    &["suspended"],
    &["overdue"],
    &["paid"],
    &["unpaid"],
    &["flown"],
    &["frozen"],
    &["closed"],
    &["expired"],
    &["locked"],
    &["blocked"],
    &["delayed"],
    &["flying"],
    &["landed"],
    &["status"],
    &["basic", "economy"],
    &["regular", "member"],
    &["silver"],
    &["gold"],
    &["business"],
    &["in", "the", "past"],
    &["enough", "balance"],
    &["sufficient", "balance"],
    &["user", "profile"],
    &["within", "the", "last"],
    &["on", "time"],
    &["terminated"],
    &["denied"],
    &["rejected"],
    &["approved"],
    &["lapsed"],
];

fn is_precondition(p: &Plain) -> bool {
    let restricted = [
        &["only"][..],
        &["cannot"],
        &["can", "not"],
        &["not", "allowed"],
        &["allowed", "to"],
        &["do", "not"],
        &["never"],
        &["must"],
        &["should", "always"],
        &["should", "only"],
        &["should", "not"],
    ]
    .iter()
    .any(|m| p.has(m))
        || p.words
            .windows(2)
            .any(|w| w[0] == "not" && ACTION_PARTICIPLES.contains(&w[1].as_str()))
        || p.words.windows(4).any(|w| {
            w[0] == "can"
                && w[1] == "be"
                && ACTION_PARTICIPLES.contains(&w[2].as_str())
                && (w[3] == "if" || w[3] == "for" || w[3] == "only")
        });
    // A state named in brackets is an example, not a requirement:
    // `the reason for cancellation (change of plan, airline cancelled flight …)`.
    let outside = Plain::new(&without_brackets(&p.text));
    // A sentence about what to say of an action is no condition on it.
    let speech = sparring_types::words::SPEECH_VERBS
        .iter()
        .any(|v| p.has(&[v]));
    restricted && !speech && STATES.iter().any(|s| outside.has(s))
}

fn without_brackets(text: &str) -> String {
    let mut depth = 0;
    text.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    return false;
                }
                _ => {}
            }
            depth <= 0
        })
        .collect()
}

/// The words of a text that may name what a tool acts on, singular. The
/// person, the agent and the conversation are not what a tool acts on
/// (`modify_user_address` is not about every `user`).
fn objects(p: &Plain) -> Vec<String> {
    p.words
        .iter()
        .filter(|w| !person(w) && !NOT_OBJECTS.contains(&w.as_str()))
        .map(|w| singular(w))
        .collect()
}

/// Words of a policy that never name what a tool acts on.
const NOT_OBJECTS: &[&str] = &[
    "agent",
    "agents",
    "tool",
    "tools",
    "call",
    "calls",
    "policy",
    "conversation",
    "conversations",
    "information",
    "request",
    "requests",
    "human",
    "message",
    "messages",
    "users",
    "customers",
    "id",
    "ids",
    "details",
    "detail",
];

/// Word stems of actions and the tool verbs they stand for.
pub const ACTION_STEMS: &[(&str, &[&str])] = &[
    ("cancel", &["cancel"]),
    ("refund", &["refund"]),
    ("return", &["return"]),
    ("exchang", &["exchange"]),
    ("modif", &["modify", "update", "change", "edit"]),
    ("updat", &["modify", "update", "change", "edit"]),
    ("chang", &["modify", "update", "change", "edit"]),
    ("edit", &["modify", "update", "change", "edit"]),
    ("alter", &["modify", "update", "change", "edit"]),
    ("book", &["book", "create"]),
    ("suspend", &["suspend"]),
    ("resum", &["resume", "reactivate"]),
    ("reactivat", &["resume", "reactivate"]),
    ("refuel", &["refuel"]),
    ("enabl", &["enable"]),
    ("disabl", &["disable"]),
    ("delet", &["delete", "remove"]),
    ("remov", &["delete", "remove"]),
    ("transfer", &["transfer"]),
    ("schedul", &["schedule"]),
    ("send", &["send"]),
    ("issu", &["issue"]),
    ("creat", &["create"]),
    ("add", &["add"]),
    ("close", &["close"]),
    ("block", &["block"]),
    ("freez", &["freeze"]),
    ("unfreez", &["unfreeze"]),
    ("unblock", &["unblock"]),
    ("activat", &["activate"]),
    (
        "compensat",
        &["certificate", "voucher", "compensate", "compensation"],
    ),
];

/// The spec's tools as scoping sees them.
pub(crate) struct Scope<'a> {
    tools: &'a [Tool],
}

impl<'a> Scope<'a> {
    pub(crate) fn new(tools: &'a [Tool]) -> Self {
        Self { tools }
    }

    pub(crate) fn all(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec.name.clone()).collect()
    }

    /// Tool names in the spec's order, each once.
    pub(crate) fn sorted(&self, names: &[String]) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| &t.spec.name)
            .filter(|n| names.contains(n))
            .cloned()
            .collect()
    }

    fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.spec.name == name)
    }

    pub(crate) fn is_write(&self, name: &str) -> bool {
        self.tool(name).is_some_and(Tool::writes)
    }

    /// The names of the tools that pass `keep`, in the spec's order.
    fn names(&self, keep: impl Fn(&Tool) -> bool) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| keep(t))
            .map(|t| t.spec.name.clone())
            .collect()
    }

    pub(crate) fn writes(&self) -> Vec<String> {
        self.names(Tool::writes)
    }

    pub(crate) fn reads(&self) -> Vec<String> {
        self.names(|t| t.model.operation == Operation::Read)
    }

    /// Tools that hand the person to someone else (`transfer_to_human_agents`,
    /// `escalate_ticket`).
    pub(crate) fn escalation(&self) -> Vec<String> {
        self.names(Tool::escalates)
    }

    /// Tools that touch the person's own records: everything but searches
    /// of the catalogue, the hand-off and tools with no entity; within
    /// `within` when given.
    pub(crate) fn personal(&self, within: &[String]) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| within.is_empty() || within.contains(&t.spec.name))
            .filter(|t| t.personal())
            .map(|t| t.spec.name.clone())
            .collect()
    }

    /// The tools a text names: by name, by the verbs of their actions
    /// (narrowed by the nouns beside them), or by `action` on an entity.
    pub(crate) fn of(&self, p: &Plain) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let add = |name: &String, out: &mut Vec<String>| {
            if !out.contains(name) {
                out.push(name.clone());
            }
        };
        for t in self.tools {
            if p.words.contains(&t.spec.name) {
                add(&t.spec.name, &mut out);
            }
        }
        // A tool named outright is what the text is about.
        if !out.is_empty() {
            return self.sorted(&out);
        }
        let nouns = objects(p);
        let lift = p.has(&["lift", "the", "suspension"]) || p.has(&["lift", "suspension"]);
        let mut families: Vec<&[&str]> = ACTION_STEMS
            .iter()
            .filter(|(stem, _)| p.words.iter().any(|w| w.starts_with(stem)))
            .map(|(_, verbs)| *verbs)
            .collect();
        if p.any(&["pay", "pays", "paying"]) {
            families.push(&["pay"]);
        }
        if lift {
            families.retain(|f| !f.contains(&"suspend"));
            families.push(&["resume", "reactivate"]);
        }
        // A tool's own verb, where no family above holds it ("before you
        // reschedule", "can only be refilled").
        let own: Vec<&str> = self
            .tools
            .iter()
            .map(|t| t.model.verb.as_str())
            .filter(|v| v.len() >= 4 && !ACTION_STEMS.iter().any(|(_, f)| f.contains(v)))
            .filter(|v| {
                let stem = v.trim_end_matches('e');
                p.words
                    .iter()
                    .any(|w| w.starts_with(stem) && w.len() <= v.len() + 3)
            })
            .collect();
        let own: Vec<[&str; 1]> = own.into_iter().map(|v| [v]).collect();
        families.extend(own.iter().map(|v| &v[..]));
        for verbs in families {
            let with_verb: Vec<&Tool> = self
                .tools
                .iter()
                .filter(|t| t.words().iter().any(|w| verbs.contains(&w.as_str())))
                .collect();
            // Narrowed first by what the tool acts on beside its entity
            // (`change flights` → `update_reservation_flights`), then by
            // any word of its name (`modify … order` → the order tools).
            let matching = |beside_entity: bool| -> Vec<&Tool> {
                with_verb
                    .iter()
                    .copied()
                    .filter(|t| {
                        let entity = t.model.entity.as_deref().map(singular).unwrap_or_default();
                        t.objects()
                            .iter()
                            .filter(|w| !verbs.contains(&w.as_str()))
                            .filter(|w| !beside_entity || singular(w) != entity)
                            .any(|w| nouns.iter().any(|n| *n == singular(w)))
                    })
                    .collect()
            };
            let strong = matching(true);
            let weak = matching(false);
            let chosen = if !strong.is_empty() {
                strong
            } else if !weak.is_empty() {
                weak
            } else {
                with_verb
            };
            for t in chosen {
                add(&t.spec.name, &mut out);
            }
        }
        if p.has(&["payment", "request"]) {
            for t in self.tools {
                let w = t.words();
                if w.iter().any(|x| x == "payment") && w.iter().any(|x| x == "request") {
                    add(&t.spec.name, &mut out);
                }
            }
        }
        let generic = p.has_stem(&["action"]) || p.has(&["act", "on"]);
        if out.is_empty() && generic {
            let on_entity: Vec<&Tool> = self
                .tools
                .iter()
                .filter(|t| t.writes())
                .filter(|t| {
                    t.model
                        .entity
                        .as_ref()
                        .is_some_and(|e| nouns.iter().any(|n| *n == singular(e)))
                })
                .collect();
            let chosen: Vec<&Tool> = if on_entity.is_empty() {
                self.tools.iter().filter(|t| t.writes()).collect()
            } else {
                on_entity
            };
            for t in chosen {
                add(&t.spec.name, &mut out);
            }
        }
        self.sorted(&out)
    }

    /// With no action named, the tools whose objects the text names (`a
    /// single payment …` → `schedule_payment`, `cancel_payment`): weaker
    /// than the heading the text stands under.
    pub(crate) fn by_nouns(&self, p: &Plain) -> Vec<String> {
        let nouns = objects(p);
        let out: Vec<String> = self
            .tools
            .iter()
            .filter(|t| {
                let verb = t.words().into_iter().next().unwrap_or_default();
                t.objects()
                    .iter()
                    .filter(|w| **w != verb)
                    .any(|w| nouns.iter().any(|n| *n == singular(w)))
            })
            .map(|t| t.spec.name.clone())
            .collect();
        self.sorted(&out)
    }

    /// Read tools about an entity a text names (`check the bill status` →
    /// `get_bills_for_customer`).
    fn reads_of(&self, p: &Plain) -> Vec<String> {
        let nouns: Vec<String> = p.words.iter().map(|w| singular(w)).collect();
        self.tools
            .iter()
            .filter(|t| t.model.operation == Operation::Read)
            .filter(|t| {
                p.words.contains(&t.spec.name)
                    || t.model
                        .entity
                        .as_ref()
                        .is_some_and(|e| nouns.iter().any(|n| *n == singular(e)))
            })
            .map(|t| t.spec.name.clone())
            .collect()
    }

    /// Parameters of a tool.
    fn params(&self, name: &str) -> Vec<(String, serde_json::Value)> {
        self.tool(name)
            .and_then(|t| t.spec.parameters.get("properties"))
            .and_then(serde_json::Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }
}

/// First and then tools of an ordering sentence: `X before Y`, `before Y,
/// X`, `after X, Y`, `first X, then Y`, or the steps of a procedure. `None`
/// unless both sides name tools; a rule under a condition (`If the user
/// complains …`) is not an order of tools.
fn order_detail(
    p: &Plain,
    lead: Option<&str>,
    scope: &Scope<'_>,
    context: impl Fn() -> Vec<String>,
) -> Option<(Vec<String>, Vec<String>)> {
    let text = p.text.as_str();
    if ["if ", "when ", "unless "]
        .iter()
        .any(|o| text.starts_with(o))
        && lead.is_none()
    {
        return None;
    }
    let side = |part: &str| -> Vec<String> {
        let part = Plain::new(part);
        let mut tools = scope.of(&part);
        let named = tools.iter().any(|t| part.words.contains(t));
        for r in scope.reads_of(&part).into_iter().filter(|_| !named) {
            if part.has_stem(&["check", "look", "get", "find", "verify", "review", "read"])
                && !tools.contains(&r)
            {
                tools.push(r);
            }
        }
        if tools.is_empty() && (part.has(&["act", "on"]) || part.has_stem(&["action"])) {
            tools = context();
        }
        tools
    };
    let split = |at: &str| -> Option<(String, String)> {
        text.find(at)
            .map(|i| (text[..i].to_owned(), text[i + at.len()..].to_owned()))
    };
    let pair = if lead.is_some_and(|l| l.to_lowercase().contains("step")) {
        let body = text.split_once(':').map_or(text, |(_, b)| b);
        let steps: Vec<&str> = body.split(';').collect();
        // The first step that names a tool, against the steps after it.
        let mut found = None;
        for (i, s) in steps.iter().enumerate() {
            let first = side(s);
            if first.is_empty() {
                continue;
            }
            let then: Vec<String> = steps[i + 1..]
                .iter()
                .flat_map(|s| scope.of(&Plain::new(s)))
                .filter(|t| !first.contains(t))
                .collect();
            if !then.is_empty() {
                found = Some((first, then));
                break;
            }
        }
        found
    } else if let Some(rest) = text.strip_prefix("before ") {
        rest.split_once(',')
            .map(|(then, first)| (side(first), side(then)))
    } else if let Some(rest) = text.strip_prefix("after ") {
        rest.split_once(',')
            .map(|(first, then)| (side(first), side(then)))
    } else if let Some((first, then)) = split(" before ") {
        Some((side(&first), side(&then)))
    } else if let Some((then, first)) = split(" after ") {
        Some((side(&first), side(&then)))
    } else if let Some((first, then)) = split(" then ") {
        Some((side(&first), side(&then)))
    } else {
        None
    };
    let (first, then) = pair?;
    let then: Vec<String> = then.into_iter().filter(|t| !first.contains(t)).collect();
    (!first.is_empty() && !then.is_empty()).then_some((first, then))
}

/// What a limit bounds and by how much.
fn bounds(text: &str, p: &Plain, scope_tools: &[String], scope: &Scope<'_>) -> Vec<Bound> {
    let w = &p.words;
    let mut out = Vec::new();
    let per_message = p.has(&["at", "a", "time"])
        || p.has(&["same", "message"])
        || p.has(&["per", "message"])
        || p.has(&["one", "message"]);
    let tool_calls =
        p.has(&["tool", "call"]) || p.has(&["tool", "calls"]) || p.any(&["tool", "tools"]);
    if per_message && tool_calls {
        let max = w
            .iter()
            .position(|x| x == "tool")
            .and_then(|i| w[..i].iter().rev().find_map(|x| number(x)))
            .unwrap_or(1.0);
        out.push(Bound {
            counted: Counted::CallsPerMessage,
            max,
        });
        return out;
    }
    if p.has(&["once", "per"]) || p.has(&["called", "once"]) || p.has(&["only", "once"]) {
        for t in scope_tools {
            out.push(Bound {
                counted: Counted::CallsPerRecord { tool: t.clone() },
                max: 1.0,
            });
        }
        return out;
    }
    // `at most N things`, `no more than N things`, `up to N things`:
    // each number with the words after it.
    let openers: &[&[&str]] = &[
        &["at", "most"],
        &["more", "than"],
        &["under"],
        &["below"],
        &["less", "than"],
        &["up", "to"],
        &["maximum", "of"],
        &["exceed"],
        &["a", "single"],
    ];
    let mut pairs: Vec<(f64, Vec<String>)> = Vec::new();
    for opener in openers {
        let mut from = 0;
        while let Some(at) = find_in(&w[from..], opener).map(|i| i + from) {
            let after = at + opener.len();
            let (n, noun_at) = if opener == &["a", "single"] {
                (Some(1.0), after)
            } else {
                (w.get(after).and_then(|x| number(x)), after + 1)
            };
            if let Some(n) = n {
                let noun: Vec<String> = w[noun_at.min(w.len())..]
                    .iter()
                    .take_while(|x| {
                        !["and", "or", "per", "in", "for", "at", "on"].contains(&x.as_str())
                    })
                    .take(3)
                    .cloned()
                    .collect();
                pairs.push((n, noun));
            }
            from = after;
        }
    }
    // `The maximum amount of data that can be refueled is 2GB.`
    if pairs.is_empty()
        && p.any(&["maximum"])
        && let Some(is) = w.iter().rposition(|x| x == "is")
        && let Some(n) = w.get(is + 1).and_then(|x| number(x))
    {
        let mut noun: Vec<String> = w[..is].to_vec();
        noun.retain(|x| {
            !["the", "maximum", "amount", "of", "that", "can", "be"].contains(&x.as_str())
        });
        // The unit glued to the number (`2gb`) names the thing too.
        let unit: String = w[is + 1]
            .chars()
            .skip_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if !unit.is_empty() {
            noun.push(unit);
        }
        pairs.push((n, noun));
    }
    let money = text.contains('$') || p.any(&["dollars", "dollar", "usd", "eur", "euros"]);
    for (max, noun) in pairs {
        if let Some(counted) = counted(&noun, money, scope_tools, scope) {
            out.push(Bound { counted, max });
        }
    }
    out
}

/// What a bounded noun counts among the tools' parameters.
fn counted(noun: &[String], money: bool, tools: &[String], scope: &Scope<'_>) -> Option<Counted> {
    let stems: Vec<String> = noun.iter().map(|n| singular(n)).collect();
    let head = stems.last().cloned().unwrap_or_default();
    // (tool, parameter, its JSON type, its name's words in the singular).
    let params: Vec<(String, String, String, Vec<String>)> = tools
        .iter()
        .flat_map(|tool| {
            scope.params(tool).into_iter().map(move |(param, schema)| {
                let kind = schema
                    .get("type")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let words = crate::tool::name_words(&param)
                    .iter()
                    .map(|w| singular(w))
                    .collect();
                (tool.clone(), param, kind, words)
            })
        })
        .collect();
    // `at most five passengers`: the length of a list argument.
    if let Some((tool, param, ..)) = params
        .iter()
        .find(|(_, _, kind, words)| kind == "array" && !head.is_empty() && words.contains(&head))
    {
        return Some(Counted::ArrayLen {
            tool: tool.clone(),
            param: param.clone(),
        });
    }
    // `at most three gift cards` among `payment_methods` items.
    let key = stems.join("_");
    let kinds = [
        "gift_card",
        "credit_card",
        "certificate",
        "debit_card",
        "paypal",
        "voucher",
    ];
    if let Some(k) = kinds.iter().find(|k| key.contains(*k))
        && let Some((tool, param, ..)) = params
            .iter()
            .find(|(_, param, kind, _)| kind == "array" && param.contains("payment"))
    {
        return Some(Counted::ArrayItems {
            tool: tool.clone(),
            param: param.clone(),
            containing: (*k).to_owned(),
        });
    }
    // `at most 2GB`, `more than $1,000`: a number argument.
    let money = money
        || stems
            .iter()
            .any(|s| ["dollar", "usd", "eur", "euro", "money"].contains(&s.as_str()));
    params
        .iter()
        .find(|(_, _, kind, words)| {
            (kind == "number" || kind == "integer")
                && (words.iter().any(|w| stems.contains(w))
                    || (money && words.iter().any(|w| w == "amount")))
        })
        .map(|(tool, param, ..)| Counted::Argument {
            tool: tool.clone(),
            param: param.clone(),
        })
}

/// Verbs of asking: a condition made of them and pronouns asks for the
/// hand-off itself.
const REQUEST_VERBS: &[&str] = &[
    "ask", "asks", "request", "requests", "want", "wants", "wish", "wishes", "need", "needs",
];

/// Words that stand for the person or the thing handed off.
const PRONOUNS: &[&str] = &[
    "it", "one", "them", "this", "that", "they", "she", "him", "patient", "user", "customer",
];

const SKIP: &[&str] = &[
    "the",
    "a",
    "an",
    "their",
    "his",
    "her",
    "its",
    "of",
    "to",
    "in",
    "on",
    "is",
    "are",
    "has",
    "have",
    "had",
    "and",
    "any",
    "some",
    "that",
    "this",
    "user",
    "customer",
    "caller",
    "traveler",
    "person",
    "they",
    "reports",
    "report",
    "says",
    "mentions",
    "tells",
    "asks",
    "explicitly",
    "wants",
    "complains",
    "about",
    "already",
    "been",
    "be",
    "was",
    "there",
    "it",
    "for",
    "with",
    "from",
    "who",
    "or",
];

/// Triggers of a hand-off rule: `If it shows "Locked", escalate …` →
/// `Locked`; `If the customer reports fraud or a stolen card, transfer …` →
/// `fraud`, `stolen card`; a request for a human.
fn triggers(text: &str) -> Vec<Trigger> {
    let p = Plain::new(text);
    let mut out = Vec::new();
    let condition = if let Some(rest) = ["if ", "when ", "whenever "]
        .iter()
        .find_map(|o| p.text.strip_prefix(o))
    {
        // Up to the instruction: `If A, or B, transfer them …` → `A, or B`.
        let main = after_commas(rest)
            .find(|c| imperative(c))
            .or_else(|| after_commas(rest).next());
        match main {
            Some(m) => rest[..rest.len() - m.len()]
                .trim_end()
                .trim_end_matches(',')
                .to_owned(),
            None => rest.to_owned(),
        }
    } else if let Some((_, rest)) = p.text.split_once(" if ") {
        rest.to_owned()
    } else if let Some((_, rest)) = p.text.split_once(" when ") {
        rest.to_owned()
    } else {
        String::new()
    };
    if condition.is_empty() {
        return out;
    }
    // Only a condition whose instruction is to hand off: `If the user wants a
    // human, tell them you can help first` is no reason to hand off.
    let instruction = Plain::new(&p.text.replacen(&condition, "", 1));
    let hands_off = instruction.has_stem(&["transfer", "escalat", "handoff"])
        || instruction.has(&["hand", "off"])
        || instruction.has(&["hand", "over"]);
    let forbids = instruction.any(&["never"]) || instruction.has(&["do", "not"]);
    if !hands_off || forbids {
        return out;
    }
    let cond = Plain::new(&condition);
    let human = |c: &Plain| {
        c.has_stem(&["human", "person", "manager", "supervisor", "representative"])
            && c.has_stem(&["ask", "request", "want", "speak", "talk", "demand"])
    };
    if human(&cond) {
        // `asks for a human agent 4 times`: the fourth request.
        let times = cond
            .words
            .windows(2)
            .find(|w| w[1] == "times")
            .and_then(|w| number(&w[0]))
            .map_or(1, |n| n.max(1.0) as usize);
        out.push(Trigger::HumanRequest { times });
    }
    // Quoted values.
    let mut quoted = condition.split('"').skip(1).step_by(2).peekable();
    if quoted.peek().is_some() {
        for q in quoted {
            if !q.trim().is_empty() {
                out.push(Trigger::Words(vec![q.trim().to_lowercase()]));
            }
        }
        return out;
    }
    // What the agent cannot do is not something to see in the conversation.
    if cond.any(&["cannot", "unable"]) || cond.has(&["not", "able"]) {
        return out;
    }
    for alternative in condition.split([',', ';']).flat_map(|c| c.split(" or ")) {
        if human(&Plain::new(alternative)) {
            continue;
        }
        let words: Vec<String> = split_words(alternative)
            .into_iter()
            .filter(|w| w.len() > 2 && !SKIP.contains(&w.as_str()))
            .collect();
        // `when they ask for it`: a request for the hand-off itself, not
        // the word `ask` (which every "last time I asked" would meet).
        if !words.is_empty()
            && words
                .iter()
                .all(|w| REQUEST_VERBS.contains(&w.as_str()) || PRONOUNS.contains(&w.as_str()))
        {
            let request = Trigger::HumanRequest { times: 1 };
            if !out.contains(&request) {
                out.push(request);
            }
            continue;
        }
        if !words.is_empty() && words.len() <= 3 {
            out.push(Trigger::Words(words));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str) -> Unit {
        Unit {
            text: text.to_owned(),
            context: Vec::new(),
            lead: None,
            block: 0,
        }
    }

    #[test]
    fn rules_and_descriptions() {
        for rule in [
            "You must confirm with the customer before issuing a refund.",
            "Never guess an order number.",
            "Only orders that are pending can be cancelled.",
            "If it is ON, guide the user to use toggle_airplane_mode() to turn it OFF.",
            "Use check_sim_status() to check the status of the SIM card.",
            "Once the user has been authenticated, you can provide the user with information.",
            "The remaining amount of a travel certificate is not refundable.",
            "The user can add but not remove checked bags.",
            "For name lookup, date of birth is required for verification purposes.",
            "This has to be done even when the user already provides the user id.",
            "Each reservation can have at most five passengers.",
            "Note: Product ID and Item ID have no relations and should not be confused!",
        ] {
            assert!(normative(&unit(rule)), "should be a rule: {rule}");
        }
        for not in [
            "There are three cabin classes.",
            "When mobile data is unavailable a speed test should return 'no connection'.",
            "For MMS to work, the user must have cellular service and mobile data (any speed).",
            "Required for some app functions to work properly.",
            "Refer to the general policy for guidelines on enabling roaming.",
            "After you resume the line, the user will have to reboot their device to get service.",
            "You can check if Airplane Mode is ON by using check_status_bar() or check_network_status().",
            "Good cellular service is required for calls, texts, and mobile data.",
            "The travel insurance is 30 dollars per passenger and enables full refund if the user needs to cancel the flight given health or weather reasons.",
            "check_status_bar - Shows what icons are currently visible.",
        ] {
            assert!(!normative(&unit(not)), "should not be a rule: {not}");
        }
    }
}
