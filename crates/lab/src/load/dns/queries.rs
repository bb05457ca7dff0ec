//! Query sets in dnsperf's format: one `name type` per line, `;` starts a
//! comment. Parsed with line-numbered errors, and generated from the lab's
//! names with a heavy-tailed (Zipf) popularity, deterministic per seed.

use crate::model::dns_names as names;
use crate::rng::SplitMix64;
use crate::wire::dns::Query;
use hickory_proto::rr::{Name, RecordType};
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

/// Why a query file could not be used; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum QueryFileError {
    /// The file could not be read.
    #[error("cannot read query file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line is not `NAME TYPE`.
    #[error("{path}:{line}: {message}; each line must be `NAME TYPE`, such as `h1.bench.test A`")]
    Line {
        /// The file.
        path: String,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// The file holds comments and blank lines only.
    #[error("{path} holds no queries; write one `NAME TYPE` per line (or generate a set with `scalelab dns queries`)")]
    Empty {
        /// The file.
        path: String,
    },
}

/// Reads and parses a dnsperf-format query file.
pub fn read_file(path: &Path) -> Result<Vec<Query>, QueryFileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| QueryFileError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&text, &shown)
}

/// Parses query-file text; `path` only names the source in errors.
pub fn parse(text: &str, path: &str) -> Result<Vec<Query>, QueryFileError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split(';').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| QueryFileError::Line {
            path: path.to_string(),
            line: i + 1,
            message,
        };
        out.push(parse_line(line).map_err(err)?);
    }
    if out.is_empty() {
        return Err(QueryFileError::Empty {
            path: path.to_string(),
        });
    }
    Ok(out)
}

fn parse_line(line: &str) -> Result<Query, String> {
    let mut fields = line.split_whitespace();
    let (Some(name), Some(rtype), None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(format!("expected two fields, found `{line}`"));
    };
    let mut name =
        Name::from_ascii(name).map_err(|e| format!("`{name}` is not a domain name ({e})"))?;
    name.set_fqdn(true);
    let rtype = RecordType::from_str(&rtype.to_ascii_uppercase())
        .map_err(|_| format!("`{rtype}` is not a record type"))?;
    Ok(Query { name, rtype })
}

/// How to draw a query set from the lab's names.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuerySetSpec {
    /// Hosts in the lab's zones (`h0` .. `h<names-1>`).
    pub names: u32,
    /// Zipf exponent of the popularity: 0 is uniform, 1 is a classic web log.
    #[serde(default = "default_zipf")]
    pub zipf: f64,
    /// Share of PTR queries for the hosts' addresses, 0 to 1.
    #[serde(default)]
    pub reverse_share: f64,
    /// The generator's seed: the same spec always gives the same set.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Queries in the set.
    #[serde(default = "default_count")]
    pub count: u32,
}

fn default_zipf() -> f64 {
    1.0
}
fn default_seed() -> u64 {
    1
}
fn default_count() -> u32 {
    100_000
}

impl QuerySetSpec {
    /// Checks every field's range; the error names the field and its range.
    pub fn validate(&self) -> Result<(), String> {
        if self.names == 0 || self.names > names::MAX_HOSTS {
            return Err(format!("names must be 1 to {}", names::MAX_HOSTS));
        }
        if !(self.zipf.is_finite() && self.zipf >= 0.0) {
            return Err("zipf must be a number of 0 or more".into());
        }
        if !(0.0..=1.0).contains(&self.reverse_share) {
            return Err("reverse_share must be between 0 and 1".into());
        }
        if self.count == 0 {
            return Err("count must be at least 1".into());
        }
        Ok(())
    }

    /// The set as dnsperf-format text, one query per line.
    pub fn render(&self) -> String {
        let cdf = zipf_cdf(self.names, self.zipf);
        let mut rng = SplitMix64(self.seed);
        let mut out = String::with_capacity(self.count as usize * 24);
        for _ in 0..self.count {
            let reverse = rng.unit() < self.reverse_share;
            let rank = sample(&cdf, rng.unit());
            // Forward and reverse popularity are ranked independently: the
            // most looked-up address need not be the most looked-up name.
            if reverse {
                let host = scatter(rank, self.names);
                let _ = writeln!(out, "{} PTR", names::reverse_name(names::host_addr(host)));
            } else {
                let _ = writeln!(out, "{} A", names::host_name(rank));
            }
        }
        out
    }
}

/// Cumulative Zipf probabilities for ranks 0..n: weight of rank k is
/// 1/(k+1)^s (Zipf 1949; the model of web-request popularity in Breslau et
/// al., "Web Caching and Zipf-like Distributions", INFOCOM 1999).
pub fn zipf_cdf(n: u32, s: f64) -> Vec<f64> {
    let mut acc = 0.0;
    let mut cdf: Vec<f64> = (0..n)
        .map(|k| {
            acc += 1.0 / f64::from(k + 1).powf(s);
            acc
        })
        .collect();
    for c in &mut cdf {
        *c /= acc;
    }
    cdf
}

/// Inverse-CDF sampling: the first rank whose cumulative probability reaches `u`.
fn sample(cdf: &[f64], u: f64) -> u32 {
    let i = cdf.partition_point(|&c| c < u);
    i.min(cdf.len() - 1) as u32
}

/// A fixed permutation of 0..n (multiplication by an odd constant modulo
/// the next power of two, cycle-walked into range).
fn scatter(rank: u32, n: u32) -> u32 {
    let m = n.next_power_of_two() as u64;
    let mut x = rank as u64;
    loop {
        x = (x * 0x9E37_79B1 + 0x7F4A_7C15) % m;
        if x < n as u64 {
            return x as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_line() {
        let e = parse("h1.bench.test A\n\nh2.bench.test\n", "q.txt").unwrap_err();
        assert!(
            e.to_string().starts_with("q.txt:3: expected two fields"),
            "{e}"
        );
        let e = parse("h1.bench.test BOGUS\n", "q.txt").unwrap_err();
        assert!(
            e.to_string()
                .contains("q.txt:1: `BOGUS` is not a record type"),
            "{e}"
        );
        let e = parse("; only a comment\n\n", "q.txt").unwrap_err();
        assert!(e.to_string().contains("q.txt holds no queries"), "{e}");
    }

    #[test]
    fn parses_dnsperf_lines() {
        let q = parse("h1.bench.test a ; c\n1.0.18.198.in-addr.arpa. PTR\n", "q").unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].name.to_ascii(), "h1.bench.test.");
        assert_eq!(q[0].rtype, RecordType::A);
        assert_eq!(q[1].rtype, RecordType::PTR);
    }

    #[test]
    fn sets_are_deterministic_heavy_tailed_and_mixed() {
        let spec = QuerySetSpec {
            names: 1000,
            zipf: 1.0,
            reverse_share: 0.25,
            seed: 7,
            count: 20_000,
        };
        let a = spec.render();
        assert_eq!(a, spec.render());
        assert_ne!(
            a,
            QuerySetSpec {
                seed: 8,
                ..spec.clone()
            }
            .render()
        );
        let q = parse(&a, "gen").unwrap();
        assert_eq!(q.len(), 20_000);
        let ptr = q.iter().filter(|q| q.rtype == RecordType::PTR).count() as f64;
        assert!((ptr / 20_000.0 - 0.25).abs() < 0.02, "{ptr}");
        // Zipf(1) over 1000 names: the top name gets 1/H(1000) ~ 13% of A queries.
        let top = q
            .iter()
            .filter(|q| q.name.to_ascii() == "h0.bench.test.")
            .count() as f64;
        let share = top / (20_000.0 - ptr);
        assert!((0.11..0.155).contains(&share), "{share}");
    }

    #[test]
    fn scatter_is_a_permutation() {
        let mut seen: Vec<u32> = (0..1000).map(|r| scatter(r, 1000)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
    }
}
