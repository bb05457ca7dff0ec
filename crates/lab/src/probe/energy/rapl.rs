//! RAPL through powercap: `class/powercap/intel-rapl:N/` is package N
//! (`name` = `package-N`), `intel-rapl:N:M/` its subdomains (`core`,
//! `uncore`, `dram`). The meter sums every package and every `dram`
//! subdomain (core and uncore are inside the package's count). Each
//! `energy_uj` is a µJ counter that wraps to 0 after `max_energy_range_uj`.

use super::meter::{Counter, Meter, Reader};
use super::EnergySource;
use std::path::Path;

/// The package and DRAM counters under `root/class/powercap`; `None` when
/// there is none that reads.
pub(crate) fn open(root: &Path) -> Option<Meter> {
    let dir = root.join("class/powercap");
    let mut zones: Vec<(Vec<u32>, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            Some((zone_numbers(&name)?, e.path()))
        })
        .collect();
    zones.sort();
    let mut counters = Vec::new();
    for (numbers, path) in zones {
        let name = read_trimmed(&path.join("name")).unwrap_or_default();
        let label = match numbers.as_slice() {
            [_] => name,
            [package, _] if name == "dram" => format!("package-{package}/dram"),
            // core, uncore, psys...: inside the package's count.
            _ => continue,
        };
        let counter = Counter {
            label,
            path: path.join("energy_uj"),
            max_range_uj: read_trimmed(&path.join("max_energy_range_uj"))
                .and_then(|t| t.parse().ok()),
        };
        if counter.read().is_some() {
            counters.push(counter);
        }
    }
    (!counters.is_empty()).then(|| Meter::new(EnergySource::Rapl, Reader::Counters(counters)))
}

/// `intel-rapl:0` → `[0]`, `intel-rapl:0:2` → `[0, 2]`; other names
/// (`intel-rapl`, `intel-rapl-mmio:0`, which repeats package 0) → `None`.
fn zone_numbers(name: &str) -> Option<Vec<u32>> {
    let rest = name.strip_prefix("intel-rapl:")?;
    rest.split(':').map(|n| n.parse().ok()).collect()
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_string())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes a powercap zone (`intel-rapl:…`) with its name, counter and range.
    pub(crate) fn zone(root: &Path, zone: &str, name: &str, uj: u64, max: u64) {
        let d = root.join("class/powercap").join(zone);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
        std::fs::write(d.join("energy_uj"), format!("{uj}\n")).unwrap();
        std::fs::write(d.join("max_energy_range_uj"), format!("{max}\n")).unwrap();
    }

    #[test]
    fn zone_names() {
        assert_eq!(zone_numbers("intel-rapl:1"), Some(vec![1]));
        assert_eq!(zone_numbers("intel-rapl:0:2"), Some(vec![0, 2]));
        assert_eq!(zone_numbers("intel-rapl-mmio:0"), None);
        assert_eq!(zone_numbers("intel-rapl"), None);
    }

    #[test]
    fn packages_and_dram_but_not_core() {
        let dir = tempfile::tempdir().unwrap();
        zone(dir.path(), "intel-rapl:0", "package-0", 100, 1000);
        zone(dir.path(), "intel-rapl:0:0", "core", 50, 1000);
        zone(dir.path(), "intel-rapl:0:1", "dram", 10, 1000);
        zone(dir.path(), "intel-rapl:1", "package-1", 7, 1000);
        zone(dir.path(), "intel-rapl-mmio:0", "package-0", 7, 1000);
        let meter = open(dir.path()).unwrap();
        assert_eq!(
            meter.domains(),
            vec!["package-0", "package-0/dram", "package-1"]
        );
        assert!(open(&dir.path().join("nothing")).is_none());
    }
}
