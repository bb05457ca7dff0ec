//! Building and removing the A — R — B lab: three network namespaces joined
//! by veth pairs, static addresses and neighbours (so no ARP or IPv6 noise
//! reaches the counters), forwarding on in R, then R's settings.
//!
//! Namespaces are named `slr-<pid>-<n>-{a,r,b}`. Removing a namespace
//! removes its veths and nftables tables with it. Each lab has a guard (the
//! lifecycle's watchdog) that removes it when scalelab dies, `kill -9`
//! included; should the guard die too, the next lab built anywhere removes
//! namespaces whose owner PID is gone ([`reclaim_dead`]), by exact name.

use super::settings::{cpu_mask, Firewall, RouterSettings};
use crate::model::topology::*;
use crate::procfs::netns::{in_netns, NETNS_DIR};
use crate::server::rundir;
use crate::server::ServerError;
use crate::sys::lifecycle::watchdog::Watchdog;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

const KIND: &str = "router";
/// Namespace name prefix for every lab scalelab builds.
pub const PREFIX: &str = "slr";

/// Finds `tool` on `PATH`, or says which package provides it.
pub fn find_tool(tool: &'static str, package: &'static str) -> Result<PathBuf, ServerError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| ServerError::Missing {
            kind: KIND,
            message: format!("`{tool}` (Debian package {package}) is not on PATH"),
        })
}

/// Runs a command and turns a failure into an error that shows it.
fn run(cmd: &mut Command) -> Result<(), ServerError> {
    let out = cmd.output().map_err(|e| ServerError::Start {
        kind: KIND,
        message: format!("cannot run {cmd:?}: {e}"),
    })?;
    if out.status.success() {
        return Ok(());
    }
    Err(ServerError::Start {
        kind: KIND,
        message: format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
    })
}

/// A built lab. Dropping it removes it.
pub(crate) struct Lab {
    pub topology: Topology,
    ip: PathBuf,
    removed: bool,
    guard: Option<Watchdog>,
}

/// Starts the lab's guard: the lifecycle's [`Watchdog`], which outlives
/// scalelab and deletes the namespaces by name when scalelab dies
/// (`kill -9` included), within milliseconds. After a normal stop it is
/// released and touches nothing.
fn spawn_guard(t: &Topology) -> Result<Watchdog, ServerError> {
    let paths: Vec<PathBuf> = t
        .namespaces()
        .iter()
        .map(|ns| Path::new(NETNS_DIR).join(ns))
        .collect();
    Watchdog::for_namespaces(&paths).map_err(|e| ServerError::Start {
        kind: KIND,
        message: format!("cannot start the lab's clean-up watchdog: {e}"),
    })
}

static NEXT_LAB: AtomicU32 = AtomicU32::new(0);

impl Lab {
    /// Builds a fresh lab with `settings` applied and `rps` (R's CPUs, if
    /// any) as R's RPS mask. On any error the partial lab is removed.
    pub fn build(settings: &RouterSettings, rps: Option<&[usize]>) -> Result<Lab, ServerError> {
        let ip = find_tool("ip", "iproute2")?;
        let tools = Tools::for_settings(settings)?;
        reclaim_dead(&ip);
        let n = NEXT_LAB.fetch_add(1, Ordering::Relaxed);
        let prefix = format!("{PREFIX}-{}-{n}", std::process::id());
        let topology = Topology::named(&prefix);
        let guard = spawn_guard(&topology)?;
        let mut lab = Lab {
            topology,
            ip,
            removed: false,
            guard: Some(guard),
        };
        lab.wire(settings)?;
        lab.configure_router(settings, rps, &tools)?;
        Ok(lab)
    }

    fn ip(&self, ns: &str, args: &[&str]) -> Result<(), ServerError> {
        run(Command::new(&self.ip).arg("-n").arg(ns).args(args))
    }

    fn exec(&self, ns: &str, program: &Path, args: &[&str]) -> Result<(), ServerError> {
        run(Command::new(&self.ip)
            .args(["netns", "exec", ns])
            .arg(program)
            .args(args))
    }

    /// Namespaces, veths, addresses, static neighbours, routes, forwarding.
    fn wire(&mut self, s: &RouterSettings) -> Result<(), ServerError> {
        let t = self.topology.clone();
        for ns in t.namespaces() {
            run(Command::new(&self.ip).args(["netns", "add", ns]))?;
            write_sysctl(ns, "net.ipv6.conf.all.disable_ipv6", "1")?;
            write_sysctl(ns, "net.ipv6.conf.default.disable_ipv6", "1")?;
            self.ip(ns, &["link", "set", "lo", "up"])?;
        }
        let q = s.queues().to_string();
        let mtu = s.mtu().to_string();
        let mac = |i: u8| format!("02:00:c6:12:00:{i:02x}");
        let pairs = [
            (&t.a.netns, A_IF, 1, &t.r.netns, R_A_IF, 2),
            (&t.b.netns, B_IF, 3, &t.r.netns, R_B_IF, 4),
        ];
        for (ns, ifname, m, peer_ns, peer, pm) in pairs {
            let side =
                |mac: String| format!("address {mac} numtxqueues {q} numrxqueues {q} mtu {mtu}");
            let args = format!(
                "link add {ifname} {} type veth peer name {peer} {} netns {peer_ns}",
                side(mac(m)),
                side(mac(pm))
            );
            self.ip(ns, &args.split(' ').collect::<Vec<_>>())?;
        }
        let addrs = [
            (&t.a.netns, A_IF, A_ADDR, R_A_ADDR, mac(2)),
            (&t.r.netns, R_A_IF, R_A_ADDR, A_ADDR, mac(1)),
            (&t.r.netns, R_B_IF, R_B_ADDR, B_ADDR, mac(3)),
            (&t.b.netns, B_IF, B_ADDR, R_B_ADDR, mac(4)),
        ];
        for (ns, ifname, addr, neighbour, lladdr) in addrs {
            let cidr = format!("{addr}/{PREFIX_LEN}");
            self.ip(ns, &["addr", "add", &cidr, "dev", ifname])?;
            self.ip(ns, &["link", "set", ifname, "up"])?;
            let nb = neighbour.to_string();
            self.ip(
                ns,
                &[
                    "neigh",
                    "replace",
                    &nb,
                    "lladdr",
                    &lladdr,
                    "dev",
                    ifname,
                    "nud",
                    "permanent",
                ],
            )?;
        }
        self.ip(
            &t.a.netns,
            &["route", "add", "default", "via", &R_A_ADDR.to_string()],
        )?;
        self.ip(
            &t.b.netns,
            &["route", "add", "default", "via", &R_B_ADDR.to_string()],
        )?;
        write_sysctl(&t.r.netns, "net.ipv4.ip_forward", "1")
    }

    /// Sysctls, offloads, RPS/XPS and the firewall in R; the hosts' RPS.
    fn configure_router(
        &self,
        s: &RouterSettings,
        rps: Option<&[usize]>,
        tools: &Tools,
    ) -> Result<(), ServerError> {
        let r = self.topology.r.netns.clone();
        for (key, value) in s.sysctl_pairs() {
            write_sysctl(&r, &key, &value)?;
        }
        if let Some(ethtool) = &tools.ethtool {
            for ifname in [R_A_IF, R_B_IF] {
                let mut args = vec!["-K", ifname];
                for (name, on) in [("gro", s.gro), ("gso", s.gso)] {
                    if let Some(on) = on {
                        args.extend([name, if on { "on" } else { "off" }]);
                    }
                }
                self.exec(&r, ethtool, &args)?;
            }
        }
        let mut writes = Vec::new();
        for ifname in [R_A_IF, R_B_IF] {
            for q in 0..s.queues() {
                if let Some(cpus) = rps {
                    writes.push((format!("{ifname}/queues/rx-{q}/rps_cpus"), cpu_mask(cpus)));
                }
                if let Some(cpus) = &s.xps_cpus {
                    writes.push((format!("{ifname}/queues/tx-{q}/xps_cpus"), cpu_mask(cpus)));
                }
            }
        }
        if !writes.is_empty() {
            let script: String = writes
                .iter()
                .map(|(f, mask)| format!("echo {mask} > /sys/class/net/{f} && "))
                .collect::<String>()
                + "true";
            self.exec(&r, Path::new("/bin/sh"), &["-c", &script])?;
        }
        if let Some(cpus) = &s.host_rps_cpus {
            for (ns, ifname) in [
                (&self.topology.a.netns, A_IF),
                (&self.topology.b.netns, B_IF),
            ] {
                let script: String = (0..s.queues())
                    .map(|q| {
                        format!(
                            "echo {} > /sys/class/net/{ifname}/queues/rx-{q}/rps_cpus && ",
                            cpu_mask(cpus)
                        )
                    })
                    .collect::<String>()
                    + "true";
                self.exec(ns, Path::new("/bin/sh"), &["-c", &script])?;
            }
        }
        if let Some(nft) = &tools.nft {
            let rules = nft_ruleset(s.firewall, s.firewall_rules.unwrap_or(0));
            let tmp = Path::new(rundir::TMP_BASE);
            let dir =
                rundir::create(tmp, rundir::NFT_RULES).map_err(|e| ServerError::io(tmp, e))?;
            let file = dir.path().join("ruleset.nft");
            std::fs::write(&file, rules).map_err(|e| ServerError::io(&file, e))?;
            let path = file.display().to_string();
            self.exec(&r, nft, &["-f", &path])?;
        }
        Ok(())
    }

    /// Removes the lab's namespaces (their veths and nftables tables go with
    /// them). Idempotent.
    pub fn remove(&mut self) -> Result<(), ServerError> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let mut first_error = None;
        for ns in self.topology.namespaces() {
            if Path::new(NETNS_DIR).join(ns).exists() {
                if let Err(e) = run(Command::new(&self.ip).args(["netns", "del", ns])) {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(mut guard) = self.guard.take() {
            // Released only when every namespace went; otherwise dropping
            // it unreleased makes it try again.
            if first_error.is_none() {
                guard.release();
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Whether all three namespaces still exist.
    pub fn exists(&self) -> bool {
        self.topology
            .namespaces()
            .iter()
            .all(|ns| Path::new(NETNS_DIR).join(ns).exists())
    }

    /// Whether the lab can still forward: its namespaces exist and R still
    /// has both of its links (a deleted veth takes its peer with it).
    pub fn intact(&self) -> bool {
        self.exists()
            && crate::procfs::netns::read_net_file(&self.topology.r.netns, "dev").is_ok_and(
                |text| {
                    let ifs = crate::procfs::net::parse_net_dev(&text);
                    [R_A_IF, R_B_IF]
                        .iter()
                        .all(|want| ifs.iter().any(|i| i.iface == *want))
                },
            )
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// The optional tools a lab with these settings needs.
struct Tools {
    ethtool: Option<PathBuf>,
    nft: Option<PathBuf>,
}

impl Tools {
    fn for_settings(s: &RouterSettings) -> Result<Tools, ServerError> {
        let ethtool = if s.gro.is_some() || s.gso.is_some() {
            Some(find_tool("ethtool", "ethtool")?)
        } else {
            None
        };
        let nft = if s.firewall == Firewall::None {
            None
        } else {
            Some(find_tool("nft", "nftables")?)
        };
        Ok(Tools { ethtool, nft })
    }
}

/// Writes a sysctl inside namespace `ns` (`/proc/sys/net` is per namespace
/// for whoever opens it). An unknown name is an error that says so.
pub fn write_sysctl(ns: &str, key: &str, value: &str) -> Result<(), ServerError> {
    let path = crate::procfs::sysctl::path(key);
    let (key2, value2) = (key.to_string(), value.to_string());
    let result = in_netns(ns, move || {
        if !path.exists() {
            return Ok(Err(ServerError::Settings {
                kind: KIND,
                message: format!(
                    "unknown sysctl `{key2}`: there is no {} in R's network namespace (some net.core settings are global, not per namespace; `sysctl -a | grep net.` inside `ip netns exec` lists the ones that are)",
                    path.display()
                ),
            }));
        }
        Ok(
            crate::procfs::sysctl::write(&key2, &value2).map_err(|e| ServerError::Settings {
                kind: KIND,
                message: format!("sysctl `{key2}` = `{value2}` was refused: {e}"),
            }),
        )
    });
    result.map_err(|e| ServerError::Start {
        kind: KIND,
        message: e.to_string(),
    })?
}

/// The ruleset text: a table `inet scalelab` with a forward chain.
pub fn nft_ruleset(firewall: Firewall, rules: u32) -> String {
    let body = match firewall {
        Firewall::None => return String::new(),
        Firewall::Small => "\t\tct state established,related counter accept\n\
             \t\tct state invalid counter drop\n\
             \t\tiifname \"r0\" oifname \"r1\" ip daddr 198.19.0.0/24 counter accept\n\
             \t\tiifname \"r1\" oifname \"r0\" ip daddr 198.18.0.0/24 counter accept\n\
             \t\tcounter drop\n"
            .to_string(),
        Firewall::Rules => {
            // Never-matching rules (10.0.0.0/8 sources never reach the lab),
            // so each packet is compared against every one of them.
            let mut b = String::with_capacity(rules as usize * 48);
            for i in 0..rules {
                b.push_str(&format!(
                    "\t\tip saddr 10.{}.{}.{} udp dport {} drop\n",
                    (i >> 16) & 255,
                    (i >> 8) & 255,
                    i & 255,
                    1024 + i % 60000
                ));
            }
            b + "\t\tcounter accept\n"
        }
    };
    format!(
        "table inet scalelab {{\n\tchain forward {{\n\t\ttype filter hook forward priority filter; policy accept;\n{body}\t}}\n}}\n"
    )
}

/// Removes every lab namespace whose owner (the PID in its name) is gone:
/// what a run killed with `kill -9` left. Names are matched exactly.
pub fn reclaim_dead(ip: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name) else {
            continue;
        };
        if crate::sys::process::is_alive(pid) {
            continue;
        }
        if run(Command::new(ip).args(["netns", "del", &name])).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// The owner PID of a lab namespace name `slr-<pid>-<n>-<a|r|b>`.
pub fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?.strip_prefix('-')?;
    let mut parts = rest.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u32>().ok()?;
    let node = parts.next()?;
    (parts.next().is_none() && matches!(node, "a" | "r" | "b")).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pids_come_only_from_exact_lab_names() {
        assert_eq!(owner_pid("slr-1234-0-a"), Some(1234));
        assert_eq!(owner_pid("slr-1234-17-r"), Some(1234));
        assert_eq!(owner_pid("slr-1234-0-x"), None);
        assert_eq!(owner_pid("slr-1234-a"), None);
        assert_eq!(owner_pid("slr-1234-0-a-b"), None);
        assert_eq!(owner_pid("dns-1234"), None);
        assert_eq!(owner_pid("slrx-1-0-a"), None);
    }

    #[test]
    fn rulesets_hold_the_asked_number_of_rules() {
        assert_eq!(nft_ruleset(Firewall::None, 0), "");
        let r = nft_ruleset(Firewall::Rules, 100);
        assert_eq!(r.matches(" drop\n").count(), 100);
        assert!(r.contains("hook forward"));
        assert!(nft_ruleset(Firewall::Small, 0).contains("ct state established"));
    }
}
