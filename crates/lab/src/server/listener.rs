//! Which processes are an `external` server that was given no `pid`: the
//! ones that listen on its URL's port. Here they come from `/proc`
//! ([`crate::procfs::sockets`]); on a server host over ssh from
//! `ss -ltunp` (Linux) or `sockstat -46l` (the BSDs), with
//! `ps -A -o pid= -o ppid=` for their parents ([`LISTENER_SCRIPT`]).
//! The server is the one process among them that no other of them is an
//! ancestor of (nginx's master above its workers); the probe follows its
//! tree, so its workers' CPU is the server's, not background. Where no
//! such process is found, the server cannot be told apart from the rest
//! of the machine, and [`Unidentified`] says why and names the fix.

use std::collections::HashMap;

/// The listeners on one port where the server runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listening {
    /// Sockets found listening on the port (some may show no process).
    pub sockets: usize,
    /// The processes that hold them, in PID order, each once.
    pub pids: Vec<u32>,
    /// The parent of each process there (at least of `pids` and their
    /// ancestors), to tell the root from its children.
    pub parents: HashMap<u32, u32>,
}

/// Why an `external` server without `pid` cannot be told apart from other
/// processes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unidentified {
    /// The URL names no port scalelab reads.
    #[error("its URL `{url}` names no TCP or UDP port")]
    NoPort {
        /// The URL.
        url: String,
    },
    /// Nothing listens on the port.
    #[error("nothing listens on port {port}")]
    NoListener {
        /// The URL's port.
        port: u16,
    },
    /// Sockets listen there, but no process is shown for them.
    #[error(
        "a socket listens on port {port}, but no process is shown for it (another user's, \
         or another network namespace's)"
    )]
    Hidden {
        /// The URL's port.
        port: u16,
    },
    /// Unrelated processes listen on the port.
    #[error("{} unrelated processes listen on port {port} (PIDs {})", .roots.len(), join(.roots))]
    Several {
        /// The URL's port.
        port: u16,
        /// The processes none of the others is an ancestor of.
        roots: Vec<u32>,
    },
    /// The listeners could not be read.
    #[error("its listeners could not be read: {0}")]
    Unreadable(String),
}

fn join(pids: &[u32]) -> String {
    let words: Vec<String> = pids.iter().map(u32::to_string).collect();
    words.join(", ")
}

impl Unidentified {
    /// The sentence the trial's probe keeps: what was not found, what that
    /// means for the background, and the fix.
    pub fn advice(&self) -> String {
        format!(
            "background unknown: the server cannot be told apart from other processes ({self}), \
             so its CPU is not its own and no trial is marked noisy; give the `external` server \
             `pid` or `pid_command`"
        )
    }
}

/// The TCP or UDP port the server's URL names: `scheme://host[:port]/...`
/// (the scheme's own port when none is given: http 80, https 443,
/// postgres 5432, mysql 3306, dns 53), or a libpq `key=value` string's
/// `port=` (5432 when it names a `host` but no port).
pub fn url_port(url: &str) -> Option<u16> {
    let url = url.trim();
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority = rest.split(['/', '?', '#']).next()?;
        let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let port = match hostport.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(':') && !port.contains(']') => {
                Some(port.parse().ok()?)
            }
            _ => None,
        };
        return port.or(match scheme {
            "http" => Some(80),
            "https" => Some(443),
            "postgres" | "postgresql" => Some(5432),
            "mysql" => Some(3306),
            "dns" => Some(53),
            _ => None,
        });
    }
    let pairs: Vec<(&str, &str)> = url
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .collect();
    let value = |key: &str| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    match value("port") {
        Some(p) => p.trim_matches('\'').parse().ok(),
        None => value("host").or(value("hostaddr")).map(|_| 5432),
    }
}

/// The server among the listeners: the one process that no other
/// listener is an ancestor of. Several such: `Err` with them all.
pub fn server_root(l: &Listening) -> Result<u32, Vec<u32>> {
    let is_listener = |p: u32| l.pids.contains(&p);
    let roots: Vec<u32> = l
        .pids
        .iter()
        .copied()
        .filter(|&pid| {
            let mut up = pid;
            // Bounded: a cycle in a bad `ps` reading ends the walk.
            for _ in 0..64 {
                match l.parents.get(&up) {
                    Some(&parent) if parent != up && parent != 0 => {
                        if is_listener(parent) {
                            return false;
                        }
                        up = parent;
                    }
                    _ => break,
                }
            }
            true
        })
        .collect();
    match roots.as_slice() {
        [one] => Ok(*one),
        _ => Err(roots),
    }
}

/// The server's root process on `port`, or why there is none.
pub fn identify(l: &Listening, port: u16) -> Result<u32, Unidentified> {
    if l.pids.is_empty() {
        return Err(if l.sockets == 0 {
            Unidentified::NoListener { port }
        } else {
            Unidentified::Hidden { port }
        });
    }
    server_root(l).map_err(|roots| Unidentified::Several { port, roots })
}

/// Run by `/bin/sh` where the server is (quoted for any login shell, csh
/// too: no `!`, no single quote inside): `ss` where there is one, else
/// `sockstat`, then every process's parent. Each part after its marker
/// line, read by [`parse_report`].
pub const LISTENER_SCRIPT: &str = "sh -c 'if command -v ss >/dev/null 2>&1; then echo \"#ss\"; \
     ss -ltunp; elif command -v sockstat >/dev/null 2>&1; then echo \"#sockstat\"; \
     sockstat -46l; else echo \"#none\"; fi; echo \"#ps\"; ps -A -o pid= -o ppid='";

/// The listeners on `port` from [`LISTENER_SCRIPT`]'s output.
pub fn parse_report(text: &str, port: u16) -> Result<Listening, String> {
    let mut parts: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut current = "";
    for line in text.lines() {
        match line.trim() {
            m @ ("#ss" | "#sockstat" | "#none" | "#ps") => current = m,
            _ => parts.entry(current).or_default().push(line),
        }
    }
    let text_of = |m: &str| parts.get(m).map(|l| l.join("\n"));
    let found = if let Some(t) = text_of("#ss") {
        parse_ss(&t, port)
    } else if let Some(t) = text_of("#sockstat") {
        parse_sockstat(&t, port)
    } else {
        return Err("the host has neither `ss` nor `sockstat`".into());
    };
    let parents = parse_parents(&text_of("#ps").unwrap_or_default());
    Ok(Listening { parents, ..found })
}

/// Every PID in `users:(("nginx",pid=19629,fd=5),...)`.
fn ss_pids(users: &str) -> Vec<u32> {
    users
        .split("pid=")
        .skip(1)
        .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect()
}

/// The port of a local address `127.0.0.1:80`, `[::1]:80`, `*:53`,
/// `0.0.0.0%lo:53`.
fn address_port(addr: &str) -> Option<u16> {
    addr.rsplit_once(':')?.1.parse().ok()
}

/// The listeners on `port` in `ss -ltunp` (or `ss -ltnp`) output: a
/// header, then `[Netid] State Recv-Q Send-Q Local Peer [Process]`.
pub fn parse_ss(text: &str, port: u16) -> Listening {
    let mut out = Listening::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let netid = matches!(f.first(), Some(&("tcp" | "udp")));
        let state = f.get(usize::from(netid)).copied();
        if !matches!(state, Some("LISTEN" | "UNCONN")) {
            continue;
        }
        let local = f.get(3 + usize::from(netid)).copied().unwrap_or("");
        if address_port(local) != Some(port) {
            continue;
        }
        out.sockets += 1;
        out.pids.extend(ss_pids(line));
    }
    out.pids.sort_unstable();
    out.pids.dedup();
    out
}

/// The listeners on `port` in `sockstat -46l` output: a header, then
/// `USER COMMAND PID FD PROTO LOCAL FOREIGN`.
pub fn parse_sockstat(text: &str, port: u16) -> Listening {
    let mut out = Listening::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(pid), Some(proto), Some(local)) = (f.get(2), f.get(4), f.get(5)) else {
            continue;
        };
        let inet = proto.starts_with("tcp") || proto.starts_with("udp");
        if !inet || address_port(local) != Some(port) {
            continue;
        }
        out.sockets += 1;
        // `?` where the process is gone or hidden.
        out.pids.extend(pid.parse::<u32>().ok());
    }
    out.pids.sort_unstable();
    out.pids.dedup();
    out
}

/// `pid ppid` lines (`ps -A -o pid= -o ppid=`).
pub fn parse_parents(text: &str) -> HashMap<u32, u32> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
        })
        .collect()
}

/// The listeners on `port` on this machine, from `/proc`: the sockets of
/// scalelab's network namespace, their holders, and the parents above
/// each holder.
pub fn local(port: u16) -> Listening {
    let inodes = crate::procfs::sockets::listeners(port, None);
    let pids = if inodes.is_empty() {
        Vec::new()
    } else {
        crate::procfs::sockets::holders(&inodes)
    };
    let mut parents = HashMap::new();
    for &pid in &pids {
        let mut up = pid;
        while let (None, Some(s)) = (parents.get(&up), crate::procfs::pid::stat(up)) {
            parents.insert(up, s.ppid);
            if s.ppid <= 1 {
                break;
            }
            up = s.ppid;
        }
    }
    Listening {
        sockets: inodes.len(),
        pids,
        parents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ss -ltunp` of iproute2 6.1.0 (Debian 12), captured on the
    /// project's VM: an nginx master (19627) with two workers listening on
    /// 127.0.0.1:18391 and [::1]:18391, beside another nginx and sshd.
    const SS_LTUNP: &str = "\
Netid State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess                                                                            
tcp   LISTEN 0      511        127.0.0.1:35863      0.0.0.0:*    users:((\"nginx\",pid=19533,fd=5),(\"nginx\",pid=19532,fd=5))                         
tcp   LISTEN 0      128          0.0.0.0:2024       0.0.0.0:*                                                                                      
tcp   LISTEN 0      511        127.0.0.1:18391      0.0.0.0:*    users:((\"nginx\",pid=19629,fd=5),(\"nginx\",pid=19628,fd=5),(\"nginx\",pid=19627,fd=5))
tcp   LISTEN 0      511            [::1]:18391         [::]:*    users:((\"nginx\",pid=19629,fd=6),(\"nginx\",pid=19628,fd=6),(\"nginx\",pid=19627,fd=6))
";

    /// `ss -ltnp` (no Netid column), the same capture.
    const SS_LTNP: &str = "\
State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess                                                                            
LISTEN 0      511        127.0.0.1:35863      0.0.0.0:*    users:((\"nginx\",pid=19533,fd=5),(\"nginx\",pid=19532,fd=5))                         
LISTEN 0      128          0.0.0.0:2024       0.0.0.0:*                                                                                      
LISTEN 0      511        127.0.0.1:18391      0.0.0.0:*    users:((\"nginx\",pid=19629,fd=5),(\"nginx\",pid=19628,fd=5),(\"nginx\",pid=19627,fd=5))
";

    /// `sockstat -4l` on FreeBSD 10, from a public blog post on installing
    /// GitLab on FreeBSD (stored public text found with the project's
    /// search tools, `root@gitlab:~ # sockstat -4l`): a unicorn master
    /// (36244) and its two workers on 127.0.0.1:8080, and PostgreSQL.
    const SOCKSTAT: &str = "\
USER     COMMAND    PID   FD PROTO  LOCAL ADDRESS         FOREIGN ADDRESS      
git      ruby       36249 13 tcp4   127.0.0.1:8080        *:*
git      ruby       36248 13 tcp4   127.0.0.1:8080        *:*
git      ruby       36244 13 tcp4   127.0.0.1:8080        *:*
pgsql    postgres   11726 4  tcp4   127.0.0.1:5432        *:*
";

    fn with_parents(mut l: Listening, pairs: &[(u32, u32)]) -> Listening {
        l.parents = pairs.iter().copied().collect();
        l
    }

    #[test]
    fn ss_gives_the_master_and_its_workers_and_the_master_is_the_server() {
        for text in [SS_LTUNP, SS_LTNP] {
            let l = parse_ss(text, 18391);
            assert_eq!(l.pids, vec![19627, 19628, 19629]);
            let l = with_parents(l, &[(19627, 1), (19628, 19627), (19629, 19627)]);
            assert_eq!(identify(&l, 18391), Ok(19627));
        }
        assert_eq!(parse_ss(SS_LTUNP, 18391).sockets, 2);
        assert_eq!(parse_ss(SS_LTUNP, 35863).pids, vec![19532, 19533]);
        // A socket shown with no process: hidden, not absent.
        let sshd = parse_ss(SS_LTUNP, 2024);
        assert_eq!(
            identify(&sshd, 2024),
            Err(Unidentified::Hidden { port: 2024 })
        );
        let none = parse_ss(SS_LTUNP, 9);
        assert_eq!(
            identify(&none, 9),
            Err(Unidentified::NoListener { port: 9 })
        );
    }

    #[test]
    fn sockstat_gives_the_listeners_on_the_port() {
        let l = parse_sockstat(SOCKSTAT, 8080);
        assert_eq!((l.sockets, l.pids.clone()), (3, vec![36244, 36248, 36249]));
        let l = with_parents(l, &[(36244, 1), (36248, 36244), (36249, 36244)]);
        assert_eq!(identify(&l, 8080), Ok(36244));
        assert_eq!(parse_sockstat(SOCKSTAT, 5432).pids, vec![11726]);
        assert_eq!(parse_sockstat(SOCKSTAT, 80).sockets, 0);
    }

    #[test]
    fn unrelated_listeners_are_several_servers_and_an_ancestor_two_levels_up_counts() {
        let l = Listening {
            sockets: 2,
            pids: vec![10, 20],
            parents: [(10, 1), (20, 1)].into_iter().collect(),
        };
        let err = identify(&l, 80).unwrap_err();
        assert_eq!(
            err,
            Unidentified::Several {
                port: 80,
                roots: vec![10, 20]
            }
        );
        assert!(
            err.advice().contains("`pid` or `pid_command`"),
            "{}",
            err.advice()
        );
        assert!(err.advice().contains("PIDs 10, 20"), "{}", err.advice());
        // 20's parent 15 does not listen, but 15's parent 10 does.
        let l = Listening {
            parents: [(10, 1), (15, 10), (20, 15)].into_iter().collect(),
            ..l
        };
        assert_eq!(identify(&l, 80), Ok(10));
    }

    #[test]
    fn the_report_reads_whichever_tool_the_host_has() {
        let ps = "    1     0\n19627     1\n19628 19627\n19629 19627\n";
        let text = format!("#ss\n{SS_LTUNP}#ps\n{ps}");
        let l = parse_report(&text, 18391).unwrap();
        assert_eq!(identify(&l, 18391), Ok(19627));
        let ps = "36244 1\n36248 36244\n36249 36244\n";
        let text = format!("#sockstat\n{SOCKSTAT}#ps\n{ps}");
        assert_eq!(
            identify(&parse_report(&text, 8080).unwrap(), 8080),
            Ok(36244)
        );
        let err = parse_report("#none\n#ps\n1 0\n", 80).unwrap_err();
        assert!(err.contains("neither `ss` nor `sockstat`"), "{err}");
    }

    #[test]
    fn the_urls_port_or_its_schemes() {
        assert_eq!(url_port("http://127.0.0.1:8080/"), Some(8080));
        assert_eq!(url_port("http://127.0.0.1/"), Some(80));
        assert_eq!(url_port("http://[::1]:81/x"), Some(81));
        assert_eq!(url_port("http://[::1]/x"), Some(80));
        assert_eq!(url_port("mysql://u:p@127.0.0.1:3307/db"), Some(3307));
        assert_eq!(url_port("postgresql://postgres@127.0.0.1/db"), Some(5432));
        assert_eq!(url_port("dns://127.0.0.1:5353?netns=x"), Some(5353));
        assert_eq!(
            url_port("host=127.0.0.1 port=5433 dbname=bench"),
            Some(5433)
        );
        assert_eq!(url_port("host=127.0.0.1 dbname=bench"), Some(5432));
        assert_eq!(url_port("gopher://x/"), None);
        assert_eq!(url_port("dbname=bench"), None);
    }

    #[test]
    fn this_process_listening_here_is_found_as_the_server() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(identify(&local(port), port), Ok(std::process::id()));
        drop(l);
        assert_eq!(
            identify(&local(port), port),
            Err(Unidentified::NoListener { port })
        );
    }
}
