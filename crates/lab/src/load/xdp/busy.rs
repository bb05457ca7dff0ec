//! An interface that already has an XDP program attached: attaching ours
//! fails with EBUSY. Another tool left it there (Debian's kxdpgun leaves
//! its program attached when it exits), so the error names that program,
//! as `ip -d -j link show dev IF` reports it, and the command that detaches
//! it.

use std::process::Command;

/// The XDP program `ip` reports on an interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XdpProgram {
    /// The kernel's program id.
    pub id: u64,
    /// Its name (the kernel keeps the first 15 bytes), empty when unnamed.
    pub name: String,
}

impl std::fmt::Display for XdpProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name.as_str() {
            "" => write!(f, "XDP program id {}", self.id),
            name => write!(f, "XDP program `{name}` (id {})", self.id),
        }
    }
}

/// The program attached to the interface in `ip -d -j link show dev IF`'s
/// JSON: `xdp.prog`, or the first of `xdp.attached` (several modes at once);
/// `None` when the text holds no XDP program.
pub fn parse_ip_link(json: &str) -> Option<XdpProgram> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let xdp = v.get(0)?.get("xdp")?;
    let prog = xdp
        .get("prog")
        .or_else(|| xdp.get("attached")?.get(0)?.get("prog"))?;
    Some(XdpProgram {
        id: prog.get("id")?.as_u64()?,
        name: prog
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or_default()
            .to_string(),
    })
}

/// The XDP program attached to `ifname` in the calling thread's network
/// namespace (a child process inherits it), by `ip`; `None` when there is
/// none or `ip` cannot tell.
pub fn attached_program(ifname: &str) -> Option<XdpProgram> {
    let out = Command::new("ip")
        .args(["-d", "-j", "link", "show", "dev", ifname])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse_ip_link(&String::from_utf8_lossy(&out.stdout)))?
}

/// The command that detaches the XDP program from `ifname`, in namespace
/// `netns` when the load runs in one.
pub fn detach_command(ifname: &str, netns: Option<&str>) -> String {
    match netns {
        Some(ns) => format!("ip -n {ns} link set dev {ifname} xdp off"),
        None => format!("ip link set dev {ifname} xdp off"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip -d -j link show dev g0` (iproute2 6.1) after `kxdpgun -t 1`,
    /// trimmed to the fields read.
    const KXDPGUN: &str = r#"[{"ifindex":2,"link_index":2,"ifname":"g0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"mtu":1500,"xdp":{"mode":1,"prog":{"id":9,"name":"xdp_redirect_dn","tag":"3a9990d42c91205a","jited":1,"load_time":592086252496,"created_by_uid":0,"btf_id":11},"attached":[{"mode":1,"prog":{"id":9,"name":"xdp_redirect_dn","tag":"3a9990d42c91205a","jited":1}}]},"qdisc":"noqueue","operstate":"UP"}]"#;

    #[test]
    fn the_attached_program_is_read_from_ip_json() {
        let p = parse_ip_link(KXDPGUN).unwrap();
        assert_eq!(
            p,
            XdpProgram {
                id: 9,
                name: "xdp_redirect_dn".into()
            }
        );
        assert_eq!(p.to_string(), "XDP program `xdp_redirect_dn` (id 9)");
        let several = r#"[{"ifname":"g0","xdp":{"attached":[{"mode":2,"prog":{"id":12,"name":"a"}},{"mode":1,"prog":{"id":13}}]}}]"#;
        assert_eq!(parse_ip_link(several).unwrap().id, 12);
        assert_eq!(parse_ip_link(r#"[{"ifname":"g0","mtu":1500}]"#), None);
        assert_eq!(parse_ip_link("not json"), None);
        assert_eq!(
            XdpProgram {
                id: 3,
                name: String::new()
            }
            .to_string(),
            "XDP program id 3"
        );
    }

    #[test]
    fn the_fix_names_the_namespace_when_there_is_one() {
        assert_eq!(detach_command("g0", None), "ip link set dev g0 xdp off");
        assert_eq!(
            detach_command("g0", Some("lab1")),
            "ip -n lab1 link set dev g0 xdp off"
        );
    }
}
