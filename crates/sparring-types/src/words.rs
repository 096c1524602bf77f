//! Small rules of English for the messages and asks sparring writes.

/// The indefinite article for `word`: `an` before a vowel sound as spelled
/// (`an order`, `an update`), `a` otherwise (`a refund`, `a user`: a
/// leading `u` followed by a consonant and a vowel sounds like "you", as in
/// `user`, `unit`, `usage`).
pub fn a_or_an(word: &str) -> &'static str {
    let lower: Vec<char> = word
        .trim()
        .chars()
        .take(3)
        .flat_map(char::to_lowercase)
        .collect();
    let vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u');
    match lower.as_slice() {
        ['u', c, v, ..] if !vowel(*c) && vowel(*v) => "a",
        [c, ..] if vowel(*c) => "an",
        _ => "a",
    }
}

/// `word` after its indefinite article (`an order`).
pub fn with_article(word: &str) -> String {
    format!("{} {word}", a_or_an(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles() {
        assert_eq!(with_article("order"), "an order");
        assert_eq!(with_article("Account"), "an Account");
        assert_eq!(with_article("refund"), "a refund");
        assert_eq!(with_article("user"), "a user");
        assert_eq!(with_article("update"), "an update");
        assert_eq!(with_article("umbrella"), "an umbrella");
        assert_eq!(with_article(""), "a ");
    }
}
