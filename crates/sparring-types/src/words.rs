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

/// Whether `s` is an identifier: a letter or `_`, then letters, digits or
/// `_` (a record field's name, an environment variable's).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `word` after its indefinite article (`an order`).
pub fn with_article(word: &str) -> String {
    format!("{} {word}", a_or_an(word))
}

/// Nouns that name the person an agent serves, singular: the owner of
/// records (`customer_id`, `patients`), who a policy says to identify ("the
/// patient"). One list for the people and the policy reader.
pub const PERSON_NOUNS: &[&str] = &[
    "customer",
    "user",
    "owner",
    "client",
    "member",
    "patient",
    "person",
    "tenant",
    "guest",
    "passenger",
    "traveler",
    "traveller",
    "caller",
    "subscriber",
    "policyholder",
    "student",
    "renter",
    "borrower",
    "buyer",
    "shopper",
    "applicant",
    "resident",
    "holder",
];

/// Verbs of saying, with their common forms: a sentence that names an
/// action after one ("Never tell the customer that an order was cancelled
/// unless …", "Never promise that a claim will be paid") is about what is
/// said, not a condition on the action. One list for the world's rule reader
/// and the policy reader.
pub const SPEECH_VERBS: &[&str] = &[
    "tell",
    "tells",
    "told",
    "say",
    "says",
    "said",
    "promise",
    "promises",
    "inform",
    "mention",
    "imply",
    "suggest",
    "assure",
    "guarantee",
];

/// A part of who a person is, as records and parameters hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PersonField {
    /// `name`, `full_name`.
    Name,
    /// `first_name`.
    FirstName,
    /// `last_name`.
    LastName,
    /// `email`, `email_address`.
    Email,
    /// `phone`, `phone_number`, `mobile`, `telephone`.
    Phone,
    /// `dob`, `date_of_birth`, `birth_date`.
    BirthDate,
    /// `zip`, `zip_code`, `postal_code`, `postcode`.
    PostalCode,
}

impl PersonField {
    /// Whether the field names the person (a name or part of one).
    pub fn is_name(self) -> bool {
        matches!(self, Self::Name | Self::FirstName | Self::LastName)
    }
}

/// The part of a person's identity a field holds, by its plain name (the
/// general English spellings; a prefixed `contact_email` is
/// [`contact_field`]).
pub fn person_field(field: &str) -> Option<PersonField> {
    Some(match field {
        "name" | "full_name" => PersonField::Name,
        "first_name" => PersonField::FirstName,
        "last_name" => PersonField::LastName,
        "email" | "email_address" => PersonField::Email,
        "phone" | "phone_number" | "mobile" | "mobile_number" | "telephone" => PersonField::Phone,
        "dob" | "date_of_birth" | "birth_date" | "birthdate" => PersonField::BirthDate,
        "zip" | "zip_code" | "postal_code" | "postcode" => PersonField::PostalCode,
        _ => return None,
    })
}

/// The email or phone of someone a record names by role (`contact_email`,
/// `work_email`, `guest_phone`): a person's detail under another word.
pub fn contact_field(field: &str) -> Option<PersonField> {
    let (_, last) = field.rsplit_once('_')?;
    match last {
        "email" => Some(PersonField::Email),
        "phone" | "mobile" => Some(PersonField::Phone),
        _ => None,
    }
}

/// Whether `word` names the person served, in any number or possessive
/// (`patient`, `Patients`, `customer's`, `users'`).
pub fn names_person(word: &str) -> bool {
    let w = word.to_lowercase();
    let w = w
        .strip_suffix("'s")
        .or_else(|| w.strip_suffix('\''))
        .unwrap_or(&w);
    let one = w.strip_suffix('s').unwrap_or(w);
    // `cardholder`, `accountholder`: someone who holds it.
    [w, one]
        .iter()
        .any(|x| PERSON_NOUNS.contains(x) || (x.len() > "holder".len() && x.ends_with("holder")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn person_nouns_in_any_form() {
        for w in [
            "patient",
            "Patients",
            "customer's",
            "users'",
            "traveller",
            "holder's",
            "cardholders",
        ] {
            assert!(names_person(w), "{w}");
        }
        for w in ["order", "account", "appointments", "s", "'s"] {
            assert!(!names_person(w), "{w}");
        }
    }

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
