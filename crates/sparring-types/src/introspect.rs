//! The field names a `Deserialize` struct declares, read off its serde
//! derive, so a list of names is never written by hand beside the struct.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// Why the probe stops: it has what it came for.
#[derive(Debug)]
struct Found;

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names found")
    }
}

impl std::error::Error for Found {}

impl de::Error for Found {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Self
    }
}

/// A deserializer that records the field list a struct asks for and stops.
struct Probe<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Found;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Found> {
        Err(Found)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Found> {
        *self.0 = fields;
        Err(Found)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The names `T` deserializes from (with the aliases serde lists).
pub(crate) fn field_names<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut fields));
    fields.to_vec()
}
