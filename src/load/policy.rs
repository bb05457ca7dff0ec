//! Where load may go. Load goes only to loopback, or to a host that the
//! experiment names in `[hosts]` (the coordinator, or the agent it started,
//! adds those addresses with [`allow`] before any packet is sent). Every
//! driver asks [`check`] before it opens a socket.

use std::net::IpAddr;
use std::sync::Mutex;

static ALLOWED: Mutex<Vec<IpAddr>> = Mutex::new(Vec::new());

/// Permits load to these addresses for the rest of this process.
pub fn allow(addrs: &[IpAddr]) {
    let mut allowed = ALLOWED.lock().unwrap_or_else(|p| p.into_inner());
    for a in addrs {
        if !allowed.contains(a) {
            allowed.push(*a);
        }
    }
}

/// Whether `ip` is loopback (v4, v6, or v4-mapped loopback).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
    }
}

/// `Ok` for loopback and for addresses permitted by [`allow`]; otherwise a
/// sentence that says why and what to do.
pub fn check(ip: IpAddr) -> Result<(), String> {
    let allowed = ALLOWED.lock().unwrap_or_else(|p| p.into_inner());
    if is_loopback(ip) || allowed.contains(&ip) {
        return Ok(());
    }
    Err(format!(
        "{ip} is not a loopback address; scalelab sends load only to 127.0.0.0/8 or ::1, \
         or to a host named in the experiment's [hosts]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_always_and_others_only_when_named() {
        assert!(check("127.0.0.9".parse().unwrap()).is_ok());
        assert!(check("::ffff:127.0.0.1".parse().unwrap()).is_ok());
        let lab: IpAddr = "198.18.7.7".parse().unwrap();
        let e = check(lab).unwrap_err();
        assert!(e.contains("[hosts]"), "{e}");
        allow(&[lab]);
        assert!(check(lab).is_ok());
        assert!(check("198.18.7.8".parse().unwrap()).is_err());
    }
}
