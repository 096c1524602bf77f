//! Id shapes: what the ids of an entity look like, learned from fixture ids
//! or a parameter description's example (`such as '#W0000000'`), and used to
//! make new ids and to tell an agent what a real id looks like.

use crate::vocab;
use sparring_types::seed::Stream;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Lit(char),
    Upper(usize),
    Lower(usize),
    Digit {
        len: usize,
        lead_zero: bool,
    },
    /// Uppercase letters and digits mixed (`ZFA04Y`).
    Mixed(usize),
}

/// The tokens of `example`: runs of one class (literal characters stand
/// alone), uppercase and digit runs that alternate more than once as one
/// mixed run (`ZFA04Y`), so other ids of that kind fit the shape.
fn tokens_of(example: &str) -> Vec<Token> {
    // (class, characters, first character) of each run.
    let mut runs: Vec<(u8, usize, char)> = Vec::new();
    for c in example.chars() {
        let k = class(c);
        match runs.last_mut() {
            Some((last, n, _)) if *last == k && k != 0 => *n += 1,
            _ => runs.push((k, 1, c)),
        }
    }
    let mut tokens = Vec::with_capacity(runs.len());
    let mut i = 0;
    while i < runs.len() {
        let (k, n, first) = runs[i];
        if k == b'A' || k == b'9' {
            let mut j = i;
            let mut len = 0;
            while j < runs.len() && (runs[j].0 == b'A' || runs[j].0 == b'9') {
                len += runs[j].1;
                j += 1;
            }
            if j - i > 2 {
                tokens.push(Token::Mixed(len));
                i = j;
                continue;
            }
        }
        tokens.push(match k {
            b'A' => Token::Upper(n),
            b'a' => Token::Lower(n),
            b'9' => Token::Digit {
                len: n,
                lead_zero: first == '0',
            },
            _ => Token::Lit(first),
        });
        i += 1;
    }
    tokens
}

/// The shape of an entity's ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdShape {
    /// What ids must look like.
    tokens: Vec<Token>,
    /// How new ids are made (the same tokens, or a literal prefix).
    generate: Vec<Token>,
    example: String,
}

fn class(c: char) -> u8 {
    if c.is_ascii_uppercase() {
        b'A'
    } else if c.is_ascii_lowercase() {
        b'a'
    } else if c.is_ascii_digit() {
        b'9'
    } else {
        0
    }
}

impl IdShape {
    /// The shape of `example`.
    pub fn from_example(example: &str) -> Self {
        let tokens = tokens_of(example);
        // A leading uppercase prefix (`#W` in `#W0000000`, `TK` in
        // `TK-1234`) is the same in every id of the entity: keep it.
        let mut generate = Vec::with_capacity(tokens.len());
        let mut leading = true;
        let mut at = 0usize;
        let chars: Vec<char> = example.chars().collect();
        for t in &tokens {
            let width = match t {
                Token::Lit(_) => 1,
                Token::Upper(n)
                | Token::Lower(n)
                | Token::Mixed(n)
                | Token::Digit { len: n, .. } => *n,
            };
            match t {
                Token::Upper(_) if leading => {
                    generate.extend(chars[at..at + width].iter().map(|c| Token::Lit(*c)));
                }
                Token::Lit(_) => generate.push(t.clone()),
                _ => {
                    leading = false;
                    generate.push(t.clone());
                }
            }
            at += width;
        }
        Self {
            generate,
            tokens,
            example: example.to_owned(),
        }
    }

    /// The shape used when nothing shows one: a prefix from the entity's
    /// name and `digits` digits (`CUS-48213390`).
    pub fn default_for(entity: &str, digits: u32) -> Self {
        let prefix: String = entity
            .chars()
            .filter(char::is_ascii_alphabetic)
            .take(3)
            .collect::<String>()
            .to_ascii_uppercase();
        let prefix = if prefix.is_empty() {
            "ID".to_owned()
        } else {
            prefix
        };
        let digits = (digits as usize).max(1);
        let example = format!("{prefix}-{}", "0".repeat(digits));
        // The prefix stays literal in new ids: every id of the entity starts
        // the same way.
        let mut generate: Vec<Token> = prefix.chars().map(Token::Lit).collect();
        generate.push(Token::Lit('-'));
        generate.push(Token::Digit {
            len: digits,
            lead_zero: true,
        });
        Self {
            generate,
            ..Self::from_example(&example)
        }
    }

    /// An example id of this shape, for hints.
    pub fn example(&self) -> &str {
        &self.example
    }

    /// Whether `id` has this shape (lowercase runs may differ in length;
    /// short digit runs by one).
    pub fn fits(&self, id: &str) -> bool {
        let other = tokens_of(id);
        if self.tokens.iter().any(|t| matches!(t, Token::Mixed(_))) {
            return collapsed(&self.tokens) == collapsed(&other);
        }
        if other.len() != self.tokens.len() {
            return false;
        }
        self.tokens.iter().zip(&other).all(|(a, b)| match (a, b) {
            (Token::Lit(x), Token::Lit(y)) => x == y,
            (Token::Upper(x), Token::Upper(y)) | (Token::Mixed(x), Token::Mixed(y)) => x == y,
            (Token::Lower(_), Token::Lower(_)) => true,
            (Token::Digit { len: x, .. }, Token::Digit { len: y, .. }) => {
                x == y || (*x < 6 && x.abs_diff(*y) <= 1)
            }
            _ => false,
        })
    }

    /// A new id of this shape.
    pub fn generate(&self, stream: &mut Stream) -> String {
        let mut out = String::with_capacity(self.example.len());
        let mut lower_runs = 0;
        for token in &self.generate {
            match token {
                Token::Lit(c) => out.push(*c),
                Token::Upper(n) => {
                    for _ in 0..*n {
                        out.push(char::from(b'A' + stream.below(26) as u8));
                    }
                }
                Token::Lower(_) => {
                    // Lowercase runs are words in ids like `sara_doe_496`.
                    let list = if lower_runs == 0 {
                        vocab::FIRST_NAMES
                    } else {
                        vocab::LAST_NAMES
                    };
                    lower_runs += 1;
                    let word = stream.pick(list).copied().unwrap_or("x");
                    out.push_str(&word.to_ascii_lowercase());
                }
                Token::Digit { len, lead_zero } => {
                    for i in 0..*len {
                        let d = if i == 0 && !lead_zero {
                            1 + stream.below(9)
                        } else {
                            stream.below(10)
                        };
                        out.push(char::from(b'0' + d as u8));
                    }
                }
                Token::Mixed(n) => {
                    for _ in 0..*n {
                        let v = stream.below(36) as u8;
                        out.push(if v < 26 {
                            char::from(b'A' + v)
                        } else {
                            char::from(b'0' + v - 26)
                        });
                    }
                }
            }
        }
        out
    }
}

/// Tokens with every run of uppercase letters and digits merged into one
/// mixed run, to compare ids of a mixed shape.
fn collapsed(tokens: &[Token]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for t in tokens {
        let width = match t {
            Token::Upper(n) | Token::Mixed(n) | Token::Digit { len: n, .. } => Some(*n),
            _ => None,
        };
        match (width, out.last_mut()) {
            (Some(n), Some(Token::Mixed(m))) => *m += n,
            (Some(n), _) => out.push(Token::Mixed(n)),
            (None, _) => out.push(t.clone()),
        }
    }
    out
}

/// The first quoted example in a description (`such as '#W0000000'`,
/// `e.g. "A1"`, `for example 'x'`, `like 'y'`).
pub fn description_example(description: &str) -> Option<String> {
    let lower = description.to_lowercase();
    for cue in [
        "such as ",
        "e.g. ",
        "e.g., ",
        "for example ",
        "for example, ",
        "like ",
    ] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(cue) {
            let start = from + at + cue.len();
            let rest = &description[start..];
            let mut chars = rest.chars();
            if let Some(q @ ('\'' | '"' | '`')) = chars.next() {
                let body = &rest[1..];
                if let Some(end) = body.find(q) {
                    let example = body[..end].trim();
                    if !example.is_empty() && !example.contains(' ') {
                        return Some(example.to_owned());
                    }
                }
            }
            from = start;
        }
    }
    None
}

/// Every quoted phrase in a description (examples and allowed values).
pub(crate) fn quoted(description: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = description;
    while let Some(start) = rest.find(['\'', '"', '`']) {
        let q = rest[start..].chars().next().unwrap_or('\'');
        let body = &rest[start + 1..];
        // An apostrophe inside a word (`user's`) opens nothing.
        let prev = rest[..start].chars().last();
        if q == '\'' && prev.is_some_and(char::is_alphanumeric) {
            rest = body;
            continue;
        }
        match body.find(q) {
            Some(end) => {
                out.push(body[..end].to_owned());
                rest = &body[end + 1..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_fit_their_kind() {
        let order = IdShape::from_example("#W0000000");
        assert!(order.fits("#W4817320"));
        assert!(!order.fits("W4817320"));
        assert!(!order.fits("#W48"));
        let user = IdShape::from_example("sara_doe_496");
        assert!(user.fits("mia_li_3668"));
        assert!(!user.fits("mia-li-3668"));
        let reservation = IdShape::from_example("ZFA04Y");
        assert!(reservation.fits("8JX2WO"));
        let mut s = Stream::derive(1, "t", &[]);
        for shape in [&order, &user, &reservation] {
            for _ in 0..20 {
                let id = shape.generate(&mut s);
                assert!(shape.fits(&id), "{id} vs {}", shape.example());
            }
        }
        let d = IdShape::default_for("customers", 8);
        let id = d.generate(&mut s);
        assert!(id.starts_with("CUS-") && id.len() == 12, "{id}");
        assert!(d.fits(&id));
    }

    #[test]
    fn examples_from_descriptions() {
        assert_eq!(
            description_example("The order id, such as '#W0000000'. Be careful").as_deref(),
            Some("#W0000000")
        );
        assert_eq!(
            description_example("e.g. \"A-1\" or so").as_deref(),
            Some("A-1")
        );
        assert_eq!(description_example("The order id."), None);
        assert_eq!(
            quoted("either 'no longer needed' or 'ordered by mistake'. The user's"),
            vec!["no longer needed", "ordered by mistake"]
        );
    }
}
