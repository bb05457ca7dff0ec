//! sysbench's random values: the default `special` distribution for ids
//! and `k`, and the `c` and `pad` digit templates. The dataset fill and the
//! load driver's scripts draw from the same functions, as in sysbench.

use rand::rngs::SmallRng;
use rand::Rng;

/// `--rand-spec-iter`, `--rand-spec-pct`, `--rand-spec-res` defaults.
const SPEC_ITER: u32 = 12;
const SPEC_PCT: f64 = 1.0;
const SPEC_RES: f64 = 75.0;

/// sysbench 1.0's default `special` distribution on [a, b]: with
/// probability 1 - 75% a bell curve (mean of 12 uniforms) over the whole
/// range; otherwise uniform over the middle 1% of it (`sb_rand_special`).
pub fn special(rng: &mut SmallRng, a: u32, b: u32) -> u32 {
    if b <= a {
        return a;
    }
    let t = f64::from(b - a);
    let rnd: f64 = rng.gen();
    if rnd * t * (100.0 / (100.0 - SPEC_RES)) < t {
        let sum: f64 = (0..SPEC_ITER).map(|_| rng.gen::<f64>()).sum();
        return a + (sum * t / f64::from(SPEC_ITER)) as u32;
    }
    let d = t * SPEC_PCT / 100.0;
    let res = rnd * (d + 1.0) + t / 2.0 - t * SPEC_PCT / 200.0;
    a + res as u32
}

/// sysbench's `c` template: ten groups of 11 digits joined by `-`.
pub fn c_value(rng: &mut SmallRng) -> Vec<u8> {
    digits_template(rng, 10)
}

/// sysbench's `pad` template: five groups of 11 digits joined by `-`.
pub fn pad_value(rng: &mut SmallRng) -> Vec<u8> {
    digits_template(rng, 5)
}

fn digits_template(rng: &mut SmallRng, groups: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            out.push(b'-');
        }
        out.extend((0..11).map(|_| b'0' + rng.gen_range(0..10u8)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn special_distribution_is_hot_in_the_middle_and_stays_in_range() {
        let mut rng = SmallRng::seed_from_u64(7);
        let n = 200_000;
        let (mut lo, mut hi, mut middle) = (u32::MAX, 0, 0);
        for _ in 0..n {
            let v = special(&mut rng, 1, 10_000);
            lo = lo.min(v);
            hi = hi.max(v);
            // sysbench's hot band: the middle 1% (ids 4951..5051).
            if (4950..=5051).contains(&v) {
                middle += 1;
            }
        }
        assert!(lo >= 1 && hi <= 10_000, "{lo}..{hi}");
        let share = f64::from(middle) / f64::from(n);
        assert!((0.74..0.80).contains(&share), "{share}");
    }

    #[test]
    fn strings_follow_the_templates() {
        let mut rng = SmallRng::seed_from_u64(1);
        let c = c_value(&mut rng);
        assert_eq!(c.len(), 119);
        assert_eq!(c.iter().filter(|&&b| b == b'-').count(), 9);
        assert_eq!(pad_value(&mut rng).len(), 59);
    }
}
