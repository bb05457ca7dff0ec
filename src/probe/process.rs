//! Per-process files: `/proc/<pid>/stat`, the context-switch lines of
//! `/proc/<pid>/status`, and `/proc/<pid>/task/<tid>/schedstat`.

/// The fields of `/proc/<pid>/stat` the probe uses (proc(5) numbering).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PidStat {
    pub pid: u32,
    pub comm: String,
    /// `R`, `S`, `D`, `Z`, ...
    pub state: char,
    pub ppid: u32,
    /// Clock ticks (USER_HZ) in user and system mode, all threads (14, 15).
    pub utime: u64,
    pub stime: u64,
    /// Ticks of waited-for children, accumulated when they are reaped (16, 17).
    pub cutime: u64,
    pub cstime: u64,
    /// Major page faults (a page read from storage), own and of reaped children (12, 13).
    pub majflt: u64,
    pub cmajflt: u64,
    pub num_threads: u32,
    /// Start time in ticks after boot (22).
    pub starttime: u64,
    pub vsize_bytes: u64,
    pub rss_pages: u64,
}

impl PidStat {
    pub fn is_zombie(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
    pub fn own_ticks(&self) -> u64 {
        self.utime + self.stime
    }
    /// Own ticks plus those of reaped children.
    pub fn ticks_with_children(&self) -> u64 {
        self.own_ticks() + self.cutime + self.cstime
    }
}

/// Parses one stat line. The comm may contain spaces and parentheses, so
/// it runs from the first `(` to the last `)`.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    // f[0] is field 3 (state); field n is f[n - 3].
    let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    // cutime and cstime are signed in the kernel's format.
    let signed = |n: usize| {
        f.get(n - 3)
            .and_then(|v| v.parse::<i64>().ok())
            .map(|v| v.max(0) as u64)
    };
    Some(PidStat {
        pid,
        comm,
        state: f.first()?.chars().next()?,
        ppid: num(4)? as u32,
        utime: num(14)?,
        stime: num(15)?,
        cutime: signed(16)?,
        cstime: signed(17)?,
        majflt: num(12)?,
        cmajflt: num(13)?,
        num_threads: num(20)? as u32,
        starttime: num(22)?,
        vsize_bytes: num(23)?,
        rss_pages: signed(24)?,
    })
}

/// `(voluntary, involuntary)` context switches from a status file. The
/// kernel reports them for that one task (thread), not the whole process.
pub fn parse_ctx_switches(status: &str) -> (u64, u64) {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        field("voluntary_ctxt_switches:"),
        field("nonvoluntary_ctxt_switches:"),
    )
}

/// `(ns on CPU, ns runnable but waiting for a CPU)` from a schedstat file.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_hostile_comm() {
        // A comm with spaces and a parenthesis; captured layout from 6.x.
        let line = "4242 (my (odd) proc) S 4200 4242 4200 0 -1 4194560 600 0 5 2 \
                    150 25 7 3 20 0 3 0 62453 3133440 401 18446744073709551615 1 1 0 0 0 0 0 \
                    0 0 0 0 0 17 1 0 0 0 0 0\n";
        let s = parse_pid_stat(line).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "my (odd) proc");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 4200);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (150, 25, 7, 3));
        assert_eq!(s.num_threads, 3);
        assert_eq!((s.majflt, s.cmajflt), (5, 2));
        assert_eq!(s.starttime, 62453);
        assert_eq!(s.vsize_bytes, 3133440);
        assert_eq!(s.rss_pages, 401);
        assert_eq!(s.ticks_with_children(), 185);
        assert!(!s.is_zombie());
    }

    #[test]
    fn truncated_stat_is_none() {
        assert_eq!(parse_pid_stat("12 (x) S 1 2 3"), None);
        assert_eq!(parse_pid_stat(""), None);
    }

    #[test]
    fn status_context_switches() {
        let status = "Name:\tnginx\nThreads:\t1\nvoluntary_ctxt_switches:\t1234\n\
                      nonvoluntary_ctxt_switches:\t56\n";
        assert_eq!(parse_ctx_switches(status), (1234, 56));
        assert_eq!(parse_ctx_switches("Name:\tx\n"), (0, 0));
    }

    #[test]
    fn schedstat_fields() {
        assert_eq!(parse_schedstat("1478272 90210 1\n"), Some((1478272, 90210)));
        assert_eq!(parse_schedstat("x"), None);
    }
}
