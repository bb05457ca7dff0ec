//! The private directories the server kinds make, each named
//! `<prefix><owner PID>-<random>` by [`crate::owned::OwnedDir`]: removed
//! when the target is done with them, by the reaper when scalelab is
//! killed, and by [`reclaim_stale`] at the next run if both failed.

use crate::owned::{self, OwnedDir};
use std::path::{Path, PathBuf};

/// nginx's run directory (config, pid file, logs, static files), in the base dir.
pub const NGINX: &str = "nginx-";
/// MariaDB's run directory (cnf, data, socket), in the base dir.
pub const MARIADB: &str = "mariadb-";
/// The DNS lab's directory (zones, configs, logs), in the base dir.
pub const DNS_LAB: &str = "dns-";
/// PostgreSQL's private socket directory, in [`TMP_BASE`]: short, as
/// socket paths are limited to 107 bytes.
pub const PG_SOCKETS: &str = "scalelab-pg-";
/// The router lab's nftables ruleset (for `nft -f`), in [`TMP_BASE`].
pub const NFT_RULES: &str = "scalelab-nft-";
/// Where [`PG_SOCKETS`] and [`NFT_RULES`] directories go.
pub const TMP_BASE: &str = "/tmp";

/// Creates `base/<prefix><our PID>-<random>`, after removing the ones of
/// dead owners.
pub fn create(base: &Path, prefix: &str) -> std::io::Result<OwnedDir> {
    OwnedDir::create(base, prefix)
}

/// Removes every kind's directories whose owner is dead, in `base` (the
/// run's base directory) and in [`TMP_BASE`]; returns those removed.
pub fn reclaim_stale(base: &Path) -> Vec<PathBuf> {
    let in_base = [NGINX, MARIADB, DNS_LAB].map(|p| (base, p));
    let in_tmp = [PG_SOCKETS, NFT_RULES].map(|p| (Path::new(TMP_BASE), p));
    in_base
        .into_iter()
        .chain(in_tmp)
        .flat_map(|(dir, prefix)| owned::reclaim_stale(dir, prefix, owned::remove_tree))
        .collect()
}
