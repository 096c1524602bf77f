//! Secrets on command lines: which words are hidden, and the values hidden.
//!
//! A command line (an agent, world, grader or judge command) is shown in
//! rows (`model_version`), `run.json`, `run.log` and errors. Before it is
//! shown, [`redact_argv`] replaces every value that matches one of these
//! patterns with `***` (the list `docs/agent-protocol.md` documents):
//!
//! 1. **Assignments** `NAME=VALUE` whose name is secret-like (`OPENAI_API_KEY=…`,
//!    `AUTH=…`, `PASS=…`, `--token=…`): `NAME=***`.
//! 2. **Flags** `--NAME VALUE` or `-NAME VALUE` whose name is secret-like
//!    (`--api-key X`, `--password X`), and the short flag `-k X`: the next word.
//! 3. **Headers** `NAME: VALUE` whose name is secret-like (`Authorization: Bearer X`,
//!    `x-api-key: X`, `Cookie: …`), as a word of their own (after `--header` or
//!    `-H`) or after `=`: `NAME: ***`.
//! 4. **URL credentials** `scheme://user:PASSWORD@host` anywhere in a word:
//!    `scheme://***@host`; a query parameter with a secret-like name
//!    (`?api_key=X`): `api_key=***`.
//! 5. **Key shapes**: a token starting with a provider's key prefix (`sk-`,
//!    `sk_live_`, `sk_test_`, `rk_live_`, `hf_`, `ghp_`, `github_pat_`,
//!    `xoxb-`, `glpat-`, …) or an AWS access key id (`AKIA` or `ASIA` and 16
//!    capitals or digits).
//!
//! A name is secret-like when one of its words (split at `-`, `_`, `.` and
//! case changes) is in [`SECRET_WORDS`] or it is one of the compounds in
//! [`SECRET_COMPOUNDS`] (`apikey`, `accesstoken`, …).
//!
//! Every value hidden is also returned, so what the program itself echoes
//! (its stderr in `run.log`) can be masked with [`mask`]. A value of
//! [`MIN_SECRET_CHARS`] characters or more is masked wherever it appears; a
//! shorter one only as a whole word, so `OPENAI_API_KEY=x` does not turn
//! every `x` into `***`.

/// Words that make a name secret-like (compared lowercase).
pub const SECRET_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "pwd",
    "auth",
    "authorization",
    "bearer",
    "credential",
    "credentials",
    "cookie",
];

/// Names that are secret-like as a whole (compared lowercase, with `-`,
/// `_` and `.` removed).
pub const SECRET_COMPOUNDS: &[&str] = &[
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "accesstoken",
    "authtoken",
    "refreshtoken",
    "sessiontoken",
    "clientsecret",
    "xapikey",
];

/// Prefixes of provider keys: a token that starts with one and goes on is a
/// key.
pub const KEY_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "hf_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "glpat-",
];

/// Short flags that take a secret (`curl`-like `-k KEY` in agent wrappers).
pub const SECRET_SHORT_FLAGS: &[&str] = &["-k"];

use sparring_types::secrets::{MASK, percent_decode};
pub use sparring_types::secrets::{MIN_SECRET_CHARS, mask};

/// A command line as it may be shown, and the values hidden from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redacted {
    /// The words joined by spaces, secrets replaced by `***`.
    pub display: String,
    /// The values replaced, longest first, without duplicates.
    pub secrets: Vec<String>,
}

/// Whether a name (`OPENAI_API_KEY`, `--api-key`, `x-api-key`, `authToken`)
/// is secret-like.
pub fn secret_name(name: &str) -> bool {
    let compact: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_lowercase();
    if compact.is_empty() {
        return false;
    }
    if SECRET_COMPOUNDS.contains(&compact.as_str()) {
        return true;
    }
    words(name)
        .iter()
        .any(|w| SECRET_WORDS.contains(&w.as_str()))
}

/// The words of a name, lowercase: split at anything that is not a letter
/// or digit, and where a lowercase letter meets a capital (`authToken`).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_ascii_lowercase();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Redacts a command line (see the module's patterns).
pub fn redact_argv(argv: &[String]) -> Redacted {
    let mut secrets = Vec::new();
    let mut shown = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for word in argv {
        if hide_next {
            hide_next = false;
            // A header after `--api-key`-like flags keeps its name.
            let masked = mask_word(word, &mut secrets);
            if masked == *word {
                secrets.push(word.clone());
                shown.push(MASK.to_owned());
            } else {
                shown.push(masked);
            }
            continue;
        }
        if is_secret_flag(word) {
            hide_next = true;
            shown.push(word.clone());
            continue;
        }
        shown.push(mask_word(word, &mut secrets));
    }
    let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
    secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    secrets.dedup();
    let display = mask(&shown.join(" "), &secrets);
    Redacted { display, secrets }
}

/// `--api-key` or `-k` with its value in the next word.
fn is_secret_flag(word: &str) -> bool {
    if SECRET_SHORT_FLAGS.contains(&word) {
        return true;
    }
    word.starts_with('-') && !word.contains('=') && word.len() > 1 && secret_name(word)
}

/// One word with the in-word patterns applied (assignments, headers, URL
/// credentials, key shapes); every hidden value goes to `secrets`.
fn mask_word(word: &str, secrets: &mut Vec<String>) -> String {
    // Header `NAME: VALUE` (a word of its own, e.g. after `--header`).
    if let Some((name, value)) = word.split_once(':')
        && !value.starts_with("//")
        && !name.contains(['=', ' ', '/'])
        && secret_name(name)
    {
        let value = value.trim();
        if !value.is_empty() {
            secrets.push(value.to_owned());
            if let Some((_, token)) = value.split_once(' ') {
                secrets.push(token.trim().to_owned());
            }
            return format!("{name}: {MASK}");
        }
    }
    // Assignment `NAME=VALUE`.
    if let Some((name, value)) = word.split_once('=')
        && !name.is_empty()
        && !name.contains("://")
    {
        if secret_name(name) {
            if value.is_empty() {
                return word.to_owned();
            }
            secrets.push(value.to_owned());
            return format!("{name}={MASK}");
        }
        return format!("{name}={}", mask_word(value, secrets));
    }
    let word = mask_urls(word, secrets);
    mask_key_shapes(&word, secrets)
}

/// URL credentials and secret-named query parameters inside a word.
fn mask_urls(word: &str, secrets: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ',' | ';'))
            .unwrap_or(tail.len());
        let (url, after) = tail.split_at(end);
        // The authority ends at the first `/` after the last `@` (a password
        // may hold `/`); without an `@` there are no credentials.
        let url = match url.rfind('@') {
            Some(i) => {
                let userinfo = &url[..i];
                secrets.push(userinfo.to_owned());
                if let Some((_, password)) = userinfo.split_once(':') {
                    secrets.push(password.to_owned());
                    let decoded = percent_decode(password);
                    if decoded != password {
                        secrets.push(decoded);
                    }
                }
                out.push_str(MASK);
                &url[i..]
            }
            None => url,
        };
        match url.split_once('?') {
            Some((path, query)) => {
                out.push_str(path);
                out.push('?');
                let parts: Vec<String> = query
                    .split('&')
                    .map(|pair| match pair.split_once('=') {
                        Some((name, value)) if secret_name(name) && !value.is_empty() => {
                            secrets.push(value.to_owned());
                            format!("{name}={MASK}")
                        }
                        _ => pair.to_owned(),
                    })
                    .collect();
                out.push_str(&parts.join("&"));
            }
            None => out.push_str(url),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Tokens shaped like provider keys inside a word.
fn mask_key_shapes(word: &str, secrets: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while !rest.is_empty() {
        let start = rest.find(is_token_char).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c| !is_token_char(c)).unwrap_or(rest.len());
        let token = &rest[..end];
        if key_shaped(token) {
            secrets.push(token.to_owned());
            out.push_str(MASK);
        } else {
            out.push_str(token);
        }
        rest = &rest[end..];
    }
    out
}

/// A token that is a provider key by its shape.
pub fn key_shaped(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    if KEY_PREFIXES
        .iter()
        .any(|p| lower.starts_with(p) && token.len() > p.len())
    {
        return true;
    }
    // AWS access key ids: AKIA (long-term) or ASIA (temporary) and 16
    // capitals or digits.
    (token.starts_with("AKIA") || token.starts_with("ASIA"))
        && token.len() == 20
        && token[4..]
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn shown(words: &[&str]) -> String {
        redact_argv(&argv(words)).display
    }

    #[test]
    fn every_documented_pattern_is_hidden() {
        for (words, secret) in [
            (&["AUTH=hunter2secret", "agent"][..], "hunter2secret"),
            (&["PASS=hunter2secret", "agent"], "hunter2secret"),
            (&["OPENAI_API_KEY=sk1234567", "agent"], "sk1234567"),
            (&["agent", "--api-key", "opensesame1"], "opensesame1"),
            (&["agent", "--token=opensesame1"], "opensesame1"),
            (&["agent", "-k", "opensesame1"], "opensesame1"),
            (
                &["curl", "--header", "Authorization: Bearer opensesame1"],
                "opensesame1",
            ),
            (&["curl", "-H", "x-api-key: opensesame1"], "opensesame1"),
            (
                &["curl", "--header=Authorization: Bearer opensesame1"],
                "opensesame1",
            ),
            (&["agent", "--url=http://u:opensesame1@h/v1"], "opensesame1"),
            (&["agent", "http://u:open%2Fsesame@h/v1"], "open%2Fsesame"),
            (
                &["agent", "http://h/v1?api_key=opensesame1&x=1"],
                "opensesame1",
            ),
            (&["agent", "sk_live_51Habcdef"], "sk_live_51Habcdef"),
            (
                &["agent", "--aws=AKIAIOSFODNN7EXAMPLE"],
                "AKIAIOSFODNN7EXAMPLE",
            ),
            (&["agent", "sk-zzz"], "sk-zzz"),
            (&["agent", "--authToken", "opensesame1"], "opensesame1"),
        ] {
            let r = redact_argv(&argv(words));
            assert!(!r.display.contains(secret), "{words:?}: {}", r.display);
            assert!(r.display.contains(MASK), "{words:?}: {}", r.display);
            assert!(
                r.secrets.iter().any(|s| s.contains(secret)),
                "{words:?}: {:?}",
                r.secrets
            );
        }
    }

    #[test]
    fn what_is_not_secret_stays() {
        assert_eq!(
            shown(&[
                "python3",
                "agent.py",
                "--model",
                "m",
                "--max-passes=3",
                "--author",
                "bo"
            ]),
            "python3 agent.py --model m --max-passes=3 --author bo"
        );
        assert_eq!(
            shown(&["agent", "http://h:8000/v1"]),
            "agent http://h:8000/v1"
        );
        assert_eq!(
            shown(&["agent", "task-list", "desk-top"]),
            "agent task-list desk-top"
        );
        assert_eq!(
            shown(&["curl", "-H", "Content-Type: application/json"]),
            "curl -H Content-Type: application/json"
        );
        assert_eq!(shown(&["AKIA", "ASIAshort"]), "AKIA ASIAshort");
        assert_eq!(
            shown(&["curl", "-H", "Authorization: Bearer abcdefghij"]),
            "curl -H Authorization: ***"
        );
    }

    #[test]
    fn a_short_key_masks_only_whole_words() {
        let r = redact_argv(&argv(&["OPENAI_API_KEY=x", "agent", "--box", "xx", "x"]));
        assert_eq!(r.display, "OPENAI_API_KEY=*** agent --box xx ***");
        assert_eq!(
            mask("x marks the box; x", &r.secrets),
            "*** marks the box; ***"
        );
        let long = redact_argv(&argv(&["agent", "--api-key", "opensesame1"]));
        assert_eq!(
            mask("auth failed for keyopensesame1!", &long.secrets),
            "auth failed for key***!"
        );
    }

    #[test]
    fn names() {
        for yes in [
            "OPENAI_API_KEY",
            "--api-key",
            "x-api-key",
            "authToken",
            "AUTH",
            "PASS",
            "apikey",
        ] {
            assert!(secret_name(yes), "{yes}");
        }
        for no in [
            "--model",
            "--max-passes",
            "--author",
            "monkey",
            "--keyboard",
            "",
        ] {
            assert!(!secret_name(no), "{no}");
        }
    }
}
