//! Scrubbing credentials out of text that sparring stores or shows.
//!
//! A [`Scrubber`] holds every credential a component knows (an API key, the
//! user and password of a URL) in every form it may come back in: as given,
//! percent-decoded, and in base64 (an `Authorization: Basic …` header, or a
//! key a proxy encoded, quoted back in an error body). [`Scrubber::scrub`]
//! replaces each by `***` with the rule of [`mask`]: a value of
//! [`MIN_SECRET_CHARS`] characters or more wherever it appears, a shorter one
//! only as a whole word, so a one-letter test key does not turn every
//! letter of a message into `***`.
//!
//! ```
//! use sparring_types::secrets::Scrubber;
//! let mut s = Scrubber::default();
//! s.url("http://bob:hunter2hunter2@proxy:8080/v1");
//! s.key("sk-live-0123456789");
//! let text = "401 for bob:hunter2hunter2 (Basic Ym9iOmh1bnRlcjJodW50ZXIy), key sk-live-0123456789";
//! assert_eq!(s.scrub(text), "401 for *** (Basic ***), key ***");
//! ```

/// Values at least this long are masked wherever they appear; shorter ones
/// only as whole words.
pub const MIN_SECRET_CHARS: usize = 8;

/// What stands for a hidden value.
pub const MASK: &str = "***";

/// The credentials one component knows, in every form they may come back.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Scrubber {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrubber({} secrets)", self.secrets.len())
    }
}

impl Scrubber {
    /// Adds a value as it is.
    pub fn value(&mut self, value: &str) {
        let value = value.trim();
        if value.is_empty() || value == MASK || self.secrets.iter().any(|s| s == value) {
            return;
        }
        self.secrets.push(value.to_owned());
        // Longest first, so a key is not half-masked by a shorter secret
        // inside it.
        self.secrets
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    }

    /// Adds a key and its base64 form.
    pub fn key(&mut self, key: &str) {
        self.value(key);
        self.value(&base64(key.trim().as_bytes()));
    }

    /// Adds the credentials of every URL in `text` (`scheme://user:pass@…`):
    /// the user-info, the password, both percent-decoded, and the base64 of
    /// `user:password` that HTTP Basic auth sends.
    pub fn url(&mut self, text: &str) {
        let mut rest = text;
        while let Some(at) = rest.find("://") {
            let tail = &rest[at + 3..];
            let end = tail
                .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"'))
                .unwrap_or(tail.len());
            let url = &tail[..end];
            if let Some(i) = url.rfind('@') {
                let userinfo = &url[..i];
                self.value(userinfo);
                let (user, raw_password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                let (user, password) = (percent_decode(user), percent_decode(raw_password));
                self.value(raw_password);
                self.value(&password);
                self.value(&percent_decode(userinfo));
                if !password.is_empty() {
                    self.value(&base64(format!("{user}:{password}").as_bytes()));
                }
                self.value(&base64(userinfo.as_bytes()));
            }
            rest = &tail[end..];
        }
    }

    /// Adds every value of another scrubber.
    pub fn extend(&mut self, other: &Self) {
        for s in &other.secrets {
            self.value(s);
        }
    }

    /// The values, longest first.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// `text` with every secret replaced by `***` (see [`mask`]).
    pub fn scrub(&self, text: &str) -> String {
        mask(text, &self.secrets)
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// `text` with every secret replaced by `***`: one of [`MIN_SECRET_CHARS`]
/// characters or more wherever it appears, a shorter one only where it
/// stands as a whole word (not inside a longer run of letters, digits, `-`
/// or `_`). Give the secrets longest first.
pub fn mask(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if secret.is_empty() || !out.contains(secret.as_str()) {
            continue;
        }
        if secret.chars().count() >= MIN_SECRET_CHARS {
            out = out.replace(secret.as_str(), MASK);
        } else {
            out = mask_whole_words(&out, secret);
        }
    }
    out
}

fn mask_whole_words(text: &str, secret: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, _) in text.match_indices(secret) {
        let end = at + secret.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_none_or(|c| !is_word_char(c)) && after.is_none_or(|c| !is_word_char(c)) {
            out.push_str(&text[copied..at]);
            out.push_str(MASK);
            copied = end;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `%XX` escapes decoded; text whose decoded bytes are not UTF-8 is kept
/// as it is.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Standard base64 with padding (RFC 4648), as HTTP Basic auth uses.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("user:pass", "dXNlcjpwYXNz"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain}");
        }
    }

    #[test]
    fn url_credentials_in_every_form() {
        let mut s = Scrubber::default();
        s.url("see http://al%40ice:p%2Fssw0rd-long@h:1/v1 and https://h/v1");
        let text = "al@ice:p/ssw0rd-long | p%2Fssw0rd-long | Basic YWxAaWNlOnAvc3N3MHJkLWxvbmc=";
        assert_eq!(s.scrub(text), "*** | *** | Basic ***");
        let mut none = Scrubber::default();
        none.url("https://h/v1?x=1");
        assert!(none.secrets().is_empty());
    }

    #[test]
    fn short_secrets_only_as_whole_words() {
        let mut s = Scrubber::default();
        s.key("x");
        assert_eq!(
            s.scrub("x: the box is x-ray, not x"),
            "***: the box is x-ray, not ***"
        );
        assert_eq!(s.scrub("xx x"), "xx ***");
        assert_eq!(format!("{s:?}"), "Scrubber(2 secrets)");
    }
}
