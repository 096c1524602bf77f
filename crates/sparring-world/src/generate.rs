//! Values from JSON Schemas and from field names.
//!
//! [`from_schema`] makes a value that validates against a schema: every
//! type, `enum` and `const`, `format` (date, date-time, time, email, uuid,
//! uri, hostname, ipv4), string and array length bounds, numeric bounds and
//! `multipleOf` for integers, nested objects and arrays, `$ref` into
//! `$defs`/`definitions`, `allOf` (merged), `anyOf`/`oneOf` (one branch) and
//! `required`. `pattern` is not honoured. [`from_name`] makes a plausible
//! value from a field's name alone (`email`, `zip`, `status`, `*_date` …).

use crate::vocab;
use serde_json::{Map, Number, Value, json};
use sparring_types::defaults::world::{
    MAX_GENERATED_ITEMS, MAX_GENERATED_VALUES, MAX_STRING_CHARS,
};
use sparring_types::seed::Stream;
use std::cell::Cell;

/// What generation needs besides the schema.
pub(crate) struct Ctx<'a> {
    /// The document `$ref`s resolve against.
    pub root: &'a Value,
    /// Items in an array without bounds.
    pub array_items: u64,
    /// Depth at which objects and arrays stop growing.
    pub max_depth: u32,
    /// Values one record may still hold ([`MAX_GENERATED_VALUES`] at the
    /// start): a schema's sizes cannot make a record without end.
    pub budget: Cell<u64>,
}

impl<'a> Ctx<'a> {
    /// A context with a full budget.
    pub(crate) fn new(root: &'a Value, array_items: u64, max_depth: u32) -> Self {
        Self {
            root,
            array_items,
            max_depth,
            budget: Cell::new(MAX_GENERATED_VALUES),
        }
    }

    /// Takes one value from the budget; `false` once it is spent.
    fn spend(&self) -> bool {
        let left = self.budget.get();
        if left == 0 {
            return false;
        }
        self.budget.set(left - 1);
        true
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    let pointer = pointer.replace("~1", "/").replace("~0", "~");
    root.pointer(&pointer)
}

/// A value valid against `schema` (see the module docs for what is
/// honoured). `name` is the property the value is for, used when the
/// schema leaves the content open.
pub(crate) fn from_schema(
    schema: &Value,
    name: &str,
    ctx: &Ctx<'_>,
    stream: &mut Stream,
    depth: u32,
) -> Value {
    ctx.spend();
    let Some(map) = schema.as_object() else {
        // `true` (anything) or a non-schema: a plausible value by name.
        return from_name(name, stream);
    };
    if let Some(r) = map.get("$ref").and_then(Value::as_str)
        && let Some(target) = resolve(ctx.root, r)
        && depth < ctx.max_depth + 4
    {
        return from_schema(target, name, ctx, stream, depth + 1);
    }
    if let Some(c) = map.get("const") {
        return c.clone();
    }
    if let Some(options) = map.get("enum").and_then(Value::as_array)
        && let Some(v) = stream.pick(options)
    {
        return v.clone();
    }
    if let Some(parts) = map.get("allOf").and_then(Value::as_array) {
        let merged = merge_all(map, parts, ctx.root);
        return from_schema(&merged, name, ctx, stream, depth + 1);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array)
            && !branches.is_empty()
        {
            // Prefer a branch that is not `null` so records carry data.
            let non_null: Vec<&Value> = branches
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            let pick = if non_null.is_empty() {
                &branches[stream.index(branches.len())]
            } else {
                non_null[stream.index(non_null.len())]
            };
            // Keywords beside the combinator (e.g. `description`) ride along.
            let mut branch = pick.clone();
            if let (Some(b), Some(t)) = (branch.as_object_mut(), map.get("type"))
                && !b.contains_key("type")
                && !b.contains_key("$ref")
            {
                b.insert("type".to_owned(), t.clone());
            }
            return from_schema(&branch, name, ctx, stream, depth + 1);
        }
    }
    let ty: &str = match map.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
            stream
                .pick(if non_null.is_empty() {
                    &names
                } else {
                    &non_null
                })
                .copied()
                .unwrap_or("null")
        }
        _ => {
            if map.contains_key("properties") || map.contains_key("required") {
                "object"
            } else if map.contains_key("items") || map.contains_key("prefixItems") {
                "array"
            } else if map.contains_key("minimum") || map.contains_key("maximum") {
                "number"
            } else {
                return from_name(name, stream);
            }
        }
    };
    match ty {
        "object" => object(map, ctx, stream, depth),
        "array" => array(map, name, ctx, stream, depth),
        "string" => string(map, name, stream),
        "integer" => integer(map, name, stream),
        "number" => number(map, name, stream),
        "boolean" => Value::Bool(stream.below(2) == 1),
        _ => Value::Null,
    }
}

fn merge_all(map: &Map<String, Value>, parts: &[Value], root: &Value) -> Value {
    let mut merged = map.clone();
    merged.remove("allOf");
    let mut properties = merged
        .remove("properties")
        .and_then(|p| p.as_object().cloned())
        .unwrap_or_default();
    let mut required: Vec<Value> = merged
        .remove("required")
        .and_then(|r| r.as_array().cloned())
        .unwrap_or_default();
    for part in parts {
        let part = part
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(root, r))
            .unwrap_or(part);
        let Some(p) = part.as_object() else { continue };
        for (k, v) in p {
            match k.as_str() {
                "properties" => {
                    if let Some(props) = v.as_object() {
                        properties.extend(props.clone());
                    }
                }
                "required" => {
                    if let Some(r) = v.as_array() {
                        required.extend(r.iter().cloned());
                    }
                }
                _ => {
                    merged.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    if !properties.is_empty() {
        merged.insert("properties".to_owned(), Value::Object(properties));
        merged
            .entry("type".to_owned())
            .or_insert_with(|| json!("object"));
    }
    if !required.is_empty() {
        merged.insert("required".to_owned(), Value::Array(required));
    }
    Value::Object(merged)
}

fn object(map: &Map<String, Value>, ctx: &Ctx<'_>, stream: &mut Stream, depth: u32) -> Value {
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (k, s) in props {
            // Deep optional structure is where records stop growing, and
            // a spent budget keeps only what is required.
            let keep =
                required.contains(&k.as_str()) || (depth < ctx.max_depth && ctx.budget.get() > 0);
            if keep {
                out.insert(k.clone(), from_schema(s, k, ctx, stream, depth + 1));
            }
        }
    }
    for r in required {
        if !out.contains_key(r) {
            out.insert(r.to_owned(), from_name(r, stream));
        }
    }
    Value::Object(out)
}

fn array(
    map: &Map<String, Value>,
    name: &str,
    ctx: &Ctx<'_>,
    stream: &mut Stream,
    depth: u32,
) -> Value {
    let min = map.get("minItems").and_then(Value::as_u64).unwrap_or(0);
    let max = map.get("maxItems").and_then(Value::as_u64);
    let mut n = if depth >= ctx.max_depth {
        min
    } else {
        ctx.array_items.max(min)
    };
    if let Some(max) = max {
        n = n.min(max);
    }
    n = n.min(MAX_GENERATED_ITEMS);
    let item_name = sparring_types::singular(name);
    let mut items: Vec<Value> = Vec::new();
    if let Some(prefix) = map.get("prefixItems").and_then(Value::as_array) {
        for s in prefix {
            items.push(from_schema(s, &item_name, ctx, stream, depth + 1));
        }
        return Value::Array(items);
    }
    // Borrowed, not copied: an array of ids is made for many records.
    let anything = Value::Bool(true);
    let item_schema = map.get("items").unwrap_or(&anything);
    let unique = map.get("uniqueItems") == Some(&Value::Bool(true));
    let mut tries = 0;
    while (items.len() as u64) < n && tries < n * 8 + 8 && ctx.budget.get() > 0 {
        tries += 1;
        let v = from_schema(item_schema, &item_name, ctx, stream, depth + 1);
        if unique && items.contains(&v) {
            continue;
        }
        items.push(v);
    }
    Value::Array(items)
}

fn string(map: &Map<String, Value>, name: &str, stream: &mut Stream) -> Value {
    let format = map.get("format").and_then(Value::as_str).unwrap_or("");
    let mut s = match format {
        "date" => date(stream),
        "date-time" => format!("{}T{}Z", date(stream), time(stream)),
        "time" => format!("{}Z", time(stream)),
        "email" | "idn-email" => email(stream),
        "uuid" => uuid(stream),
        "uri" | "url" | "iri" => format!("https://{}.test/{}", word(stream), stream.below(10_000)),
        "hostname" | "idn-hostname" => format!("{}.test", word(stream)),
        "ipv4" => format!(
            "10.{}.{}.{}",
            stream.below(256),
            stream.below(256),
            1 + stream.below(254)
        ),
        "ipv6" => format!("fd00::{:x}", stream.below(0xffff)),
        _ => match from_name(name, stream) {
            Value::String(s) => s,
            other => other.to_string(),
        },
    };
    // A minimum past the cap is not met: a string of a terabyte is no
    // record.
    let min = usize::try_from(map.get("minLength").and_then(Value::as_u64).unwrap_or(0))
        .unwrap_or(usize::MAX)
        .min(MAX_STRING_CHARS);
    let max = map
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| usize::try_from(m).unwrap_or(usize::MAX));
    let have = s.chars().count();
    if have < min {
        s.extend(std::iter::repeat_n('x', min - have));
    }
    if let Some(max) = max
        && s.chars().count() > max
    {
        s = s.chars().take(max).collect();
    }
    Value::String(s)
}

fn bounds(map: &Map<String, Value>, default: (f64, f64)) -> (f64, f64) {
    let mut lo = map
        .get("minimum")
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN);
    let mut hi = map
        .get("maximum")
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN);
    if let Some(x) = map.get("exclusiveMinimum").and_then(Value::as_f64) {
        lo = if lo.is_nan() { x } else { lo.max(x) };
    }
    if let Some(x) = map.get("exclusiveMaximum").and_then(Value::as_f64) {
        hi = if hi.is_nan() { x } else { hi.min(x) };
    }
    match (lo.is_nan(), hi.is_nan()) {
        (true, true) => default,
        (false, true) => (lo, lo.max(default.0) + (default.1 - default.0)),
        (true, false) => ((hi - (default.1 - default.0)).min(default.0.min(hi)), hi),
        (false, false) => (lo, hi),
    }
}

fn integer(map: &Map<String, Value>, name: &str, stream: &mut Stream) -> Value {
    let default = if name.contains("year") {
        (2020.0, 2026.0)
    } else {
        (0.0, 100.0)
    };
    let (lo, hi) = bounds(map, default);
    let excl_lo = map.get("exclusiveMinimum").and_then(Value::as_f64);
    let excl_hi = map.get("exclusiveMaximum").and_then(Value::as_f64);
    let mut lo = lo.ceil() as i64;
    let mut hi = hi.floor() as i64;
    if excl_lo.is_some_and(|x| x as i64 >= lo && (x.fract() == 0.0)) {
        lo = excl_lo.unwrap_or_default() as i64 + 1;
    }
    if excl_hi.is_some_and(|x| x as i64 <= hi && (x.fract() == 0.0)) {
        hi = excl_hi.unwrap_or_default() as i64 - 1;
    }
    if hi < lo {
        hi = lo;
    }
    let step = map
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m >= 1.0 && m.fract() == 0.0)
        .map_or(1, |m| m as i64);
    let first = lo.div_euclid(step) * step + if lo.rem_euclid(step) == 0 { 0 } else { step };
    let count = if hi >= first {
        (hi - first) / step + 1
    } else {
        1
    };
    let v = first + step * stream.below(count as u64) as i64;
    Value::Number(v.into())
}

fn number(map: &Map<String, Value>, name: &str, stream: &mut Stream) -> Value {
    let money = ["price", "amount", "total", "cost", "balance", "fee"]
        .iter()
        .any(|w| name.contains(w));
    let (lo, hi) = bounds(map, if money { (5.0, 500.0) } else { (0.0, 100.0) });
    let excl_lo = map.contains_key("exclusiveMinimum");
    let excl_hi = map.contains_key("exclusiveMaximum");
    let span = (hi - lo).max(0.0);
    let mut v = lo + span * stream.unit();
    v = (v * 100.0).round() / 100.0;
    // Rounding may land on an excluded or outside bound; step back inside.
    if v < lo || (excl_lo && v <= lo) || v > hi || (excl_hi && v >= hi) {
        v = lo + span / 2.0;
    }
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn date(stream: &mut Stream) -> String {
    format!(
        "{}-{:02}-{:02}",
        2024 + stream.below(2),
        1 + stream.below(12),
        1 + stream.below(28)
    )
}

fn time(stream: &mut Stream) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        stream.below(24),
        stream.below(60),
        stream.below(60)
    )
}

fn email(stream: &mut Stream) -> String {
    let first = stream.pick(vocab::FIRST_NAMES).copied().unwrap_or("ana");
    let last = stream.pick(vocab::LAST_NAMES).copied().unwrap_or("lima");
    let domain = stream.pick(vocab::DOMAINS).copied().unwrap_or("mail.test");
    format!(
        "{}.{}{}@{domain}",
        first.to_lowercase(),
        last.to_lowercase(),
        stream.below(100)
    )
}

/// Makes a generated person's identity agree with itself: the name follows
/// an id that spells one (tau2's `yusuf_rossi_9620` is Yusuf Rossi), and the
/// email is built from the name (`yusuf.rossi28@mail.test`, keeping the
/// generated number and domain). Fields the record lacks stay absent; a
/// record with no name and no email is left as it is. Draws nothing, so no
/// other generated value moves.
pub(crate) fn agree_person(record: &mut Map<String, Value>, id: &str) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let held = || -> Option<(String, String)> {
        let parts = |f: Option<String>, l: Option<String>| Some((f?, l?));
        match record.get("name") {
            Some(Value::Object(n)) => parts(text(n.get("first_name")), text(n.get("last_name"))),
            _ => parts(
                text(record.get("first_name")),
                text(record.get("last_name")),
            ),
        }
        .or_else(|| {
            let full = text(record.get("name")).or_else(|| text(record.get("full_name")))?;
            let (f, l) = full.split_once(' ')?;
            Some((f.to_owned(), l.to_owned()))
        })
    };
    let named = ["name", "full_name", "first_name", "last_name"]
        .iter()
        .any(|k| record.contains_key(*k));
    let from_id = if named { name_in_id(id) } else { None };
    let Some((first, last)) = from_id.or_else(held) else {
        return;
    };
    let full = format!("{first} {last}");
    for key in ["name", "full_name", "first_name", "last_name"] {
        let value = match (key, record.get_mut(key)) {
            ("name", Some(Value::Object(n))) => {
                for (k, v) in [("first_name", &first), ("last_name", &last)] {
                    if n.contains_key(k) {
                        n.insert(k.to_owned(), Value::String(v.clone()));
                    }
                }
                continue;
            }
            (_, None | Some(Value::Object(_))) => continue,
            ("first_name", _) => first.clone(),
            ("last_name", _) => last.clone(),
            _ => full.clone(),
        };
        record.insert(key.to_owned(), Value::String(value));
    }
    let local = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase()
    };
    for key in ["email", "email_address"] {
        let Some(Value::String(email)) = record.get(key) else {
            continue;
        };
        let (old, domain) = email
            .split_once('@')
            .unwrap_or((email.as_str(), "mail.test"));
        let digits: String = old.chars().filter(char::is_ascii_digit).collect();
        let email = format!("{}.{}{digits}@{domain}", local(&first), local(&last));
        record.insert(key.to_owned(), Value::String(email));
    }
}

/// The name an id spells: `yusuf_rossi_9620` → (`Yusuf`, `Rossi`); two
/// alphabetic words and a number, nothing else.
pub fn name_in_id(id: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = id.split('_').collect();
    let [first, last, number] = parts.as_slice() else {
        return None;
    };
    let word = |w: &str| w.len() > 1 && w.chars().all(|c| c.is_ascii_alphabetic());
    if !word(first) || !word(last) || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let title = |w: &str| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + &c.as_str().to_lowercase())
            .unwrap_or_default()
    };
    Some((title(first), title(last)))
}

fn uuid(stream: &mut Stream) -> String {
    let a = stream.next_u64();
    let b = stream.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        8 + (b >> 62),
        (b >> 48) & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

fn word(stream: &mut Stream) -> String {
    noun(stream).to_owned()
}

/// One noun, borrowed (what [`word`] copies).
fn noun(stream: &mut Stream) -> &'static str {
    stream.pick(vocab::NOUNS).copied().unwrap_or("item")
}

/// A plausible value for a field known only by its name.
pub(crate) fn from_name(name: &str, stream: &mut Stream) -> Value {
    // Lowercased only when that changes something (names are mostly
    // snake case), and searched byte by byte: every generated string asks.
    let n: std::borrow::Cow<'_, str> =
        if name.is_ascii() && !name.bytes().any(|b| b.is_ascii_uppercase()) {
            name.into()
        } else {
            name.to_lowercase().into()
        };
    let n: &str = &n;
    let has = |w: &str| contains(n, w);
    let first = stream_pick(vocab::FIRST_NAMES);
    if has("email") {
        return Value::String(email(stream));
    }
    if n == "dob" || has("birth") || has("date") || n.ends_with("_on") || n == "day" {
        return Value::String(if n == "dob" || has("birth") {
            format!(
                "{}-{:02}-{:02}",
                1950 + stream.below(55),
                1 + stream.below(12),
                1 + stream.below(28)
            )
        } else {
            date(stream)
        });
    }
    if n.ends_with("_at") || has("time") {
        return Value::String(format!("{}T{}Z", date(stream), time(stream)));
    }
    if n == "first_name" {
        return Value::String(first(stream));
    }
    if n == "last_name" || n == "surname" {
        return Value::String(stream_pick(vocab::LAST_NAMES)(stream));
    }
    if n == "name" || n == "full_name" || n == "customer_name" || n == "user_name" {
        let first = pick(stream, vocab::FIRST_NAMES);
        return Value::String(format!("{first} {}", pick(stream, vocab::LAST_NAMES)));
    }
    if has("phone") {
        return Value::String(format!(
            "555-{:03}-{:04}",
            100 + stream.below(900),
            stream.below(10_000)
        ));
    }
    if n == "zip" || has("postal") || has("zipcode") {
        let (_, _, zip) = vocab::CITIES[stream.index(vocab::CITIES.len())];
        return Value::String(zip.to_owned());
    }
    if n == "city" {
        return Value::String(
            vocab::CITIES[stream.index(vocab::CITIES.len())]
                .0
                .to_owned(),
        );
    }
    if n == "state" {
        return Value::String(
            vocab::CITIES[stream.index(vocab::CITIES.len())]
                .1
                .to_owned(),
        );
    }
    if n == "country" {
        return Value::String("USA".to_owned());
    }
    if n == "address" || n == "address1" || n == "street" || n == "address_line1" {
        let number = 1 + stream.below(999);
        return Value::String(format!("{number} {}", pick(stream, vocab::STREETS)));
    }
    if n == "address2" || n == "address_line2" {
        return Value::String(format!("Apt {}", 1 + stream.below(40)));
    }
    if n == "origin" || n == "destination" || has("airport") {
        return Value::String(stream_pick(vocab::AIRPORTS)(stream));
    }
    if ["price", "amount", "total", "cost", "balance", "fee"]
        .iter()
        .any(|w| has(w))
    {
        let cents = 500 + stream.below(50_000);
        return Number::from_f64(cents as f64 / 100.0).map_or(Value::Null, Value::Number);
    }
    if has("count") || has("quantity") || has("baggage") || n == "limit" || has("number_of") {
        return Value::Number((stream.below(4)).into());
    }
    if n.starts_with("is_") || n.starts_with("has_") || n.ends_with("_enabled") {
        return Value::Bool(stream.below(2) == 1);
    }
    if n == "status" {
        return Value::String("active".to_owned());
    }
    if n == "description" || n == "summary" || n == "reason" || n == "note" || n == "notes" {
        let adjective = pick(stream, vocab::ADJECTIVES);
        return Value::String(format!("{adjective} {}", noun(stream)));
    }
    if n == "title" || n.ends_with("_name") || n == "product" || n == "item" {
        let adjective = capitalise(pick(stream, vocab::ADJECTIVES));
        return Value::String(format!("{adjective} {}", noun(stream)));
    }
    let adjective = pick(stream, vocab::ADJECTIVES);
    Value::String(format!("{adjective}-{}", noun(stream)))
}

/// Whether `needle` occurs in `hay`: a byte loop, cheaper than the general
/// substring search for the short names and words compared here.
fn contains(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let Some((&head, rest)) = needle.split_first() else {
        return true;
    };
    hay.len() >= needle.len()
        && (0..=hay.len() - needle.len())
            .any(|i| hay[i] == head && &hay[i + 1..i + needle.len()] == rest)
}

/// One word of `list` (as [`Stream::pick`] draws it), borrowed.
fn pick(stream: &mut Stream, list: &'static [&'static str]) -> &'static str {
    stream.pick(list).copied().unwrap_or("x")
}

fn stream_pick(list: &'static [&'static str]) -> impl Fn(&mut Stream) -> String {
    move |s: &mut Stream| pick(s, list).to_owned()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen_for(schema: &Value, seed: u64) -> Value {
        let ctx = Ctx::new(schema, 2, 8);
        from_schema(schema, "x", &ctx, &mut Stream::derive(seed, "g", &[]), 0)
    }

    fn values_in(v: &Value) -> usize {
        match v {
            Value::Array(a) => 1 + a.iter().map(values_in).sum::<usize>(),
            Value::Object(o) => 1 + o.values().map(values_in).sum::<usize>(),
            _ => 1,
        }
    }

    #[test]
    fn sizes_are_capped() {
        let started = std::time::Instant::now();
        let long = gen_for(
            &json!({"type": "string", "minLength": 1_000_000_000_000u64}),
            1,
        );
        assert_eq!(long.as_str().unwrap().len(), MAX_STRING_CHARS);
        let nested = json!({"type": "array", "minItems": 100_000, "items":
            {"type": "array", "minItems": 100_000, "items":
                {"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "minLength": 100_000}}}}});
        let v = gen_for(&nested, 1);
        assert!(
            values_in(&v) as u64 <= MAX_GENERATED_VALUES + 2,
            "{}",
            values_in(&v)
        );
        assert!(v.as_array().unwrap().len() as u64 <= MAX_GENERATED_ITEMS);
        // Well under a second on this machine, in a debug build.
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    }

    #[test]
    fn formats_refs_and_combinators_validate() {
        let schema = json!({
            "type": "object",
            "required": ["id", "when", "who", "tags", "kind", "n"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "when": {"type": "string", "format": "date-time"},
                "day": {"type": "string", "format": "date"},
                "who": {"type": "string", "format": "email"},
                "tags": {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 5}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
                "kind": {"enum": ["a", "b"]},
                "n": {"type": "integer", "minimum": 10, "maximum": 20, "multipleOf": 5},
                "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "addr": {"$ref": "#/$defs/Addr"},
                "either": {"oneOf": [{"type": "integer"}, {"type": "string", "format": "email"}]},
                "opt": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Addr"}]},
                "both": {"allOf": [{"$ref": "#/$defs/Addr"}, {"type": "object", "required": ["extra"], "properties": {"extra": {"type": "boolean"}}}]},
            "closed": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "integer"}}},
                "maybe": {"type": ["string", "null"], "format": "date"}
            },
            "$defs": {"Addr": {"type": "object", "required": ["zip"], "properties": {"zip": {"type": "string"}, "lines": {"type": "array", "items": {"type": "string"}}}}}
        });
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap();
        for seed in 0..200 {
            let v = gen_for(&schema, seed);
            let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{v}: {errors:?}");
        }
    }
}
