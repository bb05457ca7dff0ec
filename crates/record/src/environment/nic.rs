//! One network interface's settings as the fingerprint stores them: driver,
//! channels, rings, offloads, RPS/XPS masks, and a BSD host's media line.
//! The lab's `probe::nic` (Linux, ethtool) and `probe::nic_bsd`
//! (`ifconfig`, `sysctl`) read them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a figure that cannot be read says (as the fingerprint's other
/// keys say it).
pub const UNAVAILABLE: &str = "unavailable";

/// One interface's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NicSettings {
    /// `ethtool -i`'s `driver` (`virtio_net`, `veth`, `ixgbe`), or `unavailable`.
    pub driver: String,
    /// `ethtool -l`'s current channels (`RX`, `TX`, `Other`, `Combined`).
    pub channels: BTreeMap<String, String>,
    /// `ethtool -g`'s current ring sizes (`RX`, `TX`, ...).
    pub rings: BTreeMap<String, String>,
    /// `ethtool -k`'s features: `on`, `off`, with ` [fixed]` where the
    /// driver does not let them change.
    pub offloads: BTreeMap<String, String>,
    /// Each receive queue's RPS CPU mask (`rx-0` → `0`).
    pub rps_cpus: BTreeMap<String, String>,
    /// Each transmit queue's XPS CPU mask (`tx-0` → `0`).
    pub xps_cpus: BTreeMap<String, String>,
    /// The media line a BSD `ifconfig` prints (`Ethernet autoselect
    /// (1000baseT <full-duplex>)`); `None` on Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
}
