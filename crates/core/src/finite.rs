//! Non-finite numbers (NaN, ±∞) in any `Serialize` value, found by path.
//!
//! JSON has no such numbers: serde_json writes them as `null`. A required
//! figure then no longer reads back (the whole stored summary is lost), and
//! an optional one reads back as "unavailable" without saying why. Figures
//! are checked here before they are stored, and each one found is named.
//!
//! [`non_finite_paths`] walks the value with a serializer that writes
//! nothing and records the path (`per_cpu[1].split.busy`) of every `f32` or
//! `f64` that is not finite.

#![forbid(unsafe_code)]

use serde::ser::{self, Serialize};
use std::fmt;

/// The paths of every non-finite `f32`/`f64` in `value`, in serialization
/// order: fields joined by `.`, sequence items as `[i]`, map entries as
/// `[key]`. Empty when every number is finite.
pub fn non_finite_paths<T: Serialize + ?Sized>(value: &T) -> Vec<String> {
    let mut finder = Finder::default();
    // The finder never fails: every method returns Ok.
    let _ = value.serialize(&mut finder);
    finder.found
}

#[derive(Default)]
struct Finder {
    path: Vec<String>,
    /// Each open sequence, struct or map, innermost last.
    open: Vec<Open>,
    found: Vec<String>,
}

/// An open compound value.
#[derive(Clone, Copy)]
struct Open {
    /// The next item's index (sequences).
    index: usize,
    /// It is an enum variant, whose name was pushed onto the path.
    variant: bool,
}

impl Finder {
    fn number(&mut self, v: f64) {
        if !v.is_finite() {
            self.found.push(self.path_text());
        }
    }

    fn path_text(&self) -> String {
        let mut out = String::new();
        for part in &self.path {
            if !part.starts_with('[') && !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
        if out.is_empty() {
            out.push_str("(the value)");
        }
        out
    }

    fn within<T: Serialize + ?Sized>(&mut self, part: String, value: &T) {
        self.path.push(part);
        let _ = value.serialize(&mut *self);
        self.path.pop();
    }

    fn next_item<T: Serialize + ?Sized>(&mut self, value: &T) {
        let i = self.open.last().map_or(0, |o| o.index);
        if let Some(last) = self.open.last_mut() {
            last.index += 1;
        }
        self.within(format!("[{i}]"), value);
    }

    /// Opens a compound value; a variant's name goes onto the path.
    fn begin(&mut self, variant: Option<&str>) -> &mut Self {
        if let Some(v) = variant {
            self.path.push(v.to_string());
        }
        self.open.push(Open {
            index: 0,
            variant: variant.is_some(),
        });
        self
    }

    fn close(&mut self) -> Done {
        if self.open.pop().is_some_and(|o| o.variant) {
            self.path.pop();
        }
        Ok(())
    }
}

/// The finder's error type; never produced.
#[derive(Debug)]
struct Never;

impl fmt::Display for Never {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("never")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Never
    }
}

type Done = Result<(), Never>;

macro_rules! ignore {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(fn $name(self, _: $ty) -> Done { Ok(()) })*
    };
}

impl ser::Serializer for &mut Finder {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    ignore!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str,
        serialize_bytes: &[u8], serialize_unit_struct: &'static str,
    );

    fn serialize_f32(self, v: f32) -> Done {
        self.number(f64::from(v));
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> Done {
        self.number(v);
        Ok(())
    }
    fn serialize_none(self) -> Done {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Done {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Done {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Done {
        self.within(variant.to_string(), v);
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Never> {
        Ok(self.begin(None))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, Never> {
        Ok(self.begin(None))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self.begin(None))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Never> {
        Ok(self.begin(Some(variant)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Never> {
        Ok(self.begin(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self.begin(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Never> {
        Ok(self.begin(Some(variant)))
    }
}

macro_rules! seq_like {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for &mut Finder {
            type Ok = ();
            type Error = Never;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                self.next_item(value);
                Ok(())
            }
            fn end(self) -> Done {
                self.close()
            }
        }
    )*};
}

seq_like!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

macro_rules! struct_like {
    ($($trait:ident),*) => {$(
        impl ser::$trait for &mut Finder {
            type Ok = ();
            type Error = Never;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Done {
                self.within(key.to_string(), value);
                Ok(())
            }
            fn end(self) -> Done {
                self.close()
            }
        }
    )*};
}

struct_like!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for &mut Finder {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        let key = serde_json::to_string(key).unwrap_or_else(|_| "?".into());
        self.path.push(format!("[{}]", key.trim_matches('"')));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        let _ = value.serialize(&mut **self);
        self.path.pop();
        Ok(())
    }
    fn end(self) -> Done {
        self.close()
    }
}

#[cfg(test)]
mod tests {
    use super::non_finite_paths;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Inner {
        busy: f64,
        mhz: Option<f64>,
    }

    #[derive(Serialize)]
    enum Shape {
        Point { x: f32 },
        Pair(f64, f64),
    }

    #[derive(Serialize)]
    struct Outer {
        window_s: f64,
        per_cpu: Vec<Inner>,
        named: BTreeMap<String, f64>,
        shapes: Vec<Shape>,
        count: u64,
    }

    fn outer(bad: f64) -> Outer {
        Outer {
            window_s: 2.0,
            per_cpu: vec![
                Inner {
                    busy: 0.5,
                    mhz: None,
                },
                Inner {
                    busy: bad,
                    mhz: Some(-bad),
                },
            ],
            named: BTreeMap::from([("a".into(), 1.0), ("b".into(), bad)]),
            shapes: vec![Shape::Pair(1.0, bad), Shape::Point { x: bad as f32 }],
            count: 3,
        }
    }

    #[test]
    fn every_non_finite_number_is_named_by_its_path() {
        let want = [
            "per_cpu[1].busy",
            "per_cpu[1].mhz",
            "named[b]",
            "shapes[0].Pair[1]",
            "shapes[1].Point.x",
        ];
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(non_finite_paths(&outer(bad)), want, "{bad}");
        }
        assert!(non_finite_paths(&outer(1e30)).is_empty());
        assert_eq!(non_finite_paths(&f64::NAN), ["(the value)"]);
    }
}
