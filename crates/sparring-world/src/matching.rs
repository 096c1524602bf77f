//! Identifiers as people write them: a phone number with or without its
//! spaces and country code, an id in either case.

/// Characters people put inside an identifier that are no part of it
/// (`07700 900123`, `BW-4001-2345`, `(614) 555-0182`).
const SEPARATORS: &[char] = &[' ', '-', '.', '/', '(', ')', '\u{a0}'];

/// The shortest national number a country code may be read off
/// (`+44 7700 900123` is `07700 900123`): shorter ones are too easily
/// another number's end.
const MIN_NATIONAL_DIGITS: usize = 7;

/// The longest country code (ITU E.164 codes have one to three digits).
const MAX_COUNTRY_CODE_DIGITS: usize = 3;

/// Whether `given` names the identifier `stored` holds: the same text but
/// for case and surrounding spaces; the same once spaces, dashes, dots,
/// slashes and brackets are left out (`07700900123` for `07700 900123`,
/// `bw40012345` for `BW-40012345`); or the same phone number written with
/// its country code (`+44 7700 900123` or `0044 7700 900123` for
/// `07700 900123`, `+1 614 555 0182` for `(614) 555-0182`). Anything else,
/// a different digit included, is another identifier.
pub fn same_identifier(given: &str, stored: &str) -> bool {
    let (g, s) = (given.trim(), stored.trim());
    if g.eq_ignore_ascii_case(s) {
        return true;
    }
    let (cg, cs) = (compact(g), compact(s));
    if cg.is_empty() || cs.is_empty() {
        return false;
    }
    if cg == cs {
        return true;
    }
    same_phone(&cg, &cs) || same_phone(&cs, &cg)
}

/// The identifier without separators, uppercase.
fn compact(text: &str) -> String {
    text.chars()
        .filter(|c| !SEPARATORS.contains(c) && !c.is_whitespace())
        .flat_map(char::to_uppercase)
        .collect()
}

/// Whether `international` (`+447700900123`, `00447700900123`) is the
/// phone number `national` (`07700900123`, `6145550182`) with a country
/// code: both all digits, and the national number (its trunk `0` aside)
/// the end of the international one after one to three digits.
fn same_phone(international: &str, national: &str) -> bool {
    let Some(digits) = international
        .strip_prefix('+')
        .or_else(|| international.strip_prefix("00"))
    else {
        return false;
    };
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(digits) || !all_digits(national) {
        return false;
    }
    let national = national.strip_prefix('0').unwrap_or(national);
    let code = digits.len().saturating_sub(national.len());
    national.len() >= MIN_NATIONAL_DIGITS
        && (1..=MAX_COUNTRY_CODE_DIGITS).contains(&code)
        && digits.ends_with(national)
}

/// Digits a phone number has at the least and the most (a national number
/// without its area code is shorter; E.164 allows fifteen).
const PHONE_DIGITS: std::ops::RangeInclusive<usize> = 9..=15;

/// Whether `text` is written as people write a phone number: digits with
/// spaces, dashes, dots or brackets between them and perhaps a leading
/// `+`, nine to fifteen digits, and a mark of a phone (a leading `+`, `0`
/// or `(`, or a separator between digit groups): `07700 900123`, `+44 7700
/// 900311`, `(614) 555-0182`; not `4003192556` (an account number) or
/// `BW-40012588` (letters).
pub fn looks_like_phone(text: &str) -> bool {
    let t = text.trim();
    let body = t.strip_prefix('+').unwrap_or(t);
    if !body
        .chars()
        .all(|c| c.is_ascii_digit() || SEPARATORS.contains(&c))
    {
        return false;
    }
    let digits = body.chars().filter(char::is_ascii_digit).count();
    let marked = t.starts_with(['+', '0', '('])
        || body
            .trim_matches(|c: char| !c.is_ascii_digit())
            .contains(SEPARATORS);
    PHONE_DIGITS.contains(&digits) && marked
}

/// Whether a stored value is an identifier whose written forms
/// [`same_identifier`] may match (it holds a few digits): names and words
/// are matched as they are.
pub(crate) fn looks_like_identifier(stored: &str) -> bool {
    stored.chars().filter(char::is_ascii_digit).count() >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phone_numbers_are_told_from_other_numbers_by_how_they_are_written() {
        for yes in [
            "07700 900123",
            "+44 7700 900311",
            "(614) 555-0182",
            "0161 496 0277",
            "+14155550134",
            "43009 175208",
        ] {
            assert!(looks_like_phone(yes), "a phone: {yes}");
        }
        for no in [
            "4003192556",
            "BW-40012588",
            "12/04/1986",
            "2024-07-02",
            "E104522",
            "0134",
            "381204",
            "+44 77",
        ] {
            assert!(!looks_like_phone(no), "not a phone: {no}");
        }
    }

    #[test]
    fn a_phone_number_in_any_written_form_is_the_same_number() {
        for given in [
            "07700 900123",
            "07700900123",
            "07700-900-123",
            "+44 7700 900123",
            "+447700900123",
            "0044 7700 900123",
            "(07700) 900123",
        ] {
            assert!(same_identifier(given, "07700 900123"), "{given}");
        }
        for given in [
            "(614) 555-0182",
            "614-555-0182",
            "+1 614 555 0182",
            "6145550182",
        ] {
            assert!(same_identifier(given, "(614) 555-0182"), "{given}");
        }
        assert!(same_identifier("07700 900123", "+44 7700 900123"));
    }

    #[test]
    fn a_different_number_is_another_identifier() {
        for given in [
            "07700 900124",
            "7700 900123",
            "+44 7700 900124",
            "+12 345 7700 900123",
            "900123",
            "",
        ] {
            assert!(!same_identifier(given, "07700 900123"), "{given}");
        }
        // A leading zero without a country code is another number.
        assert!(!same_identifier("04001772519", "4001772519"));
        assert!(!same_identifier("BW-40012346", "BW-40012345"));
    }

    #[test]
    fn an_id_matches_in_either_case_and_without_its_dashes() {
        assert!(same_identifier("bw-40012345", "BW-40012345"));
        assert!(same_identifier("BW40012345", "BW-40012345"));
        assert!(same_identifier(" kdzrta ", "KDZRTA"));
        assert!(!same_identifier("KDZRTB", "KDZRTA"));
    }
}
