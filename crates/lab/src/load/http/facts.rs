//! What an `https://` trial records beside the shared measurement: what
//! the handshakes settled and how many there were, full and resumed.

use crate::load::facts::{KindChart, KindChartCell, KindCurve, KindPoint, KindSection};
use crate::load::facts::{StoredFacts, TrialFacts};

/// An HTTPS trial's TLS.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TlsFacts {
    /// The protocol version the first handshake settled (`TLSv1_3`).
    pub version: String,
    /// Its cipher suite (`TLS13_AES_256_GCM_SHA384`).
    pub cipher: String,
    /// Its key exchange group (`X25519`).
    #[serde(default)]
    pub group: Option<String>,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<String>,
    /// Whether the server's certificate was checked.
    pub verified: bool,
    /// Whether sessions were offered for resumption.
    pub resume: bool,
    /// Full handshakes finished in the window.
    pub handshakes_full: u64,
    /// Resumed sessions in the window.
    pub handshakes_resumed: u64,
    /// Handshakes that failed.
    pub handshakes_failed: u64,
    /// The client's TLS library ([`crate::tls::client::LIBRARY`]).
    pub client_library: String,
    /// The trial's connections (the charts' x).
    #[serde(default)]
    pub connections: u32,
    /// Its window in seconds, for the rates.
    #[serde(default)]
    pub window_s: f64,
    /// The load generator's CPU seconds in it, for the CPU per handshake.
    #[serde(default)]
    pub client_cpu_s: f64,
}

impl TlsFacts {
    /// Every finished handshake.
    pub fn handshakes(&self) -> u64 {
        self.handshakes_full + self.handshakes_resumed
    }

    /// Finished handshakes per second of the window.
    pub fn per_second(&self, n: u64) -> f64 {
        if self.window_s > 0.0 {
            n as f64 / self.window_s
        } else {
            0.0
        }
    }

    /// The load generator's CPU per finished handshake, in microseconds.
    pub fn client_cpu_us(&self) -> Option<f64> {
        (self.handshakes() > 0).then(|| self.client_cpu_s * 1e6 / self.handshakes() as f64)
    }
}

const SECTION: KindSection = KindSection {
    id: "tls",
    title: "TLS handshakes",
};

impl StoredFacts for TlsFacts {
    const KEY: &'static str = "tls";
}

impl TrialFacts for TlsFacts {
    fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.verified {
            out.push(
                "the server's TLS certificate was not checked (-k/--insecure, tls_verify = false)"
                    .into(),
            );
        }
        out
    }

    /// Handshakes per second (full and resumed) and the client's CPU per
    /// handshake, against connections, from each point's first trial.
    fn charts(&self, system: &str, cells: &[KindChartCell]) -> Vec<KindChart> {
        let facts: Vec<(&KindChartCell, &TlsFacts)> = cells
            .iter()
            .filter_map(|c| c.extras.get::<TlsFacts>().map(|f| (c, f)))
            .filter(|(_, f)| f.connections > 0 && f.window_s > 0.0)
            .collect();
        if facts.is_empty() {
            return Vec::new();
        }
        let curve = |label: &str, y: &dyn Fn(&TlsFacts) -> Option<f64>| KindCurve {
            label: label.into(),
            points: facts
                .iter()
                .filter_map(|(c, f)| {
                    Some(KindPoint {
                        x: f64::from(f.connections),
                        y: y(f)?,
                        tip: tip(system, c, f),
                    })
                })
                .collect(),
        };
        vec![
            KindChart {
                name: "handshakes",
                section: SECTION,
                title: "TLS handshakes per second against connections".into(),
                x_label: "connections".into(),
                y_label: "handshakes/s".into(),
                curves: vec![
                    curve("full", &|f| Some(f.per_second(f.handshakes_full))),
                    curve("resumed", &|f| Some(f.per_second(f.handshakes_resumed))),
                ],
                guides: Vec::new(),
                caption: "Finished TLS handshakes per second of each point's first trial, full \
                          and resumed apart. With one request per connection (`connreqs = 1`) \
                          every request is a handshake, and the per-point table's server CPU \
                          per operation is the server's CPU per handshake."
                    .into(),
            },
            KindChart {
                name: "client-cpu-per-handshake",
                section: SECTION,
                title: "the load generator's CPU per handshake".into(),
                x_label: "connections".into(),
                y_label: "client CPU per handshake (µs)".into(),
                curves: vec![curve("client CPU", &TlsFacts::client_cpu_us)],
                guides: Vec::new(),
                caption: "The load generator's CPU (user and system) over the window, per \
                          finished handshake: the client's side of the cost, which a server \
                          comparison should keep well below the server's."
                    .into(),
            },
        ]
    }
}

/// `https c=64: 4,512 handshakes/s (4,490 resumed), TLSv1_3
/// TLS13_AES_256_GCM_SHA384 X25519, 152 µs client CPU each`.
fn tip(system: &str, c: &KindChartCell, f: &TlsFacts) -> String {
    let cpu = f
        .client_cpu_us()
        .map_or(String::new(), |us| format!(", {us:.0} µs client CPU each"));
    format!(
        "{system} {}: {:.0} handshakes/s ({:.0} resumed), {} {} {}{cpu}",
        c.point,
        f.per_second(f.handshakes()),
        f.per_second(f.handshakes_resumed),
        f.version,
        f.cipher,
        f.group.as_deref().unwrap_or("-")
    )
}
