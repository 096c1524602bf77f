//! Small text helpers shared by the person, the conduct checks and the
//! readers of model replies.

/// Splits text into sentences at `.`, `!`, `?` and line breaks, keeping the
/// terminator.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '\n' {
            push(&mut out, &mut cur);
            continue;
        }
        cur.push(c);
        let next_is_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && next_is_space {
            push(&mut out, &mut cur);
        }
    }
    push(&mut out, &mut cur);
    out
}

/// Ends the sentence being built: kept when it is not blank.
pub fn push(out: &mut Vec<String>, cur: &mut String) {
    let s = cur.trim();
    if !s.is_empty() {
        out.push(s.to_owned());
    }
    cur.clear();
}

/// Lowercase words, apostrophes kept (`don't`).
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '#'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether the text asks the reader something.
pub fn asks_question(text: &str) -> bool {
    sentences(text).iter().any(|s| s.ends_with('?'))
}

/// The JSON object a model's reply holds: from its first `{` to its last
/// `}`, so code fences and words around it are tolerated.
pub fn json_object(text: &str) -> Result<serde_json::Value, String> {
    let start = text.find('{').ok_or("no JSON object in the reply")?;
    let end = text.rfind('}').ok_or("no JSON object in the reply")?;
    if end < start {
        return Err("no JSON object in the reply".to_owned());
    }
    serde_json::from_str(&text[start..=end]).map_err(|e| format!("not JSON: {e}"))
}

/// A number as a person says it, made plain for parsing: `$7,500` → `7500`.
pub fn plain_number(text: &str) -> String {
    text.trim().trim_start_matches('$').replace(',', "")
}

/// A number as a person writes it: `5000`, not `5000.0`; `12.5` as is.
pub fn fmt_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Text quoted in evidence, cut to a readable length.
pub fn quote(text: &str) -> String {
    const MAX: usize = 160;
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > MAX {
        let cut: String = one_line.chars().take(MAX).collect();
        format!("\"{cut}…\"")
    } else {
        format!("\"{one_line}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences("Done. Shall I go on? Yes!\nOk"),
            vec!["Done.", "Shall I go on?", "Yes!", "Ok"]
        );
        assert_eq!(
            sentences("Order #W1.5 is here."),
            vec!["Order #W1.5 is here."]
        );
    }

    #[test]
    fn finds_questions() {
        assert!(asks_question("Could you share the order number?"));
        assert!(!asks_question("Your order is on its way."));
    }
}
