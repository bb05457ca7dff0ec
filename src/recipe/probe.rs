//! `[probe]`: the energy source (`energy`) and the power command
//! (`energy_command`); see `docs/experiment-format.md`.

use super::raw::RawProbe;
use crate::probe::energy::{EnergyChoice, EnergyConfig};

/// A field's name, what is wrong with it and the fix.
pub(crate) type FieldError = (&'static str, String, String);

/// `[probe] syscalls`: `off` (default) or `exact`.
pub(crate) fn syscalls(raw: &RawProbe) -> Result<crate::probe::work::SyscallMode, FieldError> {
    use crate::probe::work::SyscallMode;
    match raw.syscalls.as_deref() {
        None | Some("off") => Ok(SyscallMode::Off),
        Some("exact") => Ok(SyscallMode::Exact),
        Some(other) => Err((
            "syscalls",
            format!("unknown way to count system calls `{other}`"),
            "use \"exact\" (every call of the window, at a cost: 180 ns a counted call and 75 ns every other call on the machine here, docs/probe-metrics.md) or \"off\" (the default)".into(),
        )),
    }
}

/// Checks `[probe]`.
pub(crate) fn energy(raw: &RawProbe) -> Result<EnergyConfig, FieldError> {
    let words = || {
        EnergyChoice::ALL
            .iter()
            .map(|(_, w)| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let choice = match raw.energy.as_deref() {
        None => EnergyChoice::Auto,
        Some(word) => EnergyChoice::parse(word).ok_or_else(|| {
            (
                "energy",
                format!("unknown energy source `{word}`"),
                format!("use one of {}", words()),
            )
        })?,
    };
    let command = raw.energy_command.clone();
    if command.as_deref().is_some_and(|c| c.trim().is_empty()) {
        return Err((
            "energy_command",
            "must not be empty".into(),
            "energy_command = \"ipmitool dcmi power reading\" (a command that prints watts)".into(),
        ));
    }
    match (choice, &command) {
        (EnergyChoice::Command, None) => Err((
            "energy",
            "energy = \"command\" needs energy_command, the command that prints watts".into(),
            "add energy_command = \"ipmitool dcmi power reading\"".into(),
        )),
        (EnergyChoice::Rapl | EnergyChoice::Hwmon | EnergyChoice::Off, Some(_)) => Err((
            "energy_command",
            format!(
                "energy_command is only run with energy = \"command\" or \"auto\", not \"{}\"",
                raw.energy.as_deref().unwrap_or_default()
            ),
            "set energy = \"command\", or remove energy_command".into(),
        )),
        _ => Ok(EnergyConfig { choice, command }),
    }
}
