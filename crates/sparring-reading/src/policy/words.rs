//! The plain form of a policy sentence that the reader works on.

/// A sentence as the reader sees it: lowercase, code marks and tool-call
/// arguments removed, contractions spelled out, and its words.
#[derive(Clone, Debug)]
pub(crate) struct Plain {
    /// Lowercase text, `grant(app="x")` → `grant`, `can't` → `cannot`.
    pub(crate) text: String,
    /// Its words: letters, digits, `_` and `'` (tool names stay whole).
    pub(crate) words: Vec<String>,
}

const CONTRACTIONS: &[(&str, &str)] = &[
    ("can't", "cannot"),
    ("won't", "will not"),
    ("don't", "do not"),
    ("doesn't", "does not"),
    ("didn't", "did not"),
    ("shouldn't", "should not"),
    ("mustn't", "must not"),
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("wouldn't", "would not"),
    ("couldn't", "could not"),
    ("haven't", "have not"),
    ("hasn't", "has not"),
];

impl Plain {
    pub(crate) fn new(text: &str) -> Self {
        let mut lower = text
            .to_lowercase()
            .replace(['’', '‘'], "'")
            .replace('`', "");
        for (short, long) in CONTRACTIONS {
            lower = lower.replace(short, long);
        }
        let text = drop_call_arguments(&digit_commas(&lower));
        let words = split_words(&text);
        Self { text, words }
    }

    /// Whether the words hold `phrase` (given as words) in a row.
    pub(crate) fn has(&self, phrase: &[&str]) -> bool {
        self.find(phrase).is_some()
    }

    /// Where `phrase` first starts among the words.
    pub(crate) fn find(&self, phrase: &[&str]) -> Option<usize> {
        find_in(&self.words, phrase)
    }

    /// Whether some word starts with one of `stems`.
    pub(crate) fn has_stem(&self, stems: &[&str]) -> bool {
        self.words
            .iter()
            .any(|w| stems.iter().any(|s| w.starts_with(s)))
    }

    /// Whether some word is one of `words`.
    pub(crate) fn any(&self, words: &[&str]) -> bool {
        self.words.iter().any(|w| words.contains(&w.as_str()))
    }
}

pub(crate) fn find_in(words: &[String], phrase: &[&str]) -> Option<usize> {
    if phrase.is_empty() || words.len() < phrase.len() {
        return None;
    }
    (0..=words.len() - phrase.len())
        .find(|&i| phrase.iter().enumerate().all(|(j, p)| words[i + j] == *p))
}

pub(crate) fn split_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `1,000` → `1000`, so a number stays one word.
fn digit_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            !(**c == ','
                && *i > 0
                && chars[i - 1].is_ascii_digit()
                && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        })
        .map(|(_, c)| *c)
        .collect()
}

/// `name(args…)` → `name`: the arguments of a tool call written in the
/// policy are not words of the sentence.
fn drop_call_arguments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_name = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '(' && after_name {
            let mut depth = 0;
            while i < chars.len() {
                match chars[i] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The text after a leading subordinate clause (`If it is on, guide the
/// user …` → `guide the user …`), up to the first comma outside brackets
/// and quotes; the whole text when it has no such clause.
pub(crate) fn main_clause(text: &str) -> &str {
    const OPENERS: &[&str] = &[
        "if ",
        "when ",
        "once ",
        "after ",
        "before ",
        "unless ",
        "while ",
        "whenever ",
        "in case ",
        "for ",
        "to ",
        "at ",
        "in ",
        "on ",
        "during ",
        "throughout ",
        "from ",
    ];
    let t = text.trim_start();
    if !OPENERS.iter().any(|o| t.starts_with(o)) {
        return t;
    }
    let mut depth = 0i32;
    let mut quote = false;
    for (i, c) in t.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '"' => quote = !quote,
            ',' if depth == 0 && !quote => return t[i + 1..].trim_start(),
            _ => {}
        }
    }
    t
}

/// Numbers written as words, for bounds (`at most five passengers`).
pub(crate) fn number(word: &str) -> Option<f64> {
    const WORDS: &[(&str, f64)] = &[
        ("zero", 0.0),
        ("no", 0.0),
        ("one", 1.0),
        ("a", 1.0),
        ("an", 1.0),
        ("single", 1.0),
        ("once", 1.0),
        ("two", 2.0),
        ("twice", 2.0),
        ("three", 3.0),
        ("four", 4.0),
        ("five", 5.0),
        ("six", 6.0),
        ("seven", 7.0),
        ("eight", 8.0),
        ("nine", 9.0),
        ("ten", 10.0),
        ("twelve", 12.0),
        ("twenty", 20.0),
        ("hundred", 100.0),
    ];
    if let Some((_, n)) = WORDS.iter().find(|(w, _)| *w == word) {
        return Some(*n);
    }
    let digits: String = word
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if digits.is_empty() {
        return None;
    }
    digits.trim_end_matches('.').parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text() {
        let p = Plain::new("If `check_apn(app=\"x\", y=1)` can't, **use** it");
        assert_eq!(p.text, "if check_apn cannot, **use** it");
        assert_eq!(p.words, vec!["if", "check_apn", "cannot", "use", "it"]);
        assert_eq!(
            main_clause("if it is on (a, b), guide the user"),
            "guide the user"
        );
        assert_eq!(
            main_clause("guide the user, then go"),
            "guide the user, then go"
        );
        assert_eq!(
            main_clause("to do so follow these steps"),
            "to do so follow these steps"
        );
        assert_eq!(number("2gb"), Some(2.0));
        assert_eq!(number("five"), Some(5.0));
    }
}
