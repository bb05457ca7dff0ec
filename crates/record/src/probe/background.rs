//! What the rest of the machine used during a trial: the hypervisor's
//! steal time and the CPU time of processes that are neither the server
//! nor scalelab (issue 27). A trial measured while another tenant took a
//! large share of the CPUs is marked, so a noisy trial no longer looks
//! like a clean one.
//!
//! Other processes' CPU is not read process by process (that would cost a
//! walk of all of `/proc` per sample); it is what is left of the machine's
//! busy time (`/proc/stat`, all CPUs) once the hypervisor's steal, the
//! server's tree and this process (load generator and sampler) are taken
//! out. The server's CPU counts whole 10 ms ticks, so a few hundredths of
//! a CPU-second of rounding end up here.
//!
//! A server whose processes are not known (an `external` server without
//! `pid` whose listener was not found) cannot be taken out: its CPU would
//! be counted as other processes', and every trial marked noisy. Its
//! background is unknown instead (`Background::server_unknown`), and
//! never noisy.

use serde::{Deserialize, Serialize};

/// A trial whose background (steal plus other processes) used at least
/// this share of all CPUs' time is marked as noisy (`Background::noisy`).
/// A tenth of the machine is more than the spread of repeated trials on a
/// quiet 2-CPU machine, and less than the 1.7x swings seen on a busy one.
pub const BACKGROUND_SHARE: f64 = 0.10;

/// The rest of the machine over the measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Background {
    /// CPU-seconds the hypervisor gave this machine's vCPUs to other guests (steal).
    pub steal_cpu_s: f64,
    /// CPU-seconds used by processes other than the server's tree and scalelab itself: the
    /// machine's busy time minus steal, the server and scalelab (never below 0).
    pub other_cpu_s: f64,
    /// `(steal_cpu_s + other_cpu_s) / (window_s × online CPUs)`: the share of all CPUs'
    /// time the rest of the machine took (0..1).
    pub share: f64,
    /// `share >= BACKGROUND_SHARE`: the trial ran beside background load.
    /// Never set when `server_unknown`.
    pub noisy: bool,
    /// The server's processes were not known, so its CPU could not be taken
    /// out: `other_cpu_s` and `share` hold the server's CPU too, and say
    /// nothing of other tenants (absent, false, in runs stored before it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_unknown: bool,
}

/// What [`measure`] needs, all over the same window.
#[derive(Clone, Copy, Debug)]
pub struct BackgroundInputs {
    /// Busy share of all CPUs (`/proc/stat`, steal included).
    pub busy_share: f64,
    /// Steal share of all CPUs.
    pub steal_share: f64,
    /// Seconds in the window.
    pub window_s: f64,
    /// CPUs counted in `/proc/stat`.
    pub online_cpus: u32,
    /// CPU-seconds of the server's tree; `None`: its processes are not
    /// known, so the background is unknown.
    pub server_cpu_s: Option<f64>,
    /// CPU-seconds of this process (load generator, runner and sampler).
    pub own_cpu_s: f64,
}

/// The background over one window; `None` when the window is empty.
pub fn measure(i: BackgroundInputs) -> Option<Background> {
    let capacity = i.window_s * i.online_cpus as f64;
    if capacity <= 0.0 || !capacity.is_finite() {
        return None;
    }
    let steal_cpu_s = i.steal_share * capacity;
    let busy_cpu_s = i.busy_share * capacity;
    let server_cpu_s = i.server_cpu_s.unwrap_or(0.0);
    let other_cpu_s = (busy_cpu_s - steal_cpu_s - server_cpu_s - i.own_cpu_s).max(0.0);
    let share = (steal_cpu_s + other_cpu_s) / capacity;
    let server_unknown = i.server_cpu_s.is_none();
    Some(Background {
        steal_cpu_s,
        other_cpu_s,
        share,
        noisy: !server_unknown && share >= BACKGROUND_SHARE,
        server_unknown,
    })
}

impl Background {
    /// The share of all CPUs other tenants took, when it is known (not
    /// when the server could not be told apart).
    pub fn known_share(&self) -> Option<f64> {
        (!self.server_unknown).then_some(self.share)
    }

    /// The same window, where the server runs on the measured machine but
    /// its processes were not found: its CPU is in `other_cpu_s`, so the
    /// share says nothing of other tenants and is never `noisy`.
    pub fn server_not_told_apart(self) -> Background {
        Background {
            noisy: false,
            server_unknown: true,
            ..self
        }
    }

    /// One plain sentence of what was measured, e.g. "other processes used
    /// 0.92 CPU-s and steal 0.10 CPU-s: 26% of all CPUs' time".
    pub fn describe(&self) -> String {
        if self.server_unknown {
            return format!(
                "unknown: the server cannot be told apart from other processes (give an \
                 `external` server `pid` or `pid_command`); all processes but scalelab, the \
                 server's among them, used {:.2} CPU-s and the hypervisor's steal {:.2} CPU-s",
                self.other_cpu_s, self.steal_cpu_s
            );
        }
        format!(
            "other processes used {:.2} CPU-s and the hypervisor's steal {:.2} CPU-s: {:.0}% of all CPUs' time",
            self.other_cpu_s,
            self.steal_cpu_s,
            self.share * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> BackgroundInputs {
        BackgroundInputs {
            busy_share: 0.75,
            steal_share: 0.05,
            window_s: 10.0,
            online_cpus: 2,
            server_cpu_s: Some(6.0),
            own_cpu_s: 4.0,
        }
    }

    #[test]
    fn the_rest_is_busy_minus_steal_server_and_scalelab() {
        // 20 CPU-s of capacity: 15 busy, 1 steal, 6 server, 4 scalelab: 4 other.
        let b = measure(inputs()).unwrap();
        assert!((b.steal_cpu_s - 1.0).abs() < 1e-9);
        assert!((b.other_cpu_s - 4.0).abs() < 1e-9);
        assert!((b.share - 0.25).abs() < 1e-9);
        assert!(b.noisy);
        assert!(b.describe().contains("25% of all CPUs"), "{}", b.describe());
    }

    #[test]
    fn a_quiet_machine_is_not_noisy_and_rounding_never_goes_negative() {
        let b = measure(BackgroundInputs {
            busy_share: 0.45,
            steal_share: 0.0,
            server_cpu_s: Some(6.0),
            own_cpu_s: 3.05,
            ..inputs()
        })
        .unwrap();
        assert_eq!(b.other_cpu_s, 0.0);
        assert!(!b.noisy);
        assert_eq!(
            measure(BackgroundInputs {
                window_s: 0.0,
                ..inputs()
            }),
            None
        );
    }

    #[test]
    fn a_server_that_cannot_be_told_apart_is_unknown_never_noisy() {
        // The server's 6 CPU-s now look like other processes': 10 of 20.
        let b = measure(BackgroundInputs {
            server_cpu_s: None,
            ..inputs()
        })
        .unwrap();
        assert!(b.server_unknown);
        assert!(!b.noisy, "{b:?}");
        assert_eq!(b.known_share(), None);
        assert!((b.other_cpu_s - 10.0).abs() < 1e-9);
        let said = b.describe();
        assert!(
            said.starts_with("unknown: the server cannot be told apart"),
            "{said}"
        );
        assert!(said.contains("`pid` or `pid_command`"), "{said}");
        let known = measure(inputs()).unwrap();
        assert!(!known.server_unknown);
        assert_eq!(known.known_share(), Some(known.share));
    }
}
