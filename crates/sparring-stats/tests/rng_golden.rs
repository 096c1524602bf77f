//! Golden vectors: the first outputs of the seeded generator, its helpers
//! and one bootstrap are pinned, so that a dependency upgrade that changes
//! any draw fails here instead of silently changing intervals and p-values.

// These tests compare floats exactly on purpose: the values are exact.
#![allow(clippy::float_cmp)]

use sparring_stats::{BootstrapOptions, Resampler, StatsRng, bootstrap_mean};

/// The first `n` draws of the stream of `seed`.
fn first<T>(seed: u64, n: usize, mut draw: impl FnMut(&mut StatsRng) -> T) -> Vec<T> {
    let mut r = StatsRng::new(seed);
    (0..n).map(|_| draw(&mut r)).collect()
}

#[test]
fn chacha8_keystream_matches_the_reference_vector() {
    // ChaCha8 with an all-zero key and nonce; the published keystream starts
    // 3e 00 ef 2f 89 5f 40 d6 7f 5b b8 e8 1f 09 a5 a1.
    let mut r = StatsRng::from_key([0u8; 32], 0);
    assert_eq!(r.next_u64(), 0xd640_5f89_2fef_003e);
    assert_eq!(r.next_u64(), 0xa1a5_091f_e8b8_5b7f);
}

#[test]
fn next_u64_seed_0() {
    assert_eq!(
        first(0, 4, StatsRng::next_u64),
        [
            13_804_888_775_535_289_832,
            4_211_859_015_901_796_865,
            4_415_496_932_110_364_166,
            1_713_244_878_998_487_631
        ]
    );
}

#[test]
fn streams_are_distinct_keystreams() {
    let mut r = StatsRng::with_stream(0, 1);
    assert_eq!(r.next_u64(), 292_620_192_089_856_330);
    assert_eq!(r.next_u64(), 11_544_540_324_047_766_403);
    let mut s = StatsRng::with_stream(0, 0);
    assert_eq!(s.next_u64(), 13_804_888_775_535_289_832);
}

#[test]
fn uniform_index_seed_42() {
    let mut r = StatsRng::new(42);
    let small: Vec<u64> = (0..10).map(|_| r.uniform_index(10)).collect();
    assert_eq!(small, [1, 0, 9, 7, 0, 2, 7, 6, 9, 1]);
    let large: Vec<u64> = (0..3).map(|_| r.uniform_index(u64::MAX)).collect();
    assert_eq!(
        large,
        [
            6_124_636_787_657_616_174,
            11_311_289_604_118_546_125,
            16_379_730_608_934_187_915
        ]
    );
}

#[test]
fn uniform_index_edge_bounds() {
    let mut r = StatsRng::new(1);
    assert_eq!(r.uniform_index(0), 0);
    assert!((0..1000).all(|_| r.uniform_index(1) == 0));
    assert!((0..1000).all(|_| r.uniform_index(3) < 3));
}

#[test]
fn unit_f64_seed_7() {
    assert_eq!(
        first(7, 3, StatsRng::unit_f64),
        [
            0.400_495_030_059_127_23,
            0.774_328_206_343_583_1,
            0.507_438_529_491_348_3
        ]
    );
}

#[test]
fn shuffle_seed_3() {
    let mut r = StatsRng::new(3);
    let mut v: Vec<u32> = (0..10).collect();
    r.shuffle(&mut v);
    assert_eq!(v, [2, 6, 9, 0, 7, 1, 4, 8, 5, 3]);
}

#[test]
fn bootstrap_by_indices_seed_0() {
    let ci = bootstrap_mean(&[0.0, 0.25, 0.5, 1.0, 1.0], &BootstrapOptions::with_seed(0)).unwrap();
    assert_eq!((ci.estimate, ci.lo, ci.hi), (0.55, 0.2, 0.9));
}

#[test]
fn bootstrap_by_counts_seed_0() {
    let values: Vec<f64> = (0..100).map(|i| f64::from(i % 3) / 2.0).collect();
    let options = BootstrapOptions::with_seed(0);
    let ci = bootstrap_mean(&values, &options).unwrap();
    assert_eq!((ci.estimate, ci.lo, ci.hi), (0.495, 0.415, 0.575));
    // Auto picked counts: forcing them gives the same draws.
    let forced = BootstrapOptions {
        resampler: Resampler::Counts,
        ..options
    };
    assert_eq!(bootstrap_mean(&values, &forced).unwrap(), ci);
}
