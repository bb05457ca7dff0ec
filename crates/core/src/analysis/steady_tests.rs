//! Tests of the steadiness classes, on real bucket series: completed
//! requests per 100 ms from `scalelab load http -c 16 -d 3s --json`
//! (`timeline_100ms`, its partial last bucket left out) against nginx
//! 1.22 on loopback, debug build, load average 4.0 on 2 CPUs; the other
//! classes are those series changed as the class says.
use super::*;

/// nginx with `limit_req rate=2000r/s burst=100000`: a fixed speed.
const LIMITED: [f64; 30] = [
    190.0, 208.0, 202.0, 198.0, 202.0, 198.0, 200.0, 202.0, 198.0, 200.0, 200.0, 202.0, 198.0,
    200.0, 202.0, 198.0, 198.0, 200.0, 202.0, 200.0, 200.0, 198.0, 202.0, 198.0, 200.0, 202.0,
    198.0, 202.0, 198.0, 202.0,
];

/// A free nginx after a 1 s warm-up run: the load generator's new
/// connections are slow for 300 ms, then flat with the machine's dips.
const FREE: [f64; 30] = [
    3495.0, 4870.0, 5383.0, 6024.0, 6172.0, 6082.0, 6037.0, 6047.0, 6129.0, 6029.0, 5992.0, 5836.0,
    5691.0, 5393.0, 5979.0, 5997.0, 6136.0, 6148.0, 5645.0, 6127.0, 6278.0, 6092.0, 5755.0, 6122.0,
    6067.0, 6086.0, 6020.0, 6017.0, 6107.0, 5982.0,
];

const FLOOR: f64 = 0.02;

fn scaled(series: &[f64], by: impl Fn(usize) -> f64) -> Vec<f64> {
    series
        .iter()
        .enumerate()
        .map(|(i, v)| (v * by(i)).round())
        .collect()
}

#[test]
fn a_fixed_rate_server_is_steady_and_so_is_a_free_one_past_its_start() {
    assert_eq!(classify(&LIMITED, FLOOR).class, Steadiness::Steady);
    assert_eq!(classify(&FREE[4..], FLOOR).class, Steadiness::Steady);
}

#[test]
fn a_rise_then_flat_is_warming() {
    let c = classify(&FREE, FLOOR);
    assert_eq!(c.class, Steadiness::Warming, "{}", c.describe());
    // The fixed-rate series, slowed to 60% for its first 800 ms.
    let cold = scaled(&LIMITED, |i| if i < 8 { 0.6 } else { 1.0 });
    let c = classify(&cold, FLOOR);
    assert_eq!(c.class, Steadiness::Warming, "{}", c.describe());
    assert_eq!(c.levels[1].0, 8, "the rise ends where it was made");
}

#[test]
fn a_trend_over_the_window_is_drifting() {
    // Slower by 15% over the window, a little each bucket.
    let drift = scaled(&LIMITED, |i| 1.0 - 0.15 * i as f64 / 29.0);
    let c = classify(&drift, FLOOR);
    assert_eq!(c.class, Steadiness::Drifting, "{}", c.describe());
    assert!((c.trend + 0.15).abs() < 0.03, "{}", c.trend);
    // A trend under the floor is no drift.
    let slight = scaled(&LIMITED, |i| 1.0 - 0.01 * i as f64 / 29.0);
    assert_eq!(classify(&slight, FLOOR).class, Steadiness::Steady);
}

#[test]
fn a_level_shift_is_stepped_whichever_way() {
    let halved = scaled(&LIMITED, |i| if i < 14 { 1.0 } else { 0.5 });
    let c = classify(&halved, FLOOR);
    assert_eq!(c.class, Steadiness::Stepped, "{}", c.describe());
    assert_eq!(c.levels[1].0, 14);
    // A rise late in the window is a step, not a warm-up: its last
    // level is too short to be the flat after one.
    let late = scaled(&FREE[4..], |i| if i < 20 { 1.0 } else { 1.3 });
    assert_eq!(classify(&late, FLOOR).class, Steadiness::Stepped);
    // A dip in the middle.
    let dip = scaled(&LIMITED, |i| if (10..18).contains(&i) { 0.7 } else { 1.0 });
    assert_eq!(classify(&dip, FLOOR).class, Steadiness::Stepped);
    // A step under the floor is none.
    let small = scaled(&LIMITED, |i| if i < 14 { 1.0 } else { 0.99 });
    assert_eq!(classify(&small, FLOOR).class, Steadiness::Steady);
}

#[test]
fn fewer_than_ten_buckets_or_none_answered_is_too_short() {
    assert_eq!(classify(&LIMITED[..9], FLOOR).class, Steadiness::TooShort);
    assert_eq!(classify(&[0.0; 20], FLOOR).class, Steadiness::TooShort);
    assert_eq!(classify(&LIMITED[..10], FLOOR).class, Steadiness::Steady);
}

#[test]
fn the_stored_words_read_back() {
    for s in Steadiness::ALL {
        assert_eq!(Steadiness::parse(s.as_str()), Some(s));
    }
    assert!(!Steadiness::TooShort.unsteady() && !Steadiness::Steady.unsteady());
    assert!(Steadiness::Stepped.unsteady());
}

#[test]
fn a_server_that_stalls_over_and_over_is_stepped() {
    // The fixed-rate series, stopped for 300 ms after every 400 ms of
    // serving (SIGSTOP to its worker): any split of the whole leaves two
    // halves with alike means and medians, so only the seeded intervals
    // find the levels.
    let stalls = scaled(&LIMITED, |i| if i % 7 >= 4 { 0.0 } else { 1.0 });
    let c = classify(&stalls, FLOOR);
    assert_eq!(c.class, Steadiness::Stepped, "{}", c.describe());
    assert!(c.levels.len() >= 6, "{}", c.describe());
    assert_eq!(c.levels[1].0, 4, "{}", c.describe());
    // Shorter stalls (200 ms in every 500) too.
    let short = scaled(&LIMITED, |i| if i % 5 >= 3 { 0.0 } else { 1.0 });
    let c = classify(&short, FLOOR);
    assert_eq!(c.class, Steadiness::Stepped, "{}", c.describe());
}

#[test]
fn seeded_intervals_cover_the_series_at_every_scale() {
    let seeds = seeded_intervals(30);
    assert!(seeds.iter().all(|(a, b)| a < b && *b <= 30));
    assert!(seeds.iter().all(|(a, b)| b - a >= 2 * MIN_SEGMENT));
    // The shortest level's intervals (7.5 buckets) start every 3.75 or
    // so, so any change point has one around it with room on both sides.
    for k in MIN_SEGMENT..=30 - MIN_SEGMENT {
        assert!(
            seeds.iter().any(|(a, b)| *a + 2 <= k && k + 2 <= *b),
            "no interval around {k}"
        );
    }
    assert_eq!(seeds.first(), Some(&(0, 15)));
}

/// Measured: tests/it/steady.rs's nginx at 2,000/s, stopped (SIGSTOP)
/// for 300 ms after every 400 ms, 64 connections, one 2 s trial's
/// `timeline`, loaded machine (load average 1.2 on 2 CPUs).
const STALLING: [f64; 20] = [
    0.0, 62.0, 200.0, 200.0, 202.0, 140.0, 0.0, 0.0, 118.0, 202.0, 198.0, 200.0, 142.0, 0.0, 0.0,
    118.0, 200.0, 198.0, 202.0, 142.0,
];

#[test]
fn a_measured_stalling_server_is_stepped_though_most_buckets_are_at_an_edge() {
    let judged = judged_buckets(&STALLING[..STALLING.len() - 1]);
    let c = classify(judged, FLOOR);
    assert_eq!(c.class, Steadiness::Stepped, "{}", c.describe());
    // Their MAD took the edges for noise (0.36 of the median).
    assert!(c.noise < 0.1, "{}", c.noise);
    assert_eq!(c.levels.len(), 5, "{}", c.describe());
}
