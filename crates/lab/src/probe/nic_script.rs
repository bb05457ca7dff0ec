//! The network interfaces' settings of a host without an agent, over plain
//! ssh: [`NIC_SCRIPT`] prints, for every interface that is up (loopback
//! aside), one section per command, `#COMMAND IF` then its output, and
//! [`parse_nics`] reads them back into the same `NicSettings` the agent
//! records. On Linux the commands are the agent's own (`ethtool -i`, `-l`,
//! `-g`, `-k`, and the RPS/XPS mask files); on a BSD, `ifconfig -m` and
//! the driver's `sysctl dev.DRIVER.UNIT` ([`super::nic_bsd`]).

use super::nic::{EthtoolOutputs, NicSettings, UNAVAILABLE};
use super::nic_bsd;
use std::collections::BTreeMap;

/// The POSIX `sh` that prints the sections. A command that fails prints
/// its marker alone (the agent's reading of a failed `ethtool`: nothing),
/// and a mask file that cannot be read prints `unavailable`, as the
/// agent records it. BSD: the driver is the name without its unit
/// (`ix0` → `dev.ix.0`).
pub const NIC_SCRIPT: &str = r##"if [ "$(uname -s)" = Linux ]; then
    for d in /sys/class/net/*; do
        i=${d##*/}
        [ "$i" = lo ] && continue
        [ "$(cat "$d/operstate" 2>/dev/null)" = up ] || continue
        for o in i l g k; do
            echo "#ethtool-$o $i"
            t=$(ethtool "-$o" "$i" 2>/dev/null) && printf '%s\n' "$t"
        done
        echo "#masks $i"
        for q in "$d"/queues/rx-* "$d"/queues/tx-*; do
            [ -d "$q" ] || continue
            case ${q##*/} in
                rx-*) f=rps_cpus ;;
                *) f=xps_cpus ;;
            esac
            m=$(cat "$q/$f" 2>/dev/null) || m=unavailable
            echo "${q##*/} $m"
        done
    done
    exit 0
fi
for i in $(ifconfig -l -u); do
    case $i in
        lo*) continue ;;
    esac
    echo "#nic $i"
    ifconfig -m "$i" 2>/dev/null
    d=${i%%[0-9]*}
    u=${i#"$d"}
    echo "#sysctl $i"
    sysctl "dev.$d.$u" 2>/dev/null
done
true
"##;

/// The sections of one interface: command → its output (a section with
/// no line is a command that printed nothing).
type Sections = BTreeMap<String, String>;

/// Splits the script's output into interface → sections.
fn split(text: &str) -> BTreeMap<String, Sections> {
    let mut nics: BTreeMap<String, Sections> = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        let marker = line
            .strip_prefix('#')
            .and_then(|rest| rest.split_once(' '))
            .filter(|(command, _)| SECTIONS.contains(command));
        if let Some((command, name)) = marker {
            let name = name.trim().to_string();
            nics.entry(name.clone())
                .or_default()
                .entry(command.to_string())
                .or_default();
            current = Some((name, command.to_string()));
        } else if let Some((name, command)) = &current {
            let out = nics
                .entry(name.clone())
                .or_default()
                .entry(command.clone())
                .or_default();
            out.push_str(line);
            out.push('\n');
        }
    }
    nics
}

/// The section markers [`NIC_SCRIPT`] prints.
const SECTIONS: &[&str] = &[
    "ethtool-i",
    "ethtool-l",
    "ethtool-g",
    "ethtool-k",
    "masks",
    "nic",
    "sysctl",
];

/// A Linux interface's settings from its ethtool and mask sections.
fn linux(sections: &Sections) -> NicSettings {
    // An empty section is a failed command.
    let output = |c: &str| sections.get(c).filter(|t| !t.is_empty()).cloned();
    let outputs = EthtoolOutputs {
        info: output("ethtool-i"),
        channels: output("ethtool-l"),
        rings: output("ethtool-g"),
        features: output("ethtool-k"),
    };
    let (mut rps_cpus, mut xps_cpus) = (BTreeMap::new(), BTreeMap::new());
    for line in sections
        .get("masks")
        .map(String::as_str)
        .unwrap_or("")
        .lines()
    {
        let (queue, mask) = line.split_once(' ').unwrap_or((line, UNAVAILABLE));
        let masks = if queue.starts_with("rx-") {
            &mut rps_cpus
        } else {
            &mut xps_cpus
        };
        masks.insert(queue.to_string(), mask.trim().to_string());
    }
    NicSettings {
        rps_cpus,
        xps_cpus,
        ..outputs.settings()
    }
}

/// Every interface [`NIC_SCRIPT`] printed, by name.
pub fn parse_nics(text: &str) -> BTreeMap<String, NicSettings> {
    split(text)
        .into_iter()
        .map(|(name, sections)| {
            let nic = if sections.contains_key("nic") || sections.contains_key("sysctl") {
                let part = |c: &str| sections.get(c).map(String::as_str).unwrap_or("");
                nic_bsd::settings(part("nic"), part("sysctl"))
            } else {
                linux(&sections)
            };
            (name, nic)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::nic_bsd::{fixture, netbsd_block};

    /// The script written to a file, as the session feeds it to `sh`.
    fn script_file(dir: &std::path::Path) -> std::path::PathBuf {
        let file = dir.join("nic.sh");
        std::fs::write(&file, format!("#!/bin/sh\n{NIC_SCRIPT}")).unwrap();
        file
    }

    #[test]
    fn the_script_output_of_two_bsd_interfaces_parses_into_each() {
        let text = format!(
            "#nic re1\n{}#sysctl re1\n#nic ix1\n{}#sysctl ix1\n{}",
            fixture("pfsense-2.3.2-ifconfig-m-re1-options-capabilities.txt"),
            netbsd_block("mue0"),
            fixture("freebsd-sysctl-dev.ix.1.txt"),
        );
        let nics = parse_nics(&text);
        assert_eq!(nics.len(), 2);
        assert_eq!(nics["re1"].driver, UNAVAILABLE);
        assert_eq!(nics["re1"].offloads["TSO4"], "on");
        assert_eq!(nics["ix1"].driver, "ix");
        assert!(nics["ix1"].media.is_some());
    }

    #[test]
    fn the_script_passes_shellcheck() {
        let tmp = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("shellcheck")
            .args(["-s", "sh"])
            .arg(script_file(tmp.path()))
            .output()
            .expect("shellcheck is installed");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.is_empty(), "{said}");
    }

    #[test]
    fn on_linux_the_script_under_dash_and_posh_reads_what_the_agent_reads() {
        let tmp = tempfile::tempdir().unwrap();
        let file = script_file(tmp.path());
        let agent = crate::probe::nic::capture();
        assert!(!agent.is_empty(), "this VM has an interface up");
        for shell in crate::kinds::TEST_SHELLS.iter().copied() {
            let out = std::process::Command::new(shell)
                .arg(&file)
                .output()
                .unwrap();
            assert!(out.status.success(), "{shell}");
            let nics = parse_nics(&String::from_utf8_lossy(&out.stdout));
            assert_eq!(nics, agent, "{shell}");
        }
    }

    #[test]
    fn a_failed_ethtool_is_unavailable_not_a_header() {
        let nics = parse_nics("#ethtool-i v0\n#ethtool-l v0\n#ethtool-g v0\n#masks v0\nrx-0 0\n");
        let v0 = &nics["v0"];
        assert_eq!(v0.driver, UNAVAILABLE);
        assert!(v0.channels.is_empty() && v0.offloads.is_empty());
        assert_eq!(v0.rps_cpus["rx-0"], "0");
        assert!(v0.xps_cpus.is_empty());
    }
}
