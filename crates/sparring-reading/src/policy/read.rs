//! Cutting a policy into the units that may be rules.
//!
//! A policy is markdown-ish text: headings, paragraphs, bullet and numbered
//! lists. A unit is one sentence of a paragraph or of a list item, or a
//! *procedure*: a sentence ending in a colon (or in no punctuation at all)
//! followed by a list completes itself with that list (`To refuel data you
//! should: ask …; confirm the price; apply …`), so the sentence and every
//! item under it are one unit. A short line with no verb before a list is a
//! *label* (`Payment:`, `Change cabin:`): its items stay sentences of their
//! own and the label joins their context, as headings do.

use crate::text::push;

/// A piece of the policy that may be a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The text, markdown emphasis removed (`**`, `__`), one line.
    pub(crate) text: String,
    /// Headings and labels above it, outermost first.
    pub(crate) context: Vec<String>,
    /// For a procedure, its opening sentence (the part before the items).
    pub(crate) lead: Option<String>,
    /// Index of the paragraph or list item it came from.
    pub(crate) block: usize,
}

#[derive(Clone, Debug)]
enum Line {
    Blank,
    Heading(usize, String),
    /// A list item: indent, text, and whether it is a bold label
    /// (`**Payment:**`).
    Bullet(usize, String, bool),
    /// A line of a paragraph: indent, text, bold label.
    Text(usize, String, bool),
}

/// Whether a line is all bold and ends in a colon (`**When to use it:**`):
/// a label, whatever its words.
fn bold_label(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("**")
        && (t.ends_with(":**") || t.ends_with("**:"))
        && t.matches("**").count() == 2
}

fn indent_of(raw: &str) -> usize {
    raw.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// The text after a list marker (`-`, `*`, `•`, `+`, `1.`, `2)`), if the
/// line is a list item.
fn bullet_text(line: &str) -> Option<&str> {
    for marker in ["- ", "* ", "• ", "+ "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return Some(rest.trim());
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits <= 3 {
        let rest = &line[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(r.trim());
        }
    }
    None
}

fn lines(policy: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for raw in policy.lines() {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            out.push(Line::Blank);
            continue;
        }
        // Wrapper tags (`<main_policy>`) are structure, not text.
        if trimmed.starts_with('<') && trimmed.ends_with('>') && !trimmed.contains(' ') {
            out.push(Line::Blank);
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('#') {
            let level = 1 + rest.chars().take_while(|c| *c == '#').count();
            out.push(Line::Heading(
                level,
                clean(rest.trim_start_matches('#').trim()),
            ));
            continue;
        }
        let indent = indent_of(raw);
        match bullet_text(trimmed) {
            Some(text) => out.push(Line::Bullet(indent, clean(text), bold_label(text))),
            None => out.push(Line::Text(indent, clean(trimmed), bold_label(trimmed))),
        }
    }
    out
}

/// Markdown emphasis out; whitespace collapsed.
pub(crate) fn clean(text: &str) -> String {
    text.replace("**", "")
        .replace("__", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A paragraph or a list item, with the items nested under it.
#[derive(Clone, Debug)]
struct Block {
    text: String,
    bullet: bool,
    indent: usize,
    children: Vec<Block>,
    /// Headings above it, outermost first.
    headings: Vec<String>,
    /// A bold line ending in a colon: a label for the list under it.
    label: bool,
}

impl Block {
    /// A block of one line, a list item or not, under `headings` (level,
    /// text); its children come later.
    fn line(
        text: &str,
        bullet: bool,
        indent: usize,
        label: bool,
        headings: &[(usize, String)],
    ) -> Self {
        Block {
            text: text.to_owned(),
            bullet,
            indent,
            children: Vec::new(),
            headings: headings.iter().map(|(_, h)| h.clone()).collect(),
            label,
        }
    }
}

/// Groups lines into blocks: paragraphs (text lines in a row) and list
/// items (with their wrapped continuation lines), nested by indent, a list
/// hanging under the paragraph right before it when that paragraph leads
/// into it.
fn blocks(policy: &str) -> Vec<Block> {
    let lines = lines(policy);
    // First the flat sequence, each with its headings.
    let mut flat: Vec<Block> = Vec::new();
    let mut headings: Vec<(usize, String)> = Vec::new();
    // Whether the previous line continues: text right after text, or an
    // indented line right after a list item.
    let mut open = false;
    for line in &lines {
        match line {
            Line::Blank => open = false,
            Line::Heading(level, text) => {
                headings.retain(|(l, _)| l < level);
                headings.push((*level, text.clone()));
                open = false;
            }
            Line::Bullet(indent, text, label) => {
                flat.push(Block::line(text, true, *indent, *label, &headings));
                open = true;
            }
            Line::Text(indent, text, label) => {
                let continues = open
                    && flat
                        .last()
                        .is_some_and(|b| if b.bullet { *indent > b.indent } else { true });
                if continues && let Some(last) = flat.last_mut() {
                    last.text.push(' ');
                    last.text.push_str(text);
                } else {
                    flat.push(Block::line(text, false, *indent, *label, &headings));
                }
                open = true;
            }
        }
    }
    // Then nest: items under the item with a smaller indent before them;
    // a list under the paragraph before it when the paragraph leads in.
    let mut out: Vec<Block> = Vec::new();
    let mut i = 0;
    while let Some(b) = flat.get(i) {
        if b.bullet {
            let (items, next) = take_list(&flat, i, None, &b.headings);
            out.extend(items);
            i = next;
            continue;
        }
        let mut p = b.clone();
        i += 1;
        let list_follows = flat
            .get(i)
            .is_some_and(|n| n.bullet && n.headings == p.headings);
        if leads_in(&p.text) && list_follows {
            let (items, next) = take_list(&flat, i, None, &p.headings);
            p.children = items;
            i = next;
        }
        out.push(p);
    }
    out
}

/// The list items from `i` on, each with the items indented under it:
/// items under the same headings, deeper than `parent` when given.
fn take_list(
    flat: &[Block],
    mut i: usize,
    parent: Option<usize>,
    headings: &[String],
) -> (Vec<Block>, usize) {
    let mut items = Vec::new();
    while let Some(b) = flat.get(i) {
        if !b.bullet || b.headings != headings || parent.is_some_and(|p| b.indent <= p) {
            break;
        }
        let mut item = b.clone();
        let (children, next) = take_list(flat, i + 1, Some(b.indent), headings);
        item.children = children;
        items.push(item);
        i = next;
    }
    (items, i)
}

/// Whether a paragraph or item leads into a list: it ends in a colon, or
/// in no sentence punctuation.
fn leads_in(text: &str) -> bool {
    let t = text.trim_end();
    t.ends_with(':') || !t.ends_with(['.', '!', '?', ')', '"', '\''])
}

/// Words that make a lead-in a sentence rather than a label.
const VERB_CUES: &[&str] = &[
    "is",
    "are",
    "was",
    "were",
    "be",
    "has",
    "have",
    "can",
    "should",
    "must",
    "need",
    "needs",
    "include",
    "includes",
    "containing",
    "contains",
    "following",
    "specifies",
    "covered",
    "you",
    "we",
    "they",
    "if",
    "when",
    "to",
    "these",
    "here",
    "will",
    "may",
];

/// Whether a lead-in is a label (`Payment:`, `Change cabin:`, `For each
/// date:`): at most four words, none of them a verb cue.
fn is_label(lead: &str) -> bool {
    let words: Vec<String> = lead
        .trim_end_matches(':')
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    words.len() <= 4 && !words.iter().any(|w| VERB_CUES.contains(&w.as_str()))
}

/// Abbreviations that end in a period but not a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "etc.", "vs.", "approx.", "mr.", "ms.", "dr.", "no.",
];

/// Splits text into sentences at `.`, `!` and `?` followed by a space,
/// except inside quotes and after abbreviations (`e.g.`).
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut double = false;
    let mut single = false;
    for (i, &c) in chars.iter().enumerate() {
        cur.push(c);
        let prev = if i == 0 {
            None
        } else {
            chars.get(i - 1).copied()
        };
        let next = chars.get(i + 1).copied();
        match c {
            '"' | '“' | '”' => double = !double,
            '\'' | '‘' | '’' => {
                let opens = prev.is_none_or(|p| p.is_whitespace() || p == '(');
                let closes = next.is_none_or(|n| n.is_whitespace() || ",.;:!?)".contains(n));
                if single && closes {
                    single = false;
                } else if opens && !single {
                    single = true;
                }
            }
            _ => {}
        }
        if double || single {
            continue;
        }
        // A quote closing after the sentence's stop ends it too: `called
        // "agent tools." These …`.
        let closes_quote = matches!(c, '"' | '”' | '\'' | '’')
            && prev.is_some_and(|p| matches!(p, '.' | '!' | '?'));
        let ends =
            (matches!(c, '.' | '!' | '?') || closes_quote) && next.is_none_or(char::is_whitespace);
        if !ends {
            continue;
        }
        // `documentation, receipts... from the customer`: a lowercase word
        // after the stop continues the sentence.
        let next_word = chars[i + 1..].iter().find(|c| !c.is_whitespace());
        if next_word.is_some_and(|n| n.is_lowercase()) {
            continue;
        }
        let lower = cur.to_lowercase();
        let last_word = lower.split_whitespace().last().unwrap_or("");
        if c == '.' && ABBREVIATIONS.contains(&last_word.trim_start_matches('(')) {
            continue;
        }
        push(&mut out, &mut cur);
    }
    push(&mut out, &mut cur);
    out
}

/// Everything under a block, flattened into one `; `-separated text.
fn flatten(children: &[Block]) -> String {
    let mut parts = Vec::new();
    for c in children {
        let own = c.text.trim_end_matches(['.', ';', ',']).to_owned();
        if c.children.is_empty() {
            parts.push(own);
        } else {
            parts.push(format!("{} {}", own, flatten(&c.children)));
        }
    }
    parts.join("; ")
}

/// The units of a policy, in order.
pub(crate) fn units(policy: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut n = 0;
    for block in blocks(policy) {
        emit(&block, &block.headings, &mut out, &mut n);
    }
    out
}

fn emit(block: &Block, context: &[String], out: &mut Vec<Unit>, n: &mut usize) {
    *n += 1;
    let block_index = *n;
    let mut parts = sentences(&block.text);
    let lead = if block.children.is_empty() {
        None
    } else {
        parts.pop()
    };
    for s in parts {
        out.push(Unit {
            text: s,
            context: context.to_vec(),
            lead: None,
            block: block_index,
        });
    }
    let Some(lead) = lead else { return };
    if leads_in(&lead) && (block.label || is_label(&lead)) {
        // The label's own sentence is context, not a unit.
        let mut inner = context.to_vec();
        inner.push(lead.trim_end_matches(':').trim().to_owned());
        for child in &block.children {
            emit(child, &inner, out, n);
        }
    } else if leads_in(&lead) {
        let body = flatten(&block.children);
        let sep = if lead.ends_with(':') { " " } else { ": " };
        out.push(Unit {
            text: format!("{lead}{sep}{body}."),
            context: context.to_vec(),
            lead: Some(lead.clone()),
            block: block_index,
        });
    } else {
        // An item that ends its sentence has items of its own under it:
        // they are sentences of their own.
        out.push(Unit {
            text: lead,
            context: context.to_vec(),
            lead: None,
            block: block_index,
        });
        for child in &block.children {
            emit(child, context, out, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(policy: &str) -> Vec<String> {
        units(policy).into_iter().map(|u| u.text).collect()
    }

    #[test]
    fn sentences_respect_quotes_and_abbreviations() {
        assert_eq!(
            sentences(
                "Send the message 'YOU ARE BEING TRANSFERRED. PLEASE HOLD ON.' to the user. Then stop."
            ),
            vec![
                "Send the message 'YOU ARE BEING TRANSFERRED. PLEASE HOLD ON.' to the user.",
                "Then stop."
            ]
        );
        assert_eq!(
            sentences("No change of types, e.g. modify shirt to shoe. The user's call."),
            vec![
                "No change of types, e.g. modify shirt to shoe.",
                "The user's call."
            ]
        );
    }

    #[test]
    fn procedures_merge_and_labels_stay_context() {
        let policy = "## Refuel\nThe maximum is 2GB.\nTo refuel data you should:\n- Ask them how much\n- Confirm the price\n\nPayment:\n- Use one card.\n- Never use two.\n\nChecked bags:\n- If the user is gold:\n  - 2 free bags\n  - 3 free bags\n- Each extra bag is 50 dollars.";
        let u = units(policy);
        let t: Vec<&str> = u.iter().map(|u| u.text.as_str()).collect();
        assert_eq!(
            t,
            vec![
                "The maximum is 2GB.",
                "To refuel data you should: Ask them how much; Confirm the price.",
                "Use one card.",
                "Never use two.",
                "If the user is gold: 2 free bags; 3 free bags.",
                "Each extra bag is 50 dollars.",
            ]
        );
        assert_eq!(u[1].lead.as_deref(), Some("To refuel data you should:"));
        assert_eq!(
            u[2].context,
            vec!["Refuel".to_owned(), "Payment".to_owned()]
        );
        assert_eq!(
            u[4].context,
            vec!["Refuel".to_owned(), "Checked bags".to_owned()]
        );
    }

    #[test]
    fn bold_labels_and_stops_inside_quotes() {
        let policy = "**How to give a tool:**\n- Use the give tool\n- Explain what it does.\n\nThese are called \"agent tools.\" They must be unlocked. Ask for receipts... from the customer only.";
        assert_eq!(
            texts(policy),
            vec![
                "Use the give tool",
                "Explain what it does.",
                "These are called \"agent tools.\"",
                "They must be unlocked.",
                "Ask for receipts... from the customer only.",
            ]
        );
    }

    #[test]
    fn wrapped_bullets_and_paragraphs() {
        let policy = "# Policy\n\nYou help customers.\n- You must confirm with the customer before issuing\n  a refund.\n- Be kind. Never guess an order number.\n\nOnly pending orders can be cancelled.";
        assert_eq!(
            texts(policy),
            vec![
                "You help customers.",
                "You must confirm with the customer before issuing a refund.",
                "Be kind.",
                "Never guess an order number.",
                "Only pending orders can be cancelled."
            ]
        );
    }

    #[test]
    fn a_lead_in_without_a_colon_and_a_numbered_list() {
        let policy = "To do so follow these steps\n- Gather plans\n- Confirm the price.\n\n## Tools\n1. **check_status** - Shows the bar.\n   - Signal strength\n2. **reboot** - Restarts it.";
        assert_eq!(
            texts(policy),
            vec![
                "To do so follow these steps: Gather plans; Confirm the price.",
                "check_status - Shows the bar.",
                "Signal strength",
                "reboot - Restarts it.",
            ]
        );
    }
}
