//! Facts the seed charts need from the trial context (written by the
//! runner as JSON): the dataset's size, the server's memory limit, the
//! router's line speed and a DNS ramp's seconds. Read defensively, as
//! [`super::probe_view`] reads the probe: a missing field is absent.

use crate::load::result::RampSecond;
use crate::store::Trial;
use serde_json::Value;

/// One cell's context facts, from its successful trials.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextFacts {
    /// The loaded dataset (`context.dataset.bytes`), median over trials.
    pub dataset_bytes: Option<f64>,
    /// The server's cgroup memory limit (`context.placement.memory_bytes`).
    pub memory_limit_bytes: Option<f64>,
    /// The line speed to draw against a forwarding rate
    /// (`context.server_settings.settings.link_gbit`).
    pub link_gbit: Option<f64>,
    /// The first trial's ramp (`context.datagrams.ramp.seconds`): offered
    /// and answered queries per second.
    pub ramp: Vec<RampSecond>,
}

impl ContextFacts {
    pub fn of(ok: &[&Trial]) -> ContextFacts {
        let num = |path: &[&str]| {
            let mut v: Vec<f64> = ok
                .iter()
                .filter_map(|t| at(&t.context, path)?.as_f64())
                .filter(|x| x.is_finite() && *x > 0.0)
                .collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        ContextFacts {
            dataset_bytes: num(&["dataset", "bytes"]),
            memory_limit_bytes: num(&["placement", "memory_bytes"]),
            link_gbit: num(&["server_settings", "settings", "link_gbit"]),
            ramp: ok
                .iter()
                .find_map(|t| {
                    let seconds = at(&t.context, &["datagrams", "ramp", "seconds"])?;
                    serde_json::from_value::<Vec<RampSecond>>(seconds.clone()).ok()
                })
                .unwrap_or_default(),
        }
    }
}

fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn facts_are_read_from_the_context_and_absent_otherwise() {
        let mut data = crate::report::test_support::run_data(&["a"]);
        let mut t = data.trials.remove(0);
        t.context = json!({
            "dataset": {"description": "pgbench scale 16", "bytes": 260_000_000u64},
            "placement": {"memory_bytes": 268_435_456u64},
            "datagrams": {"ramp": {"seconds": [
                {"second": 0, "offered": 100, "answered": 99, "lost": 1, "p50_us": 80, "p99_us": 300}
            ]}}
        });
        let f = ContextFacts::of(&[&t]);
        assert_eq!(f.dataset_bytes, Some(260e6));
        assert_eq!(f.memory_limit_bytes, Some(268_435_456.0));
        assert_eq!(f.link_gbit, None);
        assert_eq!(f.ramp[0].answered, 99);
        t.context = json!({"dataset": {"bytes": "big"}});
        assert_eq!(ContextFacts::of(&[&t]), ContextFacts::default());
    }
}
