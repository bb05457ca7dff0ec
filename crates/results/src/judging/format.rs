//! Number, time and text formatting shared by every report format.

/// A rate the way wrk prints one: `950.0`, `82.12k`, `1.23M`.
pub fn rate(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "n/a".into()
    } else if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.2}k", v / 1e3)
    } else {
        format!("{v:.1}")
    }
}

/// A short axis-tick form of a number: `0`, `250`, `2.5k`, `40k`, `1.2M`.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", trim_zeros(&format!("{scaled:.3}")))
}

/// A sweep value on an x axis: whole numbers in full (`1000`, `4000`, as
/// concurrency is written), anything else as [`tick`].
pub fn axis_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.0}")
    } else {
        tick(v)
    }
}

/// A latency given in microseconds: `812µs`, `3.21ms`, `1.20s`.
pub fn latency_us(us: f64) -> String {
    if !us.is_finite() {
        "n/a".into()
    } else if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// A ratio as a signed change: 1.12 -> `+12.0%`, 0.9 -> `-10.0%`.
pub fn change(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// A ratio as a whole percentage: 1.28 -> `128%`.
pub fn percent(ratio: f64) -> String {
    format!("{:.0}%", ratio * 100.0)
}

/// A fraction as a percentage with at most one decimal: `30%`, `2.5%`.
pub fn percent_fine(ratio: f64) -> String {
    let p = (ratio * 1000.0).round() / 10.0;
    if p.fract() == 0.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// A p-value with three decimals, or `p<0.001`.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

/// `sig` significant digits, switching to exponent form for tiny values:
/// 0.0123, 3.1e-5, 1234.
pub fn sig(v: f64, sig: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { "n/a".into() };
    }
    let mag = v.abs().log10().floor() as i32;
    if mag < -3 {
        return format!("{:.*e}", sig.saturating_sub(1), v);
    }
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// Bytes in binary units: `512B`, `1.50MiB`.
pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b < K {
        format!("{b:.0}B")
    } else if b < K * K {
        format!("{:.1}KiB", b / K)
    } else if b < K * K * K {
        format!("{:.1}MiB", b / K / K)
    } else {
        format!("{:.2}GiB", b / K / K / K)
    }
}

/// Unix seconds as `2024-05-01 12:00:00 UTC`.
pub fn date(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// `text` with every control character escaped (`\u{1b}`, `\n`), so a
/// label cannot move the cursor, recolour or rewrite a terminal.
pub fn terminal_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The run's label, revision (`run --commit`) and system labels made
/// [`terminal_safe`], for the terminal's text (JSON escapes them its own
/// way). `run` refuses new ones that hold a control character; a store
/// written before that, or by hand, is shown escaped.
pub fn terminal_safe_names(data: &mut crate::store::RunData) {
    data.run.label = terminal_safe(&data.run.label);
    data.run.revision = data.run.revision.as_deref().map(terminal_safe);
    for t in &mut data.trials {
        t.system = terminal_safe(&t.system);
    }
}

#[cfg(test)]
mod terminal_safe_tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        // Issue 36: escape sequences in labels reached the terminal raw in
        // `compare` and `history`.
        assert_eq!(
            terminal_safe("x\u{1b}[2J\u{1b}]0;pwned\u{7}y\nz\tö"),
            "x\\u{1b}[2J\\u{1b}]0;pwned\\u{7}y\\nz\\tö"
        );
        let mut data = crate::judging::test_support::run_data(&["a\u{1b}[31m"]);
        data.run.label = "\u{9b}2J".into();
        // Issue 46: the revision reached `compare`'s table raw.
        data.run.revision = Some("abc\n\u{1b}[2Jdef".into());
        terminal_safe_names(&mut data);
        assert!(!data.run.label.chars().any(char::is_control));
        assert_eq!(data.run.revision.as_deref(), Some("abc\\n\\u{1b}[2Jdef"));
        assert!(data.trials.iter().all(|t| t.system == "a\\u{1b}[31m"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_like_wrk() {
        assert_eq!(rate(63936.47), "63.94k");
        assert_eq!(rate(1_234_567.0), "1.23M");
        assert_eq!(rate(950.0), "950.0");
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2500.0), "2.5k");
        assert_eq!(tick(40_000.0), "40k");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(1_200_000.0), "1.2M");
        assert_eq!(axis_value(4000.0), "4000");
        assert_eq!(axis_value(0.5), "0.5");
    }

    #[test]
    fn latencies_pick_a_unit() {
        assert_eq!(latency_us(812.0), "812µs");
        assert_eq!(latency_us(3210.0), "3.21ms");
        assert_eq!(latency_us(1_200_000.0), "1.20s");
    }

    #[test]
    fn changes_and_p_values() {
        assert_eq!(change(1.12), "+12.0%");
        assert_eq!(change(0.9), "-10.0%");
        assert_eq!(percent(1.284), "128%");
        assert_eq!(p_value(0.0021), "p=0.002");
        assert_eq!(p_value(0.00001), "p<0.001");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.012345, 3), "0.0123");
        assert_eq!(sig(1234.5, 3), "1234");
        assert_eq!(sig(0.000031, 2), "3.1e-5");
        assert_eq!(sig(0.0, 3), "0");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(date(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(date(1_714_564_800), "2024-05-01 12:00:00 UTC");
        assert_eq!(date(951_782_400), "2000-02-29 00:00:00 UTC");
    }
}
