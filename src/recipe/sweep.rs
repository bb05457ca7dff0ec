//! Sweep axes, their expansion into points, and resolving a (system, point)
//! pair into the exact server and load settings of one trial.

use super::{Component, Experiment, LoadCommon};
use crate::load::limits::{Range, CONNECTIONS, THREADS};
pub use crate::model::AxisTarget;
use crate::model::{Coord, Point};
use crate::units::Bytes;

/// One `[sweep]` axis: what it varies and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// What the axis varies (its name is `target.name()`).
    pub target: AxisTarget,
    /// Its values, in the order written.
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
                    target: axis.target.clone(),
                    value: v.clone(),
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

/// Everything one trial needs: the settings after merging `[server]`/`[load]`,
/// the system's overrides and the point's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The server kind and its settings at this point.
    pub server: Component,
    /// The load kind and its settings at this point.
    pub load: Component,
    /// The load settings every driver shares.
    pub common: LoadCommon,
    /// CPUs the server may use; `None`: all.
    pub server_cpus: Option<u32>,
    /// The server's cgroup memory limit; `None`: none.
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
    let kind = exp.server_kind_of(system).to_string();
    // A system with a server kind of its own keeps only `[server]`'s
    // resources: the other kind's settings are not its.
    let mut server = exp.server.settings.clone();
    if kind != exp.server.kind {
        server.retain(|k, _| SERVER_RESOURCE_KEYS.contains(&k));
    }
    merge(&mut server, &sys.server);
    let mut load = exp.load.settings.clone();
    merge(&mut load, &sys.load);
    // Kind-specific axes join the settings tables; the typed ones are
    // applied after the tables' own values, which they override.
    for c in &point.coords {
        match &c.target {
            AxisTarget::Server(k) => {
                server.insert(k.clone(), c.value.clone());
            }
            AxisTarget::Load(k) | AxisTarget::Dataset(k) => {
                load.insert(k.clone(), c.value.clone());
            }
            AxisTarget::Connections
            | AxisTarget::Threads
            | AxisTarget::Rate
            | AxisTarget::Connreqs
            | AxisTarget::ServerCpus
            | AxisTarget::ServerMemory => {}
        }
    }
    let mut common = exp.load_common.clone();
    // Common load keys may come from [load] or a system's load.
    apply_common(&mut common, &mut load)?;
    server.remove("kind");
    let mut server_cpus = server.remove("server_cpus").map(|v| cpus(&v)).transpose()?;
    let mut server_memory = server
        .remove("server_memory")
        .map(|v| memory(&v))
        .transpose()?;
    for c in &point.coords {
        let v = &c.value;
        match &c.target {
            AxisTarget::Connections => common.connections = ranged(CONNECTIONS, v)?,
            AxisTarget::Threads => common.threads = Some(ranged(THREADS, v)?),
            AxisTarget::Rate => common.rate = Some(rate(v)?),
            AxisTarget::Connreqs => common.connreqs = Some(positive_int("connreqs", v)?),
            AxisTarget::ServerCpus => server_cpus = Some(cpus(v)?),
            AxisTarget::ServerMemory => server_memory = Some(memory(v)?),
            AxisTarget::Server(_) | AxisTarget::Load(_) | AxisTarget::Dataset(_) => {}
        }
    }
    Ok(Resolved {
        server: Component {
            kind,
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

/// A whole number in `range` (shared with the `scalelab load` flags).
fn ranged(range: Range, v: &toml::Value) -> Result<u32, FieldError> {
    let err = |m: String| (range.name.to_string(), m);
    match v.as_integer().map(u64::try_from) {
        Some(Ok(i)) => range.check(i).map_err(err),
        _ => Err(err(format!(
            "expected a whole number from {} to {}, got {v}",
            range.min, range.max
        ))),
    }
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

/// A request rate per second within the drivers' bounds.
fn rate(v: &toml::Value) -> Result<f64, FieldError> {
    let r = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    match r {
        Some(r) if (crate::load::MIN_RATE..=crate::load::MAX_RATE).contains(&r) => Ok(r),
        _ => Err((
            "rate".into(),
            format!(
                "expected a number per second from {} to {:e}, got {v}",
                crate::load::MIN_RATE,
                crate::load::MAX_RATE
            ),
        )),
    }
}

/// Moves the common keys out of a load table into `common`.
pub fn apply_common(common: &mut LoadCommon, load: &mut toml::Table) -> Result<(), FieldError> {
    if let Some(v) = load.remove("connections") {
        common.connections = ranged(CONNECTIONS, &v)?;
    }
    if let Some(v) = load.remove("threads") {
        common.threads = Some(ranged(THREADS, &v)?);
    }
    if let Some(v) = load.remove("connreqs") {
        common.connreqs = Some(positive_int("connreqs", &v)?);
    }
    if let Some(v) = load.remove("rate") {
        common.rate = Some(rate(&v)?);
    }
    if let Some(v) = load.remove("timeout") {
        let s = v.as_str().ok_or((
            "timeout".to_string(),
            "expected a duration such as \"2s\"".to_string(),
        ))?;
        common.timeout =
            crate::units::parse_duration(s).map_err(|e| ("timeout".to_string(), e.to_string()))?;
        crate::load::limits::check_timeout(common.timeout)
            .map_err(|e| ("timeout".to_string(), e))?;
    }
    load.remove("kind");
    Ok(())
}

/// A server CPU count this machine has.
fn cpus(v: &toml::Value) -> Result<u32, FieldError> {
    let n = positive_int("server_cpus", v)?;
    let online = crate::placement::online_cpus() as u32;
    if n > online {
        return Err((
            "server_cpus".into(),
            format!("{n} CPUs requested but this machine has {online}"),
        ));
    }
    Ok(n)
}

/// A server memory limit such as `"256M"`, at least 16 MiB.
fn memory(v: &toml::Value) -> Result<Bytes, FieldError> {
    let s = v
        .as_str()
        .map(str::to_string)
        .or_else(|| v.as_integer().map(|i| i.to_string()))
        .ok_or((
            "server_memory".to_string(),
            "expected a size such as \"256M\"".to_string(),
        ))?;
    let b =
        crate::units::parse_bytes(&s).map_err(|e| ("server_memory".to_string(), e.to_string()))?;
    if b.0 < (16 << 20) {
        return Err((
            "server_memory".into(),
            format!("{s} is too small for a server; use at least 16M"),
        ));
    }
    Ok(b)
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
}
