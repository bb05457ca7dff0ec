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
