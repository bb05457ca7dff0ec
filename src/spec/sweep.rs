//! Sweep axes, their expansion into points, and resolving a (system, point)
//! pair into the exact server and load settings of one trial.

use super::{Component, Experiment, LoadCommon};
use crate::store::{Coord, Point};
use crate::units::Bytes;

/// What a sweep axis varies.
#[derive(Clone, Debug, PartialEq)]
pub enum AxisTarget {
    Connections,
    Threads,
    Rate,
    Connreqs,
    /// Number of CPUs the server may use.
    ServerCpus,
    /// The server's cgroup memory limit.
    ServerMemory,
    /// A kind-specific server setting (`server.<name>`).
    Server(String),
    /// A kind-specific load setting (`load.<name>`).
    Load(String),
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
                    AxisTarget::Load(s.to_string())
                } else {
                    return None;
                }
            }
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub target: AxisTarget,
    pub values: Vec<toml::Value>,
}

/// The cartesian product of the axes, first axis outermost.
pub fn expand(axes: &[Axis]) -> Vec<Point> {
    let mut combos: Vec<Vec<Coord>> = vec![Vec::new()];
    for axis in axes {
        let mut next = Vec::with_capacity(combos.len() * axis.values.len());
        for combo in &combos {
            for v in &axis.values {
                let mut c = combo.clone();
                c.push(Coord {
                    axis: axis.name.clone(),
                    value: to_json(v),
                });
                next.push(c);
            }
        }
        combos = next;
    }
    combos
        .into_iter()
        .enumerate()
        .map(|(i, coords)| Point {
            index: i as u32,
            coords,
        })
        .collect()
}

pub fn to_json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

fn from_json(v: &serde_json::Value) -> Option<toml::Value> {
    toml::Value::try_from(v).ok()
}

/// Everything one trial needs: the settings after merging `[server]`/`[load]`,
/// the system's overrides and the point's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub server: Component,
    pub load: Component,
    pub common: LoadCommon,
    pub server_cpus: Option<u32>,
    pub server_memory: Option<Bytes>,
}

/// Keys of `[load]` that belong to every driver rather than one kind.
pub const LOAD_COMMON_KEYS: &[&str] = &[
    "kind",
    "connections",
    "threads",
    "rate",
    "connreqs",
    "timeout",
];
/// Keys of `[server]` that are resources, not server settings.
pub const SERVER_RESOURCE_KEYS: &[&str] = &["kind", "server_cpus", "server_memory"];

/// Resolves `system` at `point`. Errors are plain messages with the field;
/// `validate` attaches file and line.
pub fn resolve(
    exp: &Experiment,
    system: usize,
    point: &Point,
) -> Result<Resolved, (String, String)> {
    let sys = &exp.systems[system];
    let mut server = exp.server.settings.clone();
    merge(&mut server, &sys.server);
    let mut load = exp.load.settings.clone();
    merge(&mut load, &sys.load);
    let mut common = exp.load_common.clone();
    for c in &point.coords {
        let target = AxisTarget::from_name(&c.axis)
            .ok_or_else(|| (c.axis.clone(), "unknown axis".to_string()))?;
        let value =
            from_json(&c.value).ok_or_else(|| (c.axis.clone(), "unsupported value".to_string()))?;
        match target {
            AxisTarget::Server(k) => {
                server.insert(k, value);
            }
            AxisTarget::Load(k) => {
                load.insert(k, value);
            }
            AxisTarget::ServerCpus => {
                server.insert("server_cpus".into(), value);
            }
            AxisTarget::ServerMemory => {
                server.insert("server_memory".into(), value);
            }
            AxisTarget::Connections
            | AxisTarget::Threads
            | AxisTarget::Rate
            | AxisTarget::Connreqs => {
                load.insert(c.axis.clone(), value);
            }
        }
    }
    // Common load keys may come from [load], a system's load, or an axis.
    apply_common(&mut common, &mut load)?;
    let server_cpus = take_cpus(&mut server)?;
    let server_memory = take_memory(&mut server)?;
    Ok(Resolved {
        server: Component {
            kind: exp.server.kind.clone(),
            settings: server,
        },
        load: Component {
            kind: exp.load.kind.clone(),
            settings: load,
        },
        common,
        server_cpus,
        server_memory,
    })
}

fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        base.insert(k.clone(), v.clone());
    }
}

type FieldError = (String, String);

fn positive_int(key: &str, v: &toml::Value) -> Result<u32, FieldError> {
    bounded_int(key, v, u32::MAX)
}

/// A whole number from 1 to `max`.
fn bounded_int(key: &str, v: &toml::Value, max: u32) -> Result<u32, FieldError> {
    match v.as_integer() {
        Some(i) if i >= 1 && i <= i64::from(max) => Ok(i as u32),
        _ => Err((
            key.into(),
            format!("expected a whole number from 1 to {max}, got {v}"),
        )),
    }
}

/// Moves the common keys out of a load table into `common`.
pub fn apply_common(common: &mut LoadCommon, load: &mut toml::Table) -> Result<(), FieldError> {
    if let Some(v) = load.remove("connections") {
        common.connections = bounded_int("connections", &v, crate::load::MAX_CONNECTIONS)?;
    }
    if let Some(v) = load.remove("threads") {
        common.threads = Some(bounded_int("threads", &v, crate::load::MAX_THREADS)?);
    }
    if let Some(v) = load.remove("connreqs") {
        common.connreqs = Some(positive_int("connreqs", &v)?);
    }
    if let Some(v) = load.remove("rate") {
        let r = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
        match r {
            Some(r) if (crate::load::MIN_RATE..=crate::load::MAX_RATE).contains(&r) => {
                common.rate = Some(r)
            }
            _ => {
                return Err((
                    "rate".into(),
                    format!(
                        "expected a number per second from {} to {:e}, got {v}",
                        crate::load::MIN_RATE,
                        crate::load::MAX_RATE
                    ),
                ))
            }
        }
    }
    if let Some(v) = load.remove("timeout") {
        let s = v.as_str().ok_or((
            "timeout".to_string(),
            "expected a duration such as \"2s\"".to_string(),
        ))?;
        common.timeout =
            crate::units::parse_duration(s).map_err(|e| ("timeout".to_string(), e.to_string()))?;
    }
    load.remove("kind");
    Ok(())
}

fn take_cpus(server: &mut toml::Table) -> Result<Option<u32>, FieldError> {
    server.remove("kind");
    match server.remove("server_cpus") {
        None => Ok(None),
        Some(v) => {
            let n = positive_int("server_cpus", &v)?;
            let online = crate::placement::online_cpus() as u32;
            if n > online {
                return Err((
                    "server_cpus".into(),
                    format!("{n} CPUs requested but this machine has {online}"),
                ));
            }
            Ok(Some(n))
        }
    }
}

fn take_memory(server: &mut toml::Table) -> Result<Option<Bytes>, FieldError> {
    match server.remove("server_memory") {
        None => Ok(None),
        Some(v) => {
            let s = v
                .as_str()
                .map(str::to_string)
                .or_else(|| v.as_integer().map(|i| i.to_string()))
                .ok_or((
                    "server_memory".to_string(),
                    "expected a size such as \"256M\"".to_string(),
                ))?;
            let b = crate::units::parse_bytes(&s)
                .map_err(|e| ("server_memory".to_string(), e.to_string()))?;
            if b.0 < (16 << 20) {
                return Err((
                    "server_memory".into(),
                    format!("{s} is too small for a server; use at least 16M"),
                ));
            }
            Ok(Some(b))
        }
    }
}

/// The CPUs given to a server limited to `n`: the highest-numbered ones, so
/// CPU 0 (where interrupts and the OS mostly land) stays with the client.
pub fn server_cpu_list(n: u32) -> Vec<usize> {
    let online = crate::placement::online_cpus();
    let n = (n as usize).min(online);
    (online - n..online).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(name: &str, vals: Vec<toml::Value>) -> Axis {
        Axis {
            name: name.into(),
            target: AxisTarget::from_name(name).unwrap(),
            values: vals,
        }
    }

    #[test]
    fn expansion_is_a_product_with_the_first_axis_outermost() {
        let pts = expand(&[
            axis("load.script", vec!["a".into(), "b".into()]),
            axis("connections", vec![1.into(), 2.into(), 4.into()]),
        ]);
        assert_eq!(pts.len(), 6);
        assert_eq!(pts[1].label(), "load.script=a connections=2");
        assert_eq!(pts[3].label(), "load.script=b connections=1");
        assert_eq!(pts[5].index, 5);
    }

    #[test]
    fn no_axes_is_one_point() {
        assert_eq!(expand(&[]).len(), 1);
    }

    #[test]
    fn axis_names_are_classified() {
        assert_eq!(
            AxisTarget::from_name("server.scale"),
            Some(AxisTarget::Server("scale".into()))
        );
        assert_eq!(AxisTarget::from_name("server."), None);
        assert_eq!(AxisTarget::from_name("workers"), None);
    }
}
