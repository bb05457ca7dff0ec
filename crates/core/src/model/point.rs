//! Sweep points: each coordinate knows what its axis varies
//! ([`AxisTarget`]) and holds the value as the experiment file wrote it.
//!
//! The store keeps a point's coordinates as JSON,
//! `[{"axis": "connections", "value": 100}]`; [`Coord`] reads and writes
//! exactly that shape and classifies the axis name when it is read.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a sweep axis varies.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AxisTarget {
    /// Concurrent connections of the load generator.
    Connections,
    /// Load generator threads.
    Threads,
    /// The open-loop request rate.
    Rate,
    /// Requests per connection.
    Connreqs,
    /// Number of CPUs the server may use.
    ServerCpus,
    /// The server's cgroup memory limit.
    ServerMemory,
    /// A kind-specific server setting (`server.<name>`).
    Server(String),
    /// A kind-specific load setting (`load.<name>`).
    Load(String),
    /// A load setting that declares the workload's dataset (`load.scale`,
    /// see [`super::dataset::FIELDS`]): a point on another value runs
    /// against other data, so the runner starts the server with it.
    Dataset(String),
}

impl AxisTarget {
    /// Classifies an axis name as written in `[sweep]`.
    pub fn from_name(name: &str) -> Option<AxisTarget> {
        Some(match name {
            "connections" => AxisTarget::Connections,
            "threads" => AxisTarget::Threads,
            "rate" => AxisTarget::Rate,
            "connreqs" => AxisTarget::Connreqs,
            "server_cpus" => AxisTarget::ServerCpus,
            "server_memory" => AxisTarget::ServerMemory,
            _ => {
                if let Some(s) = name.strip_prefix("server.").filter(|s| !s.is_empty()) {
                    AxisTarget::Server(s.to_string())
                } else if let Some(s) = name.strip_prefix("load.").filter(|s| !s.is_empty()) {
                    if super::dataset::FIELDS.contains(&s) {
                        AxisTarget::Dataset(s.to_string())
                    } else {
                        AxisTarget::Load(s.to_string())
                    }
                } else {
                    return None;
                }
            }
        })
    }

    /// The axis name as written in `[sweep]` (the inverse of [`Self::from_name`]).
    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for AxisTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisTarget::Connections => f.write_str("connections"),
            AxisTarget::Threads => f.write_str("threads"),
            AxisTarget::Rate => f.write_str("rate"),
            AxisTarget::Connreqs => f.write_str("connreqs"),
            AxisTarget::ServerCpus => f.write_str("server_cpus"),
            AxisTarget::ServerMemory => f.write_str("server_memory"),
            AxisTarget::Server(k) => write!(f, "server.{k}"),
            AxisTarget::Load(k) | AxisTarget::Dataset(k) => write!(f, "load.{k}"),
        }
    }
}

/// One sweep coordinate: what the axis varies and its value here, e.g.
/// `connections = 100`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "StoredCoord", try_from = "StoredCoord")]
pub struct Coord {
    /// What the axis varies (its name is `target.name()`).
    pub target: AxisTarget,
    /// The value, as the experiment file wrote it.
    pub value: toml::Value,
}

/// A coordinate as the store keeps it.
#[derive(Serialize, Deserialize)]
struct StoredCoord {
    axis: String,
    value: toml::Value,
}

impl From<Coord> for StoredCoord {
    fn from(c: Coord) -> StoredCoord {
        StoredCoord {
            axis: c.target.name(),
            value: c.value,
        }
    }
}

impl TryFrom<StoredCoord> for Coord {
    type Error = String;
    fn try_from(c: StoredCoord) -> Result<Coord, String> {
        let target = AxisTarget::from_name(&c.axis)
            .ok_or_else(|| format!("unknown sweep axis `{}` in a stored point", c.axis))?;
        Ok(Coord {
            target,
            value: c.value,
        })
    }
}

impl Coord {
    /// The axis name as written in `[sweep]`.
    pub fn axis(&self) -> String {
        self.target.name()
    }

    /// The value as a number: a number itself, or a list's length.
    pub fn number(&self) -> Option<f64> {
        match &self.value {
            toml::Value::Integer(i) => Some(*i as f64),
            toml::Value::Float(x) => Some(*x),
            toml::Value::Array(a) => Some(a.len() as f64),
            _ => None,
        }
    }

    /// The value as JSON (as the store and the JSON report hold it).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(&self.value).unwrap_or(serde_json::Value::Null)
    }

    /// The value for people: a string as is, anything else as JSON.
    pub fn display(&self) -> String {
        match &self.value {
            toml::Value::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_else(|_| other.to_string()),
        }
    }
}

/// A sweep point: its index in the expanded sweep and its coordinates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Its position in the expanded sweep, from 0.
    pub index: u32,
    /// One coordinate per axis, in the order the axes were declared.
    pub coords: Vec<Coord>,
}

impl Point {
    /// A point from `(axis name, value)` pairs; panics on an unknown axis
    /// name (for tests and fixed tables, not for input).
    pub fn new(index: u32, coords: &[(&str, toml::Value)]) -> Point {
        let coords = coords
            .iter()
            .map(|(a, v)| Coord {
                target: AxisTarget::from_name(a)
                    .unwrap_or_else(|| panic!("`{a}` is not a sweep axis")),
                value: v.clone(),
            })
            .collect();
        Point { index, coords }
    }

    /// The coordinate on the axis called `axis`, if the point has one.
    pub fn coord(&self, axis: &str) -> Option<&Coord> {
        self.coords.iter().find(|c| c.target.name() == axis)
    }

    /// The numeric value of `axis` at this point, if it has one.
    pub fn number(&self, axis: &str) -> Option<f64> {
        self.coord(axis).and_then(Coord::number)
    }

    /// `connections=100 server.worker_processes=2`
    pub fn label(&self) -> String {
        if self.coords.is_empty() {
            return "(single point)".into();
        }
        self.coords
            .iter()
            .map(|c| format!("{}={}", c.target, c.display()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A JSON value for people: a string as is, anything else as JSON.
pub fn display_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_json_shape_is_kept() {
        let p = Point::new(
            3,
            &[
                ("connections", 100.into()),
                ("server.worker_processes", 2.into()),
                ("rate", 1500.5.into()),
                ("load.script", "select-only".into()),
            ],
        );
        let json = serde_json::to_string(&p.coords).unwrap();
        assert_eq!(
            json,
            r#"[{"axis":"connections","value":100},{"axis":"server.worker_processes","value":2},{"axis":"rate","value":1500.5},{"axis":"load.script","value":"select-only"}]"#
        );
        let back: Vec<Coord> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p.coords);
        assert_eq!(
            back[1].target,
            AxisTarget::Server("worker_processes".into())
        );
    }

    #[test]
    fn an_unknown_stored_axis_is_an_error_not_a_guess() {
        let err = serde_json::from_str::<Coord>(r#"{"axis":"workers","value":2}"#).unwrap_err();
        assert!(
            err.to_string().contains("unknown sweep axis `workers`"),
            "{err}"
        );
    }

    #[test]
    fn names_round_trip_through_the_target() {
        for name in [
            "connections",
            "server_cpus",
            "server.scale",
            "load.path",
            "load.scale",
        ] {
            assert_eq!(AxisTarget::from_name(name).unwrap().name(), name);
        }
        assert_eq!(
            AxisTarget::from_name("load.tables"),
            Some(AxisTarget::Dataset("tables".into()))
        );
        assert_eq!(
            AxisTarget::from_name("load.script"),
            Some(AxisTarget::Load("script".into()))
        );
        assert_eq!(AxisTarget::from_name("server."), None);
        assert_eq!(AxisTarget::from_name("workers"), None);
    }

    #[test]
    fn labels_print_values_as_before() {
        let p = Point::new(
            0,
            &[
                ("connections", 4.into()),
                ("rate", 1000.0.into()),
                ("load.script", "a".into()),
            ],
        );
        assert_eq!(p.label(), "connections=4 rate=1000.0 load.script=a");
        assert_eq!(p.number("connections"), Some(4.0));
        assert_eq!(p.number("load.script"), None);
    }
}
