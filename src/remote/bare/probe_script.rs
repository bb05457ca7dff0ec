//! The interval probe's POSIX `sh`: one long-lived shell on the server
//! host prints a sample for every line it reads (the coordinator sends
//! one each probe interval, and one at the window's end): a `#sample`
//! line, sections (`#<name>` then the command's output) and `#end`. One
//! table of commands per OS ([`commands`]); a command that fails prints
//! nothing, and its figure is unavailable ([`super::parse`]).
//!
//! Its `read` is its watchdog: when stdin closes (the coordinator or its
//! ssh session ended) the shell exits, and nothing outlives the session.

use crate::server::bare::HostOs;

/// One section of a sample: its name and the command that prints it.
pub type Section = (&'static str, &'static str);

/// Linux: `/proc`, as the agent's probe reads it (the server's tree's
/// lines come from the `tree` function).
const LINUX: &[Section] = &[
    ("stat", "cat /proc/stat"),
    ("mhz", "grep -i '^cpu MHz' /proc/cpuinfo"),
    ("netstat", "cat /proc/net/netstat /proc/net/snmp"),
    ("vmstat", "grep -E '^(pswpin|pswpout) ' /proc/vmstat"),
];

/// FreeBSD: per-CPU ticks, frequency per CPU, the TCP and UDP drop
/// counters, pages swapped, and the processes. Each command's output is
/// parsed as real captures print it (`tests/fixtures/bsd/`, each naming
/// its source). `ps` keeps to the POSIX columns: no captured FreeBSD
/// output of `nvcsw`, `nivcsw` or `majflt` was found, so context
/// switches and major faults are unavailable there.
const FREEBSD: &[Section] = &[
    ("cp_times", "sysctl kern.cp_times"),
    ("freq", "sysctl dev.cpu | grep '\\.freq: '"),
    (
        "swap",
        "sysctl vm.stats.vm.v_swappgsin vm.stats.vm.v_swappgsout",
    ),
    ("tcp", "netstat -s -p tcp"),
    ("udp", "netstat -s -p udp"),
    ("ps", POSIX_PS),
];

/// DragonFly, NetBSD and any other OS: only POSIX `ps`. No captured
/// output of their CPU-tick sysctls (DragonFly's `kern.cputime` is a
/// binary struct; NetBSD's `kern.cp_time` prints named fields) or of
/// their `netstat -s` was found, so the CPU split, frequency and the
/// drop counters are unavailable there rather than guessed.
const PORTABLE: &[Section] = &[("ps", POSIX_PS)];

/// POSIX `ps`: the columns [`super::parse::bsd_ps`] reads.
const POSIX_PS: &str = "ps -A -o pid= -o ppid= -o time= -o rss= -o vsz= -o comm=";

/// The OS's table of commands.
pub fn commands(os: HostOs) -> &'static [Section] {
    match os {
        HostOs::Linux => LINUX,
        HostOs::FreeBsd => FREEBSD,
        HostOs::DragonFly | HostOs::NetBsd | HostOs::Other => PORTABLE,
    }
}

/// Linux: the server tree's processes from `/proc`, one line each:
/// voluntary and involuntary context switches summed over its threads,
/// then its `/proc/PID/stat`.
const LINUX_TREE: &str = r##"
    if [ -n "$root" ]; then
        echo "#tree"
        for p in $(tree "$root"); do
            s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
            c=$(awk '/^voluntary_ctxt_switches/ { v += $2 } /^nonvoluntary_ctxt_switches/ { n += $2 } END { print v + 0, n + 0 }' "/proc/$p/task/"*/status 2>/dev/null)
            echo "$c $s"
        done
    fi
"##;

/// The descendants of a PID (and itself), from POSIX `ps`.
pub const TREE_FUNCTION: &str = r##"
tree() {
    ps -A -o pid= -o ppid= | awk -v r="$1" '
        { parent[$1] = $2 }
        END {
            t[r] = 1; more = 1
            while (more) {
                more = 0
                for (p in parent) if (!(p in t) && (parent[p] in t)) { t[p] = 1; more = 1 }
            }
            for (p in t) print p
        }'
}
"##;

/// The probe's script for `os`, following the tree of `root` (on Linux;
/// `ps` lists every process on the others, and the parser follows the
/// tree).
pub fn probe_script(os: HostOs, root: Option<u32>) -> String {
    let mut s = String::from(
        "#!/bin/sh\n# scalelab: the interval probe of a host without an agent\nrm -f \"$0\"\n",
    );
    if os == HostOs::Linux {
        s.push_str(&format!(
            "root='{}'\n",
            root.map(|r| r.to_string()).unwrap_or_default()
        ));
        s.push_str(TREE_FUNCTION);
    }
    s.push_str("sample() {\n    echo \"#sample\"\n    echo \"#os\"\n    uname -s\n");
    if os == HostOs::Linux {
        s.push_str("    echo \"#ticks\"\n    getconf CLK_TCK\n    echo \"#pagesize\"\n    getconf PAGESIZE\n");
    }
    for (name, command) in commands(os) {
        s.push_str(&format!(
            "    echo \"#{name}\"\n    {command} 2>/dev/null\n"
        ));
    }
    if os == HostOs::Linux {
        s.push_str(LINUX_TREE);
    }
    s.push_str("    echo \"#end\"\n}\n");
    s.push_str("while IFS= read -r _; do\n    sample\ndone\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::bare::script::shells::shellcheck;

    const ALL: [HostOs; 5] = [
        HostOs::Linux,
        HostOs::FreeBsd,
        HostOs::DragonFly,
        HostOs::NetBsd,
        HostOs::Other,
    ];

    #[test]
    fn every_os_script_passes_shellcheck() {
        let tmp = tempfile::tempdir().unwrap();
        for os in ALL {
            let s = probe_script(os, Some(1));
            let said = shellcheck(&s, tmp.path());
            assert!(said.is_empty(), "{os:?}: {said}\n{s}");
        }
    }

    #[test]
    fn every_command_line_passes_shellcheck_on_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        for os in ALL {
            for (name, command) in commands(os) {
                let said = shellcheck(&format!("#!/bin/sh\n{command}\n"), tmp.path());
                assert!(said.is_empty(), "{os:?} {name}: {said}");
            }
        }
    }
}
