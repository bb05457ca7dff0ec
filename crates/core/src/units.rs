//! Newtypes for the quantities scalelab measures, and the parsers for the
//! way users write them (`3s`, `2m` as wrk writes durations; `256M` memory).

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// A latency or time span in microseconds (the unit of every histogram).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Micros(pub u64);

impl Micros {
    /// Whole microseconds of `d`, saturating.
    pub fn from_duration(d: Duration) -> Self {
        Micros(d.as_micros().min(u64::MAX as u128) as u64)
    }
    /// The span in milliseconds.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1000.0
    }
}

impl fmt::Display for Micros {
    /// Formats like wrk: `812.00us`, `3.21ms`, `1.20s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us = self.0 as f64;
        if us < 1_000.0 {
            write!(f, "{us:.2}us")
        } else if us < 1_000_000.0 {
            write!(f, "{:.2}ms", us / 1_000.0)
        } else {
            write!(f, "{:.2}s", us / 1_000_000.0)
        }
    }
}

/// What a load kind's throughput counts, per second: the unit its reports
/// print. Each load kind declares one (see `scalelab::load::LoadKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateUnit {
    /// HTTP requests (wrk's `Requests/sec`).
    Requests,
    /// Database transactions (pgbench's `tps`).
    Transactions,
    /// DNS queries (dnsperf's `Queries per second`).
    Queries,
    /// Forwarded frames (RFC 2544 throughput).
    Frames,
}

impl RateUnit {
    /// Every unit.
    pub const ALL: [RateUnit; 4] = [
        RateUnit::Requests,
        RateUnit::Transactions,
        RateUnit::Queries,
        RateUnit::Frames,
    ];

    /// `requests/s`, `transactions/s`, `queries/s` or `frames/s`.
    pub fn as_str(self) -> &'static str {
        match self {
            RateUnit::Requests => "requests/s",
            RateUnit::Transactions => "transactions/s",
            RateUnit::Queries => "queries/s",
            RateUnit::Frames => "frames/s",
        }
    }
}

impl RateUnit {
    /// The unit in a column name: `requests_per_s`, `transactions_per_s`,
    /// `queries_per_s` or `frames_per_s`.
    pub fn column(self) -> &'static str {
        match self {
            RateUnit::Requests => "requests_per_s",
            RateUnit::Transactions => "transactions_per_s",
            RateUnit::Queries => "queries_per_s",
            RateUnit::Frames => "frames_per_s",
        }
    }
}

impl fmt::Display for RateUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// CPU time (user + system) in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CpuSeconds(pub f64);

impl std::ops::Add for CpuSeconds {
    type Output = CpuSeconds;
    fn add(self, o: Self) -> Self {
        CpuSeconds(self.0 + o.0)
    }
}

impl std::ops::Sub for CpuSeconds {
    type Output = CpuSeconds;
    fn sub(self, o: Self) -> Self {
        CpuSeconds((self.0 - o.0).max(0.0))
    }
}

/// A byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Gigabits per second over `secs`.
    pub fn gbit_per_s(self, secs: f64) -> f64 {
        if secs <= 0.0 {
            0.0
        } else {
            self.0 as f64 * 8.0 / secs / 1e9
        }
    }
}

impl fmt::Display for Bytes {
    /// Binary units like wrk: `100.73MB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        const K: f64 = 1024.0;
        if b < K {
            write!(f, "{}B", self.0)
        } else if b < K * K {
            write!(f, "{:.2}KB", b / K)
        } else if b < K * K * K {
            write!(f, "{:.2}MB", b / K / K)
        } else {
            write!(f, "{:.2}GB", b / K / K / K)
        }
    }
}

/// An event rate per second (requests, transactions, queries, frames).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PerSecond(pub f64);

/// A wall-clock span in seconds (how long a measured run took), as a
/// plain number; [`CpuSeconds`] is CPU time, not wall-clock time.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

/// Implements `JsonSchema` for a `#[serde(transparent)]` `f64` newtype as
/// exactly `f64`'s schema, inlined: no definition of its own and no
/// description, so a field of the newtype (or an `Option` of it) reads in
/// `docs/export-schema.json` just as the plain `f64` field did. (Deriving it
/// would add a `$ref` definition and turn `Option<T>` into a `oneOf`.)
macro_rules! plain_number_schema {
    ($($t:ident),+) => {$(
        impl schemars::JsonSchema for $t {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <f64 as schemars::JsonSchema>::json_schema(generator)
            }
        }
    )+};
}

plain_number_schema!(PerSecond, Seconds, CpuSeconds);

/// Why a unit string did not parse; the message says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(String);

/// The longest duration scalelab accepts anywhere (30 days): every load run
/// is bounded, and `Instant + duration` can never overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// The largest size scalelab accepts anywhere (1 PiB).
pub const MAX_BYTES: Bytes = Bytes(1 << 50);

/// Parses a duration the way wrk does: a number with an optional unit
/// `ms`, `s`, `m` or `h`; a bare number means seconds (`10` = `10s`).
/// Anything longer than [`MAX_DURATION`] is refused.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        UnitError(format!(
            "`{text}` is not a duration; write a number and a unit, such as 500ms, 10s, 2m or 1h"
        ))
    })?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(UnitError(format!(
                "`{text}` has the unknown unit `{other}`; use ms, s, m or h"
            )))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > MAX_DURATION.as_secs_f64() {
        return Err(UnitError(format!(
            "`{text}` is too long; the longest duration is 720h (30 days)"
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats a duration as `parse_duration` reads it back.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 3_600_000 == 0 && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Parses a memory size: `512K`, `256M`, `2G` (binary multiples) or bytes.
pub fn parse_bytes(text: &str) -> Result<Bytes, UnitError> {
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or(upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (num, mult) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 1u64 << 10),
        Some('M') => (&body[..body.len() - 1], 1 << 20),
        Some('G') => (&body[..body.len() - 1], 1 << 30),
        Some('T') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    let value: f64 = num.trim().parse().map_err(|_| {
        UnitError(format!(
            "`{text}` is not a size; write a number with K, M or G, such as 256M"
        ))
    })?;
    if value < 0.0 {
        return Err(UnitError(format!("`{text}` must not be negative")));
    }
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes > MAX_BYTES.0 as f64 {
        return Err(UnitError(format!(
            "`{text}` is too large; the largest size is 1024T"
        )));
    }
    Ok(Bytes(bytes as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_wrk() {
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("3x")
            .unwrap_err()
            .to_string()
            .contains("ms, s, m or h"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn huge_durations_and_sizes_are_refused_not_panics() {
        for text in [
            "99999999999999999999s",
            "18446744073709551615s",
            "721h",
            "1e400",
        ] {
            let err = parse_duration(text).unwrap_err().to_string();
            assert!(err.contains(text), "{err}");
        }
        assert_eq!(parse_duration("720h").unwrap(), MAX_DURATION);
        let digits = "9".repeat(400);
        assert!(parse_duration(&digits)
            .unwrap_err()
            .to_string()
            .contains("too long"));
        assert!(parse_bytes("99999999999999999999T")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert!(parse_bytes(&digits).is_err());
        assert_eq!(parse_bytes("1024T").unwrap(), MAX_BYTES);
    }

    #[test]
    fn durations_round_trip() {
        for s in ["3s", "2m", "1h", "250ms"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("256M").unwrap(), Bytes(256 << 20));
        assert_eq!(parse_bytes("1GiB").unwrap(), Bytes(1 << 30));
        assert_eq!(parse_bytes("4096").unwrap(), Bytes(4096));
        assert!(parse_bytes("lots").is_err());
    }

    /// The schema of a field of `T`, as a struct of it would have it.
    fn field_schema<T: schemars::JsonSchema>() -> serde_json::Value {
        let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let schema = generator.subschema_for::<T>().to_value();
        assert!(generator.definitions().is_empty(), "{schema}");
        schema
    }

    #[test]
    fn the_f64_newtypes_read_as_plain_numbers() {
        for schema in [
            field_schema::<PerSecond>(),
            field_schema::<Seconds>(),
            field_schema::<CpuSeconds>(),
        ] {
            assert_eq!(schema, field_schema::<f64>());
        }
        assert_eq!(
            field_schema::<Option<PerSecond>>(),
            field_schema::<Option<f64>>()
        );
        let json =
            serde_json::to_string(&(PerSecond(1.5), Seconds(2.0), CpuSeconds(0.25))).unwrap();
        assert_eq!(json, "[1.5,2.0,0.25]");
        let back: (PerSecond, Seconds, CpuSeconds) = serde_json::from_str(&json).unwrap();
        assert_eq!(back, (PerSecond(1.5), Seconds(2.0), CpuSeconds(0.25)));
    }

    #[test]
    fn display_like_wrk() {
        assert_eq!(Micros(812).to_string(), "812.00us");
        assert_eq!(Micros(3_210).to_string(), "3.21ms");
        assert_eq!(Micros(1_200_000).to_string(), "1.20s");
        assert_eq!(Bytes(105_620_000).to_string(), "100.73MB");
    }
}
