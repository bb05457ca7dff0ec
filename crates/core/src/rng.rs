//! SplitMix64 (Steele, Lea & Flood, OOPSLA 2014), the fixed-seed generator
//! the bootstrap, the DNS query sets and the runner's trial order share,
//! and the Fisher–Yates shuffle on it: written out here, a leaf, so
//! the same seed gives the same numbers on every platform and with every
//! version of the `rand` crate.

#![forbid(unsafe_code)]

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): tiny, and its output for
/// a seed never changes with a dependency's version (the DNS query sets use
/// it too, so a seed gives the same file forever).
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 bits of the sequence. (Not an `Iterator`: the sequence
    /// never ends, and `below` and `unit` are its only other readers.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by Lemire's multiply-shift; the bias is at most
    /// n / 2^64, far below anything a bootstrap can see.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1): the top 53 bits as a double's mantissa.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Shuffles `items` in place: the Fisher–Yates shuffle in Durstenfeld's
/// form (Durstenfeld, CACM 7(7), 1964; Knuth, TAOCP vol. 2, §3.4.2,
/// Algorithm P): for i from the last index down to 1, swap item i with a
/// uniform one of 0..=i. Every permutation is equally likely (up to the
/// n / 2^64 bias of [`SplitMix64::below`]), and one seed gives one order.
pub fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i + 1);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shuffle_is_a_permutation_fixed_by_its_seed() {
        let shuffled = |seed| {
            let mut v: Vec<u32> = (0..10).collect();
            shuffle(&mut v, &mut SplitMix64(seed));
            v
        };
        let a = shuffled(7);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_eq!(a, shuffled(7));
        assert_ne!(a, shuffled(8));
        let mut empty: [u8; 0] = [];
        shuffle(&mut empty, &mut SplitMix64(1));
    }

    /// Each of the 6 orders of 3 items comes up about 1/6 of the time: a
    /// shuffle that swapped with 0..n instead of 0..=i (a classic slip)
    /// would favour some orders by 4/27 against 5/27.
    #[test]
    fn every_order_of_three_is_equally_likely() {
        let mut rng = SplitMix64(42);
        let mut counts = std::collections::HashMap::new();
        let n = 60_000;
        for _ in 0..n {
            let mut v = [0u8, 1, 2];
            shuffle(&mut v, &mut rng);
            *counts.entry(v).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 6);
        for (order, c) in counts {
            let share = c as f64 / n as f64;
            assert!((share - 1.0 / 6.0).abs() < 0.01, "{order:?}: {share}");
        }
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // First outputs of SplitMix64 seeded with 0, as printed by the
        // reference C code (Vigna, prng.di.unimi.it/splitmix64.c).
        let mut r = SplitMix64(0);
        assert_eq!(r.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next(), 0x06C4_5D18_8009_454F);
    }
}
