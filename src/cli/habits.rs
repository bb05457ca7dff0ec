//! The peers' habits that `scalelab load` cannot take: a flag a wrk,
//! pgbench, sysbench or dnsperf user types out of habit, and what to write
//! here instead. A parse error on such a flag names the scalelab form; every
//! other parse error loses clap's tip "to pass '-x' as a value, use '-- -x'",
//! which is never what a user of a peer tool meant.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

/// One peer flag that has no scalelab equivalent of the same spelling.
#[derive(Clone, Copy, Debug)]
pub struct Habit {
    /// The flag's spellings (`-s`, `--script`).
    pub flags: &'static [&'static str],
    /// The tool whose flag it is (`wrk`).
    pub tool: &'static str,
    /// What it means there and what to write here.
    pub instead: &'static str,
}

impl Habit {
    fn message(&self, typed: &str) -> String {
        format!("{typed} is {}'s: {}", self.tool, self.instead)
    }
}

/// The error clap gave for `args`, with the scalelab form of a peer's flag
/// (`habits` is the load kind's table, when `args` ran `scalelab load KIND`)
/// and without the "use '-- X'" tip.
pub fn explain(mut err: clap::Error, habits: &[Habit]) -> clap::Error {
    if let Some(typed) = offending_flag(&err) {
        let flag = typed.split('=').next().unwrap_or(&typed);
        if let Some(h) = habits.iter().find(|h| h.flags.contains(&flag)) {
            return clap::Error::raw(ErrorKind::UnknownArgument, h.message(flag) + "\n");
        }
    }
    drop_trailing_arg_tip(&mut err);
    err
}

/// The flag an unknown-argument error is about.
fn offending_flag(err: &clap::Error) -> Option<String> {
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    match err.get(ContextKind::InvalidArg)? {
        ContextValue::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Removes clap's "to pass '-x' as a value, use '-- -x'" suggestion.
fn drop_trailing_arg_tip(err: &mut clap::Error) {
    let Some(ContextValue::StyledStrs(tips)) = err.remove(ContextKind::Suggested) else {
        return;
    };
    let kept: Vec<_> = tips
        .into_iter()
        .filter(|t| !t.to_string().contains("as a value, use '-- "))
        .collect();
    if !kept.is_empty() {
        err.insert(ContextKind::Suggested, ContextValue::StyledStrs(kept));
    }
}

/// The load kind `args` names (`scalelab [--store X] load KIND ...`).
pub fn load_kind(args: &[OsString]) -> Option<String> {
    let mut words = args.iter().skip(1).filter_map(|a| a.to_str());
    words.find(|w| *w == "load")?;
    words.next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    //! Each habit typed as the peer's users type it: the peer's meaning,
    //! or an error that names the scalelab form, and never "use '-- X'".

    use super::super::{Cli, Command, LoadCommand};
    use clap::Parser;
    use std::time::Duration;

    fn parsed(line: &str) -> Result<Cli, String> {
        let args: Vec<std::ffi::OsString> = std::iter::once("scalelab")
            .chain(line.split_whitespace())
            .map(Into::into)
            .collect();
        Cli::try_parse_from(&args).map_err(|e| Cli::explain(e, &args).to_string())
    }

    /// The arguments of `load KIND` that `line` parses into.
    fn load(line: &str) -> LoadCommand {
        match parsed(line) {
            Ok(Cli {
                command: Command::Load(load),
                ..
            }) => load,
            other => panic!("{line}: {other:?}"),
        }
    }

    fn mysql_args(line: &str) -> super::super::load_mysql::LoadMysqlArgs {
        let LoadCommand::Mysql(a) = load(line) else {
            panic!("{line}: not mysql");
        };
        a
    }

    fn dns_args(line: &str) -> super::super::load_dns::LoadDnsArgs {
        let LoadCommand::Dns(a) = load(line) else {
            panic!("{line}: not dns");
        };
        a
    }

    fn pg_args(line: &str) -> super::super::load_pg::LoadPgArgs {
        let LoadCommand::Pg(a) = load(line) else {
            panic!("{line}: not pg");
        };
        a
    }

    fn refused(line: &str) -> String {
        let e = parsed(line)
            .err()
            .unwrap_or_else(|| panic!("accepted: {line}"));
        assert!(!e.contains("use '-- "), "{line}: {e}");
        e
    }

    #[test]
    fn sysbench_as_typed_names_the_server_test_and_command() {
        let line = "load mysql oltp_read_only --mysql-host=127.0.0.1 --mysql-port=3307 \
                    --mysql-user=bench --mysql-password=p@ss/w --mysql-db=db1 --threads=8 \
                    --time=5 --report-interval=1 run";
        let my = mysql_args(line);
        let call = my.call().unwrap();
        assert_eq!(call.script, scalelab::load::mysql::ScriptKind::OltpReadOnly);
        assert!(!call.init);
        let url = scalelab::wire::mysql::MysqlUrl::parse(&call.url).unwrap();
        assert_eq!(
            (
                url.user.as_str(),
                url.password.as_str(),
                url.database.as_str()
            ),
            ("bench", "p@ss/w", "db1")
        );
        assert_eq!(url.addr.to_string(), "127.0.0.1:3307");
        assert_eq!(
            (my.shape.connections, my.shape.duration),
            (8, Duration::from_secs(5))
        );
        assert_eq!(my.report_interval, Some(1));
        // The test as a path to sysbench's script, and `prepare`; sysbench's
        // defaults for the rest.
        let line = "load mysql /usr/share/sysbench/oltp_point_select.lua --db-driver=mysql \
                    --tables=2 prepare";
        let my = mysql_args(line);
        let call = my.call().unwrap();
        assert!(call.init);
        assert_eq!(call.url, "mysql://sbtest@localhost:3306/sbtest");
        assert_eq!(call.script.name(), "oltp_point_select");
        // A URL and the flags say the server twice; a word that is none of
        // them is named.
        let my = mysql_args("load mysql mysql://u@127.0.0.1:9/d --mysql-port=3306 run");
        let e = my.call().unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
        let my = mysql_args("load mysql oltp_read_only cleanup");
        let e = my.call().unwrap_err().to_string();
        assert!(e.starts_with("`cleanup` is neither"), "{e}");
        let e = refused("load mysql oltp_read_only --mysql-socket=/tmp/m.sock run");
        assert!(e.contains("--mysql-host 127.0.0.1"), "{e}");
    }

    #[test]
    fn dnsperf_as_typed_takes_s_p_l_and_names_queries_for_d() {
        let line = "load dns -s 127.0.0.1 -p 5353 --queries q.txt -l 5 -Q 1000";
        let dns = dns_args(line);
        assert_eq!(dns.server(), "127.0.0.1:5353");
        assert_eq!(
            (dns.shape.duration, dns.shape.rate),
            (Duration::from_secs(5), Some(1000.0))
        );
        let dns = dns_args("load dns -s ::1 --queries q.txt");
        assert_eq!(dns.server(), "[::1]:53");
        let e = refused("load dns -s 127.0.0.1 -p 53 -d queries.txt -l 5");
        assert!(e.contains("dnsperf's -d FILE is --queries FILE"), "{e}");
        let e = refused("load dns -s 127.0.0.1 --queries q -T 4");
        assert!(e.contains("-t N (--threads N)"), "{e}");
        // resperf's -r and -m.
        let line = "load dns 127.0.0.1:53 --queries q -r 60 -m 50000";
        let dns = dns_args(line);
        assert_eq!(
            (dns.ramp, dns.max_rate),
            (Some(Duration::from_secs(60)), Some(50000.0))
        );
    }

    #[test]
    fn pgbench_as_typed_takes_its_long_names_and_new_flags() {
        let line = "load pg --client=4 --jobs=2 --time=3 --select-only -P 1 -L 2.5 -l \
                    -h 127.0.0.1 -p 5433 bench";
        let pg = pg_args(line);
        let s = &pg.shape;
        assert_eq!(
            (s.connections, s.threads, s.duration),
            (4, Some(2), Duration::from_secs(3))
        );
        assert!(pg.select_only && pg.log);
        assert_eq!(pg.latency_limit, Some(Duration::from_micros(2500)));
        assert_eq!(pg.progress, Some(1));
        // pgbench's default protocol is simple; so is ours on the command line.
        assert_eq!(pg.protocol, scalelab::load::pg::QueryMode::Simple);
        for line in [
            "load pg -b select-only@3 bench",
            "load pg --builtin=select-only bench",
        ] {
            let pg = pg_args(line);
            let kinds: Vec<_> = pg.script.iter().map(|s| s.kind).collect();
            assert_eq!(
                kinds,
                [scalelab::load::pg::ScriptKind::SelectOnly],
                "{line}"
            );
        }
        let pg = pg_args("load pg -b select-only@1 -b tpcb-like@9 bench");
        let mix: Vec<(String, u32)> = (pg.mix().unwrap().into_iter())
            .map(|(s, w)| (s.name, w))
            .collect();
        assert_eq!(mix, [("select-only".into(), 1), ("tpcb-like".into(), 9)]);
        let e = refused("load pg -b select-only@x bench");
        assert!(e.contains("NAME@WEIGHT"), "{e}");
        let e = refused("load pg -t 1000 bench");
        assert!(e.contains("-T SEC"), "{e}");
        let e = refused("load pg --bogus bench");
        assert!(e.contains("'--bogus'"), "{e}");
    }

    #[test]
    fn wrk_as_typed_hears_that_lua_is_not_supported() {
        let e = refused("load http -t2 -c10 -d5s -s post.lua http://127.0.0.1:8080/");
        assert!(
            e.contains("Lua scripts are not supported; use -m METHOD"),
            "{e}"
        );
        let e = refused("load http --script=post.lua http://127.0.0.1:8080/");
        assert!(e.contains("Lua scripts are not supported"), "{e}");
    }

    /// Issue 46: wrk2's `-L` was "unexpected argument"; `-U` is named.
    #[test]
    fn wrk2_as_typed_takes_l_and_hears_about_u() {
        let http = |line: &str| match load(line) {
            LoadCommand::Http(a) => a,
            _ => panic!("{line}: not http"),
        };
        let a = http("load http -t2 -c10 -d5s -R 2000 -L http://127.0.0.1:8080/");
        assert!(a.latency);
        assert_eq!(a.shape.rate, Some(2000.0));
        let e = refused("load http -R 2000 -U http://127.0.0.1:8080/");
        assert!(e.contains("-U is wrk2's"), "{e}");
        assert!(e.contains("scheduled time"), "{e}");
    }

    /// Issue 46: `-T -10` said "unexpected argument '-1'"; a negative
    /// duration is named as one, for every spelling of `--duration`.
    #[test]
    fn a_negative_duration_is_named() {
        for line in [
            "load pg -T -10 bench",
            "load pg --time=-10 bench",
            "load http -d -5s http://127.0.0.1:8080/",
        ] {
            let e = refused(line);
            assert!(e.contains("takes a positive duration"), "{line}: {e}");
            assert!(!e.contains("unexpected argument"), "{line}: {e}");
        }
        assert_eq!(
            pg_args("load pg -T 10 bench").shape.duration,
            Duration::from_secs(10)
        );
    }
}
