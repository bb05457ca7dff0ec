//! hwmon sensors: the first `class/hwmon/hwmonN/` (in N order) that has an
//! `energyK_input` (a µJ counter) or else a `powerK_input` (µW now). All of
//! that device's energy inputs are summed (or, without any, all its power
//! inputs); each is named `hwmon:<device name>/<label or file>`.

use super::meter::{Counter, Meter, Reader};
use super::EnergySource;
use std::path::{Path, PathBuf};

/// The first hwmon device with an energy or power input under `root`.
pub(crate) fn open(root: &Path) -> Option<Meter> {
    let mut devices: Vec<(u32, PathBuf)> = std::fs::read_dir(root.join("class/hwmon"))
        .ok()?
        .flatten()
        .filter_map(|e| {
            let n = e
                .file_name()
                .to_str()?
                .strip_prefix("hwmon")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    devices.sort();
    devices.iter().find_map(|(_, dir)| device(dir))
}

fn device(dir: &Path) -> Option<Meter> {
    let name = read_trimmed(&dir.join("name")).unwrap_or_else(|| "hwmon".into());
    let label = |input: &str| {
        let stem = input.trim_end_matches("_input");
        let own = read_trimmed(&dir.join(format!("{stem}_label")));
        format!("hwmon:{name}/{}", own.unwrap_or_else(|| stem.to_string()))
    };
    let energy: Vec<Counter> = inputs(dir, "energy")
        .into_iter()
        .map(|f| Counter {
            label: label(&f),
            path: dir.join(&f),
            max_range_uj: None,
        })
        .filter(|c| c.read().is_some())
        .collect();
    if !energy.is_empty() {
        return Some(Meter::new(EnergySource::Hwmon, Reader::Counters(energy)));
    }
    let power: Vec<(String, PathBuf)> = inputs(dir, "power")
        .into_iter()
        .map(|f| (label(&f), dir.join(&f)))
        .filter(|(_, p)| read_trimmed(p).is_some_and(|t| t.parse::<f64>().is_ok()))
        .collect();
    (!power.is_empty()).then(|| Meter::new(EnergySource::Hwmon, Reader::MicroWatts(power)))
}

/// `<kind>K_input` file names in the device, in K order.
fn inputs(dir: &Path, kind: &str) -> Vec<String> {
    let mut found: Vec<(u32, String)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let k = name
                .strip_prefix(kind)?
                .strip_suffix("_input")?
                .parse()
                .ok()?;
            Some((k, name))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, n)| n).collect()
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, file: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }

    #[test]
    fn the_first_device_with_an_input_and_its_energy_before_power() {
        let root = tempfile::tempdir().unwrap();
        let hw = root.path().join("class/hwmon");
        write(&hw.join("hwmon0"), "name", "coretemp\n");
        write(&hw.join("hwmon0"), "temp1_input", "45000\n");
        write(&hw.join("hwmon2"), "name", "other\n");
        write(&hw.join("hwmon2"), "power1_input", "1000000\n");
        write(&hw.join("hwmon1"), "name", "power_meter\n");
        write(&hw.join("hwmon1"), "power1_input", "220000000\n");
        write(&hw.join("hwmon1"), "power1_label", "PSU\n");
        let meter = open(root.path()).unwrap();
        assert_eq!(meter.domains(), vec!["hwmon:power_meter/PSU"]);
        write(&hw.join("hwmon1"), "energy1_input", "5\n");
        let meter = open(root.path()).unwrap();
        assert_eq!(meter.domains(), vec!["hwmon:power_meter/energy1"]);
        std::fs::remove_dir_all(hw.join("hwmon1")).unwrap();
        assert_eq!(
            open(root.path()).unwrap().domains(),
            vec!["hwmon:other/power1"]
        );
    }
}
