//! Arguments that echo the schema instead of giving real data.
//!
//! An agent that has not asked the customer often fills an argument with
//! what the schema says about it: the parameter's own name or title, words
//! of its description, the description's example, or a template value such
//! as `user@example.com`, `John Doe` or `<order_id>`. The world refuses
//! those with a hint naming the parameter and what a real value looks like.

use crate::shape;
use serde_json::Value;
use sparring_reading::tool::name_words as words;

/// Whole values that are never real data (compared lowercase, trimmed).
/// Personal-looking values (`John Smith`, `123 Main St`, zip `12345`) are
/// not here: real people have them.
pub const PLACEHOLDERS: &[&str] = &[
    "string",
    "str",
    "text",
    "value",
    "user@example.com",
    "email@example.com",
    "name@example.com",
    "test@test.com",
    "john doe",
    "jane doe",
    "first last",
    "firstname lastname",
    "first name",
    "last name",
    "full name",
    "your name",
    "customer name",
    "test user",
    "foo",
    "bar",
    "foo bar",
    "xxx",
    "abc",
    "abc123",
    "example",
    "sample",
    "placeholder",
    "unknown",
    "n/a",
    "na",
    "none",
    "null",
    "undefined",
    "todo",
    "tbd",
    "id",
    "your_order_id",
    "order_id_here",
    "insert id here",
];

/// Digit runs that stand in for an id (only for id parameters: a zip or
/// an amount may well be `12345`).
const ID_PLACEHOLDERS: &[&str] = &[
    "0",
    "1",
    "123",
    "1234",
    "12345",
    "123456",
    "1234567",
    "12345678",
    "123456789",
    "0000",
];

/// Email local parts that only stand for an address.
const EMAIL_LOCALS: &[&str] = &[
    "user",
    "email",
    "name",
    "example",
    "test",
    "your",
    "youremail",
    "your.email",
    "someone",
    "something",
    "customer",
    "username",
    "firstname.lastname",
    "john.doe",
    "jane.doe",
];

/// What one parameter's schema says, prepared once per tool.
#[derive(Clone, Debug, Default)]
pub(crate) struct ParamEcho {
    /// The parameter name.
    pub name: String,
    /// Forms of the name and title that only repeat it (`order_id`,
    /// `order id`, `orderid`, `Order Id`), lowercase.
    pub forms: Vec<String>,
    /// The words of the name (`order`, `id`).
    pub name_words: Vec<String>,
    /// Words of the description outside quotes, lowercase.
    pub description_words: Vec<String>,
    /// Quoted examples in the description, lowercase.
    pub examples: Vec<String>,
    /// Whether the parameter names a record or reaches a person (an id,
    /// an email, a phone): copying its example is then an echo. Names are
    /// not: the example `John` is also a real first name.
    pub identifying: bool,
    /// Whether the parameter is an id (`*_id`, `*_number`, `*_code`).
    pub id_like: bool,
    /// The parameter has an `enum`: validation already decides.
    pub enumerated: bool,
    /// What a real value looks like, for the hint.
    pub looks_like: Option<String>,
}

impl ParamEcho {
    pub(crate) fn new(name: &str, schema: Option<&Value>) -> Self {
        let title = schema
            .and_then(|s| s.get("title"))
            .and_then(Value::as_str)
            .map(str::to_lowercase);
        let description = schema
            .and_then(|s| s.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let name_words = words(name);
        let mut forms = vec![
            name.to_lowercase(),
            name_words.join(" "),
            name_words.concat(),
            name_words.join("-"),
        ];
        if let Some(t) = title {
            forms.push(t);
        }
        let examples: Vec<String> = shape::quoted(description)
            .into_iter()
            .map(|q| q.trim().to_lowercase())
            .collect();
        let mut unquoted = description.to_owned();
        for q in shape::quoted(description) {
            unquoted = unquoted.replacen(&q, " ", 1);
        }
        let description_words = text_words(&unquoted);
        let last = name_words.last().map_or("", String::as_str);
        let id_like = matches!(last, "id" | "number" | "code");
        let identifying = id_like
            || matches!(last, "email" | "phone")
            || name.contains("email")
            || name.contains("phone");
        let enumerated =
            schema.is_some_and(|s| s.get("enum").is_some() || s.get("const").is_some());
        Self {
            name: name.to_owned(),
            forms,
            name_words,
            description_words,
            examples,
            identifying,
            id_like,
            enumerated,
            looks_like: None,
        }
    }

    /// Why `value` only echoes the schema, if it does.
    pub(crate) fn echo(&self, value: &str, min_words: usize) -> Option<String> {
        if self.enumerated {
            return None;
        }
        let trimmed = value.trim();
        // Lowercased only when it changes something: most values are ids
        // and plain ASCII.
        let v: std::borrow::Cow<'_, str> = if trimmed
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
        {
            trimmed.into()
        } else {
            trimmed.to_lowercase().into()
        };
        let v: &str = &v;
        if v.is_empty() {
            return None;
        }
        if PLACEHOLDERS.contains(&v) || (self.id_like && ID_PLACEHOLDERS.contains(&v)) {
            return Some(format!("`{value}` is a placeholder"));
        }
        if self.forms.iter().any(|f| f == v) {
            return Some(format!("`{value}` is the parameter's own name"));
        }
        if !v.contains(' ') && self.name_words.iter().any(|w| w == v) && v.len() > 1 {
            return Some(format!("`{value}` is a word of the parameter's name"));
        }
        if let Some(inner) = wrapped(v)
            && inner
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ' ' || c == '-' || c == '.')
        {
            return Some(format!("`{value}` is a template slot"));
        }
        // Counted, not collected: this runs on every string argument.
        let alnum = || v.chars().filter(|c| c.is_alphanumeric());
        let many = alnum().nth(2).is_some();
        if many && alnum().all(|c| c == 'x') {
            return Some(format!("`{value}` is a mask, not a value"));
        }
        if many && alnum().all(|c| c == '0') && !v.starts_with('#') {
            return Some(format!("`{value}` is a mask, not a value"));
        }
        // A stand-in name at any domain is a template; a person's own
        // name at a reserved domain (`noah.brown7@example.com`) is how test
        // data and tau2's users look, and is accepted.
        if let Some((local, _)) = v.split_once('@')
            && EMAIL_LOCALS.contains(&local)
        {
            return Some(format!("`{value}` is a template email address"));
        }
        if self.identifying && self.examples.iter().any(|e| e == v) {
            return Some(format!(
                "`{value}` is the example from the parameter's description"
            ));
        }
        // A description of fewer words than a repeat needs cannot be
        // repeated: the value's words are split only when it might be.
        let min_words = min_words.max(1);
        if self.description_words.len() < min_words {
            return None;
        }
        // The value's words, borrowed: `v` is lowercase already, and
        // lowercasing it again changes nothing for ASCII.
        let lower: std::borrow::Cow<'_, str> = if v.is_ascii() {
            v.into()
        } else {
            v.to_lowercase().into()
        };
        let vw = || borrowed_words(&lower);
        let n = vw().count();
        if n >= min_words
            && self
                .description_words
                .windows(n)
                .any(|window| window.iter().zip(vw()).all(|(a, b)| a == b))
        {
            return Some(format!("`{value}` repeats the parameter's description"));
        }
        None
    }

    /// The hint for a refused value.
    pub(crate) fn hint(&self) -> String {
        let what = self.name_words.join(" ");
        match &self.looks_like {
            Some(example) => format!(
                "ask the customer for their real {what}; a real `{}` looks like `{example}`",
                self.name
            ),
            None => format!("ask the customer for their real {what}"),
        }
    }
}

/// The inside of `<x>`, `{x}`, `{{x}}`, `[x]`, `$x`, `%x%`.
fn wrapped(v: &str) -> Option<&str> {
    for (open, close) in [("{{", "}}"), ("<", ">"), ("{", "}"), ("[", "]"), ("%", "%")] {
        if let Some(inner) = v.strip_prefix(open).and_then(|r| r.strip_suffix(close))
            && !inner.is_empty()
        {
            return Some(inner);
        }
    }
    v.strip_prefix('$')
        .filter(|r| !r.is_empty() && !r.contains(' '))
}

fn text_words(text: &str) -> Vec<String> {
    borrowed_words(&text.to_lowercase())
        .map(str::to_owned)
        .collect()
}

/// The words of a lowercase text, as [`text_words`] splits them.
fn borrowed_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn order_id() -> ParamEcho {
        ParamEcho::new(
            "order_id",
            Some(&json!({"type": "string", "title": "Order Id",
                "description": "The order id, such as '#W0000000'. Be careful there is a '#' symbol."})),
        )
    }

    /// Checks that `p` takes each of `values` for an echo (`echo`) or for
    /// a real value.
    fn reads(p: &ParamEcho, values: &[&str], echo: bool) {
        for v in values {
            assert_eq!(p.echo(v, 2).is_some(), echo, "{}: {v}", p.name);
        }
    }

    #[test]
    fn echoes_are_caught() {
        reads(
            &order_id(),
            &[
                "order_id",
                "Order Id",
                "order id",
                "<order_id>",
                "{order_id}",
                "{{order_id}}",
                "#W0000000",
                "the order id",
                "string",
                "xxx",
                "XXXX-XXXX",
                "123",
                "order",
            ],
            true,
        );
        let email = json!({"type": "string", "description": "The customer's email address."});
        reads(
            &ParamEcho::new("email", Some(&email)),
            &[
                "user@example.com",
                "test@test.com",
                "email",
                "customer's email",
                "john.doe@gmail.com",
            ],
            true,
        );
        reads(
            &ParamEcho::new("name", Some(&json!({"type": "string"}))),
            &[
                "John Doe",
                "first name",
                "full name",
                "[name]",
                "$NAME",
                "foo",
            ],
            true,
        );
        reads(
            &ParamEcho::new("user_id", Some(&json!({"type": "string"}))),
            &["12345"],
            true,
        );
    }

    #[test]
    fn real_values_pass() {
        reads(&order_id(), &["#W1001", "#W4817320"], false);
        let email = ParamEcho::new("email", Some(&json!({"type": "string"})));
        reads(
            &email,
            &["ana.lima@mail.test", "grace.kim@gmail.com"],
            false,
        );
        let name = ParamEcho::new("full_name", Some(&json!({"type": "string"})));
        reads(&name, &["Grace Kim", "John Smith"], false);
        reads(
            &email,
            &["noah.brown7@example.com", "john.smith@example.com"],
            false,
        );
        // A value the description names (an example, an enum value) is a
        // real one where the parameter names no record: a first name, a
        // zip, a street, a reason, an expression.
        for (name, description, value) in [
            (
                "first_name",
                "The first name of the customer, such as 'John'.",
                "John",
            ),
            ("zip", "The zip code, such as '12345'.", "12345"),
            (
                "address1",
                "The first line of the address, such as '123 Main St'.",
                "123 Main St",
            ),
            (
                "reason",
                "The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'.",
                "no longer needed",
            ),
            ("expression", "The expression, such as '2 + 2'.", "2 + 2"),
        ] {
            let p = ParamEcho::new(
                name,
                Some(&json!({"type": "string", "description": description})),
            );
            reads(&p, &[value], false);
        }
    }
}
