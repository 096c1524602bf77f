//! The crate's only source of randomness: ChaCha8 behind our own helpers.
//!
//! `rand` may change how its convenience methods (`random_range`, shuffles,
//! distributions) turn raw output into values in any minor release. Everything
//! here is built on `next_u64` alone, so the only thing we rely on from
//! `rand` is the ChaCha8 keystream itself, which is fixed by the cipher. The
//! golden-vector test in `tests/rng_golden.rs` pins the first outputs.

use rand::rngs::ChaCha8Rng;
use rand::{Rng as _, SeedableRng as _};

/// ChaCha stream used by the bootstrap (intervals over tasks).
pub(crate) const STREAM_BOOTSTRAP: u64 = 1;
/// ChaCha stream used by the Monte Carlo sign-flip permutation test.
pub(crate) const STREAM_PERMUTATION: u64 = 2;
/// ChaCha stream used by the within-task reward shuffles of the hack scan.
pub(crate) const STREAM_SHUFFLE: u64 = 3;

/// A seeded, portable random number generator (ChaCha8) with the few
/// sampling helpers the estimators need.
///
/// The 32-byte ChaCha key is expanded from the caller's `u64` seed with
/// SplitMix64 (four outputs, little-endian), and the ChaCha stream id
/// separates independent uses of one seed (the estimators use distinct
/// streams for bootstrap, permutation and shuffles). The same seed and stream
/// always give the same sequence on every platform.
///
/// ```
/// use sparring_stats::StatsRng;
///
/// let mut a = StatsRng::new(7);
/// let mut b = StatsRng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let i = a.uniform_index(10);
/// assert!(i < 10);
/// let u = a.unit_f64();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Debug)]
pub struct StatsRng {
    inner: ChaCha8Rng,
}

impl StatsRng {
    /// A generator on stream 0 of the key expanded from `seed`.
    pub fn new(seed: u64) -> Self {
        Self::with_stream(seed, 0)
    }

    /// A generator on ChaCha stream `stream` of the key expanded from `seed`.
    ///
    /// Different streams of one seed are independent keystreams.
    pub fn with_stream(seed: u64, stream: u64) -> Self {
        let mut state = seed;
        let mut key = [0u8; 32];
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        }
        Self::from_key(key, stream)
    }

    /// A generator from a full 32-byte ChaCha key (for example one derived
    /// by SHA-256 from a run seed and a stream name) on stream `stream`.
    pub fn from_key(key: [u8; 32], stream: u64) -> Self {
        let mut inner = ChaCha8Rng::from_seed(key);
        inner.set_stream(stream);
        Self { inner }
    }

    /// The next 64 bits of the keystream.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform integer in `0..bound`, by Lemire's multiply-and-reject
    /// method on `next_u64` (unbiased). A `bound` of 0 yields 0.
    #[inline]
    pub fn uniform_index(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        let mut m = u128::from(self.next_u64()) * u128::from(bound);
        let mut low = m as u64;
        if low < bound {
            let threshold = bound.wrapping_neg() % bound;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(bound);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform float in `[0, 1)`: the top 53 bits of `next_u64` times 2⁻⁵³.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Shuffles `items` in place (Fisher–Yates from the last position down,
    /// each swap partner drawn with [`StatsRng::uniform_index`]).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.uniform_index(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// Uniform indices in `0..bound` for the hot loop of the bootstrap, cut
/// from each `next_u64` in chunks of `bits` bits (lowest chunk first) with
/// Lemire's multiply-and-reject method on each chunk.
///
/// `bits` is `ceil(log2(bound)) + 4`, at most 32, so a chunk is rejected
/// with probability below 1/16 (for up to 2^28 tasks; more when `bits` hits
/// the cap), and as many whole chunks as fit are taken from
/// each 64-bit word (three for 100,000 tasks). A rejected chunk is replaced
/// by the next one. The layout depends only on `bound`, so outputs are fixed
/// by the seed and the number of tasks.
#[derive(Debug)]
pub(crate) struct IndexStream<'a> {
    rng: &'a mut StatsRng,
    word: u64,
    left: u32,
    bits: u32,
    per_word: u32,
    mask: u64,
    bound: u64,
    threshold: u64,
}

impl<'a> IndexStream<'a> {
    /// Indices in `0..bound`; `bound` is clamped to `1..=2^32`.
    pub(crate) fn new(rng: &'a mut StatsRng, bound: u64) -> Self {
        let bound = bound.clamp(1, 1 << 32);
        let log2 = 64 - (bound - 1).leading_zeros();
        let bits = (log2 + 4).min(32);
        let mask = (1u64 << bits) - 1;
        Self {
            rng,
            word: 0,
            left: 0,
            bits,
            per_word: 64 / bits,
            mask,
            bound,
            threshold: (mask + 1) % bound,
        }
    }

    #[inline]
    fn next_chunk(&mut self) -> u64 {
        if self.left == 0 {
            self.word = self.rng.next_u64();
            self.left = self.per_word;
        }
        let chunk = self.word & self.mask;
        self.word >>= self.bits;
        self.left -= 1;
        chunk
    }

    /// The next index in `0..bound`.
    #[inline]
    pub(crate) fn next_index(&mut self) -> usize {
        loop {
            let m = self.next_chunk() * self.bound;
            if m & self.mask >= self.threshold {
                return (m >> self.bits) as usize;
            }
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014), used only to expand a `u64` seed
/// into a ChaCha key.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
