//! Bootstrap throughput: 10,000 percentile-bootstrap resamples over 100,000
//! per-task values, the workload of `docs/benchmarks.md`.
//!
//! Two inputs, both generated from SplitMix64 so that
//! `benches/stats/scipy_bootstrap.py` builds the very same arrays:
//! - `pass_at_1_n8`: per-task pass@1 with 8 samples per task, `c/8` with
//!   `c = splitmix64(i) % 9`. Few distinct values, as real pass rates have,
//!   so the bootstrap draws multinomial counts per distinct value.
//! - `pass_at_1_mixed`: per-task pass@1 with 1 to 32 samples per task,
//!   `n = 1 + z % 32` and `c = (z >> 32) % (n + 1)` for `z = splitmix64(i)`:
//!   about 300 distinct fractions, still drawn as counts.
//! - `continuous`: `(splitmix64(i) >> 11) / 2^53`, all distinct, the worst
//!   case, where the bootstrap draws every task index.
//!
//! Run with `cargo bench -p sparring-stats --bench bootstrap`, or
//! `benches/stats/run.sh` to compare with SciPy.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use sparring_stats::{BootstrapOptions, bootstrap_mean};

const TASKS: usize = 100_000;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn pass_at_1_n8() -> Vec<f64> {
    let mut s = 1;
    (0..TASKS)
        .map(|_| (splitmix64(&mut s) % 9) as f64 / 8.0)
        .collect()
}

fn pass_at_1_mixed() -> Vec<f64> {
    let mut s = 3;
    (0..TASKS)
        .map(|_| {
            let z = splitmix64(&mut s);
            let n = 1 + z % 32;
            ((z >> 32) % (n + 1)) as f64 / n as f64
        })
        .collect()
}

fn continuous() -> Vec<f64> {
    let mut s = 2;
    (0..TASKS)
        .map(|_| (splitmix64(&mut s) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

fn bench(c: &mut Criterion) {
    let options = BootstrapOptions::with_seed(0);
    let mut group = c.benchmark_group("bootstrap_10k_resamples_100k_tasks");
    group.sample_size(10);
    for (name, values, seconds) in [
        ("pass_at_1_n8", pass_at_1_n8(), 5),
        ("pass_at_1_mixed", pass_at_1_mixed(), 10),
        ("continuous", continuous(), 40),
    ] {
        group.measurement_time(Duration::from_secs(seconds));
        group.bench_function(name, |b| {
            b.iter(|| bootstrap_mean(black_box(&values), black_box(&options)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
