//! The hashing under every generated value: a splitmix64 mix, a generator's seed from its
//! name, the content hash of item `n` under a seed, and an endless stream of pseudo-random
//! bits. Content is a function of (generator, n) through these alone, so a value can be made
//! again anywhere (the verifier, the recall judge) from the same two numbers.

/// The golden ratio's 64 bits, the splitmix64 increment.
pub(crate) const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The splitmix64 finalizer: a fast bijective mix of 64 bits.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A generator's seed: its name hashed, so equal `n` give different content per generator.
pub(crate) fn name_seed(name: &str) -> u64 {
    let h = name.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01B3));
    mix64(h)
}

/// The content hash of item `n` under `seed` (a name seed, or a value's hash for its elements).
#[inline]
pub(crate) fn hash_of(seed: u64, n: u64) -> u64 {
    mix64(seed ^ mix64(n.wrapping_add(GOLDEN)))
}

/// An endless splitmix64 stream: 64 pseudo-random bits per step.
pub(crate) struct Stream(pub u64);

impl Stream {
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }
}
