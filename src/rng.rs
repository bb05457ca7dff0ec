//! SplitMix64 (Steele, Lea & Flood, OOPSLA 2014), the fixed-seed generator
//! the bootstrap and the DNS query sets share: written out here, a leaf, so
//! the same seed gives the same numbers on every platform and with every
//! version of the `rand` crate.

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): tiny, and its output for
/// a seed never changes with a dependency's version (the DNS query sets use
/// it too, so a seed gives the same file forever).
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` by Lemire's multiply-shift; the bias is at most
    /// n / 2^64, far below anything a bootstrap can see.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1): the top 53 bits as a double's mantissa.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
