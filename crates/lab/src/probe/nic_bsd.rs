//! The network interfaces' settings of a BSD host without an agent, into
//! the same `NicSettings` as Linux's: offloads from `ifconfig -m`
//! (FreeBSD and DragonFly: `options=` enabled of `capabilities=`;
//! NetBSD: `enabled=` of `capabilities=`, and `ec_enabled=` of
//! `ec_capabilities=`), the media line, and the driver's ring and queue
//! settings from `sysctl dev.DRIVER.UNIT` (iflib(4)'s `override_*`,
//! cxgbe(4)'s `nrxq`/`qsize_rxq`, the older drivers' `num_queues`,
//! `rxd`, `txd`), under their own sysctl names: iflib's `0` means "the
//! driver's default", not a size, so nothing is renamed or guessed.
//!
//! [`super::nic_script`] gathers them over plain ssh; the parsers are pure.

use super::nic::{NicSettings, UNAVAILABLE};
use std::collections::{BTreeMap, BTreeSet};

/// The sysctl leaves (after `dev.DRIVER.UNIT.`) that size rings.
const RING_KEYS: &[&str] = &[
    "iflib.override_nrxds",
    "iflib.override_ntxds",
    "qsize_rxq",
    "qsize_txq",
    "rxd",
    "txd",
];

/// ... and those that count queues (channels).
const QUEUE_KEYS: &[&str] = &[
    "iflib.override_nrxqs",
    "iflib.override_ntxqs",
    "iflib.override_qs_enable",
    "nrxq",
    "ntxq",
    "num_queues",
];

/// The flag names between `<` and `>` of a line `key=HEX<A,B>`, or none
/// for `key=0`.
fn flags(value: &str) -> Vec<String> {
    value
        .split_once('<')
        .and_then(|(_, rest)| rest.strip_suffix('>'))
        .map(|list| {
            list.split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Offloads and media of one interface's `ifconfig -m` block: every
/// capability `on` when enabled, else `off`; an enabled flag the block
/// lists no capability line for is `on`.
pub fn parse_ifconfig(block: &str) -> (BTreeMap<String, String>, Option<String>) {
    let mut capable = BTreeSet::new();
    let mut enabled = BTreeSet::new();
    let mut media = None;
    for line in block.lines().map(str::trim) {
        let Some((key, value)) = line.split_once('=') else {
            if let Some(m) = line.strip_prefix("media: ") {
                media = Some(m.to_string());
            }
            continue;
        };
        let set = match key {
            "capabilities" | "ec_capabilities" => &mut capable,
            "options" | "enabled" | "ec_enabled" => &mut enabled,
            _ => continue,
        };
        set.extend(flags(value));
    }
    let offloads = capable
        .union(&enabled)
        .map(|f| {
            let on = if enabled.contains(f) { "on" } else { "off" };
            (f.clone(), on.to_string())
        })
        .collect();
    (offloads, media)
}

/// The driver (`%driver`), rings and queues of `sysctl dev.DRIVER.UNIT`'s
/// `name: value` lines.
pub fn parse_dev_sysctl(
    text: &str,
) -> (
    Option<String>,
    BTreeMap<String, String>,
    BTreeMap<String, String>,
) {
    let (mut driver, mut rings, mut queues) = (None, BTreeMap::new(), BTreeMap::new());
    for line in text.lines() {
        let Some((name, value)) = line.split_once(": ") else {
            continue;
        };
        // dev.DRIVER.UNIT.LEAF
        let Some(leaf) = name.splitn(4, '.').nth(3) else {
            continue;
        };
        let value = value.trim().to_string();
        if leaf == "%driver" {
            driver = Some(value);
        } else if RING_KEYS.contains(&leaf) {
            rings.insert(leaf.to_string(), value);
        } else if QUEUE_KEYS.contains(&leaf) {
            queues.insert(leaf.to_string(), value);
        }
    }
    (driver, rings, queues)
}

/// One interface's settings from its `ifconfig -m` block and its
/// driver's `sysctl dev.DRIVER.UNIT`.
pub fn settings(ifconfig: &str, sysctl: &str) -> NicSettings {
    let (offloads, media) = parse_ifconfig(ifconfig);
    let (driver, rings, channels) = parse_dev_sysctl(sysctl);
    NicSettings {
        driver: driver.unwrap_or_else(|| UNAVAILABLE.into()),
        channels,
        rings,
        offloads,
        media,
        ..NicSettings::default()
    }
}

/// A BSD fixture's output (`tests/fixtures/bsd/NAME`), its `# source:`
/// lines left out; a fixture that names no source fails the test.
#[cfg(any(test, feature = "test-support"))]
pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/bsd/{name}", crate::REPO);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# source: "), "{name} names no source");
    text.lines()
        .filter(|l| !l.starts_with("# source: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The `ifconfig -am` block of `name` in NetBSD's output.
#[cfg(test)]
pub(crate) fn netbsd_block(name: &str) -> String {
    let text = fixture("netbsd-9.1-ifconfig-am.txt");
    let mut block = String::new();
    let mut inside = false;
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            inside = line.starts_with(&format!("{name}: "));
        }
        if inside {
            block.push_str(line);
            block.push('\n');
        }
    }
    block
}

/// The parsers on real output captured on FreeBSD, pfSense and NetBSD
/// (`tests/fixtures/bsd/`, each file naming its source).
#[cfg(test)]
mod captured {
    use super::*;

    use crate::probe::nic_bsd::{fixture, netbsd_block};

    #[test]
    fn freebsd_options_are_on_and_the_other_capabilities_off() {
        let (offloads, media) = parse_ifconfig(&fixture(
            "pfsense-2.3.2-ifconfig-m-re1-options-capabilities.txt",
        ));
        // 12 capabilities; options holds 8 of them (TSO4 just enabled).
        assert_eq!(offloads.len(), 12, "{offloads:?}");
        let on: Vec<&str> = offloads
            .iter()
            .filter(|(_, v)| *v == "on")
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            on,
            [
                "LINKSTATE",
                "RXCSUM",
                "TSO4",
                "TXCSUM",
                "VLAN_HWCSUM",
                "VLAN_HWTAGGING",
                "VLAN_MTU",
                "WOL_MAGIC"
            ]
        );
        for off in ["POLLING", "WOL_UCAST", "WOL_MCAST", "NETMAP"] {
            assert_eq!(offloads[off], "off", "{off}");
        }
        assert_eq!(media, None);
    }

    #[test]
    fn netbsd_capabilities_over_several_lines_are_all_off_when_enabled_is_0() {
        let (offloads, media) = parse_ifconfig(&netbsd_block("mue0"));
        // 12 checksum/TSO capabilities over three lines, and VLAN_MTU.
        assert_eq!(offloads.len(), 13, "{offloads:?}");
        assert!(offloads.values().all(|v| v == "off"), "{offloads:?}");
        assert!(offloads.contains_key("TSO6") && offloads.contains_key("VLAN_MTU"));
        assert_eq!(
            media.as_deref(),
            Some("Ethernet autoselect (100baseTX full-duplex)")
        );
        let (ure, media) = parse_ifconfig(&netbsd_block("ure0"));
        assert_eq!(ure.len(), 11, "{ure:?}");
        assert!(!ure.contains_key("TSO4"));
        assert_eq!(media.as_deref(), Some("Ethernet autoselect (none)"));
    }

    #[test]
    fn freebsd_dev_sysctl_gives_the_driver_and_invents_no_ring() {
        let (driver, rings, queues) = parse_dev_sysctl(&fixture("freebsd-sysctl-dev.ix.1.txt"));
        assert_eq!(driver.as_deref(), Some("ix"));
        // The capture holds no ring or queue setting: none is made up.
        assert!(
            rings.is_empty() && queues.is_empty(),
            "{rings:?} {queues:?}"
        );
    }
}
