//! The ranges that recipes (the spec's sweep values, the kinds' settings)
//! and the `scalelab load` flags share, so both accept the same values and
//! say the same thing about the rest: the error names the field or flag
//! and the allowed range.

use std::time::Duration;

/// A closed range of whole numbers a setting or flag may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The recipe key (the flag's name differs only in `-`/`_`).
    pub name: &'static str,
    /// The least value.
    pub min: u32,
    /// The greatest value.
    pub max: u32,
    /// Why the bound, appended to the error (may be empty).
    pub why: &'static str,
}

impl Range {
    const fn new(name: &'static str, min: u32, max: u32, why: &'static str) -> Range {
        Range {
            name,
            min,
            max,
            why,
        }
    }

    /// `value` when it is in range; otherwise the sentence that names the
    /// field and the range.
    pub fn check(&self, value: u64) -> Result<u32, String> {
        if (u64::from(self.min)..=u64::from(self.max)).contains(&value) {
            return Ok(value as u32);
        }
        Err(format!(
            "`{}` must be {} to {}{}; got {value}",
            self.name, self.min, self.max, self.why
        ))
    }

    /// A clap value parser for a flag with this range.
    pub fn parser(self) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
        move |text: &str| {
            let value: u64 = text
                .trim()
                .parse()
                .map_err(|_| format!("`{text}` is not a whole number"))?;
            self.check(value)
        }
    }
}

/// Concurrent connections (clients, sockets) of one load run: far above
/// the open-files limits of this kind of machine, but never an allocation
/// that fails.
pub const CONNECTIONS: Range = Range::new("connections", 1, 1_000_000, "");

/// Load-generator threads.
pub const THREADS: Range = Range::new("threads", 1, 1024, "");

/// pgbench's scale (about 15 MB of data per unit, so 1.5 TB at the top).
pub const PG_SCALE: Range = Range::new(
    "scale",
    1,
    100_000,
    " (pgbench's dataset is about 15 MB per unit)",
);

/// sysbench's `--tables`.
pub const MYSQL_TABLES: Range = Range::new(
    "tables",
    1,
    10_000,
    " (sysbench's sbtest1..sbtestN, each created and filled in turn)",
);

/// sysbench's `--table-size`, rows per table (about 200 bytes a row).
pub const MYSQL_TABLE_SIZE: Range = Range::new(
    "table_size",
    1,
    100_000_000,
    " rows (about 20 GB per table at the top)",
);

/// A server's port.
pub const PORT: Range = Range::new("port", 1, 65_535, "");

/// `Ok` when a request timeout is a duration a request can wait:
/// greater than zero and at most [`crate::units::MAX_DURATION`].
pub fn check_timeout(timeout: Duration) -> Result<(), String> {
    if timeout.is_zero() {
        return Err("`timeout` must be greater than zero (every request would time out)".into());
    }
    if timeout > crate::units::MAX_DURATION {
        return Err("`timeout` must be at most 720h (30 days)".into());
    }
    Ok(())
}

/// A clap value parser for `--timeout`: a duration, checked by
/// [`check_timeout`].
pub fn timeout_flag(text: &str) -> Result<Duration, String> {
    let d = crate::units::parse_duration(text).map_err(|e| e.to_string())?;
    check_timeout(d)?;
    Ok(d)
}

/// A clap value parser for `-n` (stop after N requests): at least 1.
pub fn request_count_flag(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1 (0 requests would measure nothing)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_the_field_and_the_bounds() {
        assert_eq!(PG_SCALE.check(100_000), Ok(100_000));
        let e = PG_SCALE.check(1_000_000_000).unwrap_err();
        assert!(e.starts_with("`scale` must be 1 to 100000"), "{e}");
        assert!(THREADS.parser()("0")
            .unwrap_err()
            .contains("`threads` must be 1 to 1024"));
        assert!(PORT.parser()("0").is_err() && PORT.parser()("53") == Ok(53));
        assert!(timeout_flag("0s")
            .unwrap_err()
            .contains("greater than zero"));
        assert_eq!(timeout_flag("2s"), Ok(Duration::from_secs(2)));
        assert!(request_count_flag("0").is_err() && request_count_flag("5") == Ok(5));
    }
}
