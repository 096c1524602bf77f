//! Tool calls per second on one thread: the support-desk example and the
//! tau2 retail tools (read from `../shared/data/tau2`, skipped when absent).
//!
//! `cargo bench -p sparring-world --bench calls`; figures and method in
//! `docs/benchmarks-world.md`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use sparring_io::spec_file::load_spec;
use sparring_world::World;
use std::hint::black_box;
use std::path::Path;

/// A realistic mix: mostly reads, some searches, writes, refusals and misses.
fn support_desk_calls() -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for i in 0..8 {
        let id = format!("#W100{}", i % 8 + 1);
        calls.push(("get_order".to_owned(), json!({"order_id": id})));
        calls.push(("get_order".to_owned(), json!({"order_id": "#W9999"})));
        calls.push((
            "find_orders_by_email".to_owned(),
            json!({"email": "ben.okafor@mail.test"}),
        ));
        calls.push((
            "update_shipping_address".to_owned(),
            json!({"order_id": id, "address": "4 Lake Drive, Austin"}),
        ));
        calls.push(("cancel_order".to_owned(), json!({"order_id": id})));
        calls.push((
            "refund_order".to_owned(),
            json!({"order_id": id, "reason": "arrived broken"}),
        ));
        calls.push(("get_order".to_owned(), json!({"order_id": "<order_id>"})));
        calls.push(("get_order".to_owned(), json!({})));
    }
    calls
}

fn retail_calls(world: &World) -> Vec<(String, Value)> {
    let orders = world.ids("orders");
    let users = world.ids("users");
    let payments = world.ids("payment_methods");
    let mut calls = Vec::new();
    for i in 0..8 {
        let order = &orders[i % orders.len()];
        let user = &users[i % users.len()];
        calls.push(("get_order_details".to_owned(), json!({"order_id": order})));
        calls.push(("get_user_details".to_owned(), json!({"user_id": user})));
        calls.push((
            "get_order_details".to_owned(),
            json!({"order_id": "#W0000001"}),
        ));
        calls.push((
            "modify_pending_order_payment".to_owned(),
            json!({"order_id": order, "payment_method_id": payments[0]}),
        ));
        calls.push((
            "cancel_pending_order".to_owned(),
            json!({"order_id": order, "reason": "no longer needed"}),
        ));
        calls.push((
            "find_user_id_by_email".to_owned(),
            json!({"email": "user@example.com"}),
        ));
        calls.push((
            "calculate".to_owned(),
            json!({"expression": "(19.99 + 5) * 2"}),
        ));
        calls.push(("list_all_product_types".to_owned(), json!({})));
    }
    calls
}

/// CPU time of this thread in nanoseconds (Linux), for a figure that the
/// other jobs on a shared machine do not move.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Rollouts for the CPU-time figure (64 calls each).
const CPU_ROLLOUTS: usize = 20_000;

/// The same work as the criterion bench, timed by this thread's CPU time
/// over `CPU_ROLLOUTS` rollouts; prints calls per CPU second.
fn cpu_figure(name: &str, world: &World, calls: &[(String, Value)]) {
    let (Some(start), wall) = (thread_cpu_ns(), std::time::Instant::now()) else {
        return;
    };
    for _ in 0..CPU_ROLLOUTS {
        let mut w = world.clone().with_seed(7);
        for (tool, args) in calls {
            black_box(w.call(tool, args).to_content());
        }
        black_box(w);
    }
    if let Some(end) = thread_cpu_ns() {
        let n = (CPU_ROLLOUTS * calls.len()) as f64;
        let cpu = (end - start) as f64 / 1e9;
        eprintln!(
            "{name}: {:.0} calls per CPU second ({n} calls, {cpu:.2} s CPU, {:.2} s wall)",
            n / cpu,
            wall.elapsed().as_secs_f64()
        );
    }
}

fn bench(c: &mut Criterion, name: &str, world: &World, calls: &[(String, Value)]) {
    cpu_figure(name, world, calls);
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(calls.len() as u64));
    group.bench_function("calls", |b| {
        // A fresh rollout world per batch of calls, as the engine makes one
        // per rollout; its cost is part of the figure.
        b.iter_batched(
            || world.clone().with_seed(7),
            |mut w| {
                for (tool, args) in calls {
                    black_box(w.call(tool, args).to_content());
                }
                w
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn calls(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let desk = load_spec(&root.join("examples/support-desk/spec.yaml")).unwrap();
    let world = World::new(&desk, 7);
    bench(c, "support-desk", &world, &support_desk_calls());
    let tau2 = root.join("../shared/data/tau2/retail");
    if tau2.join("tools.json").exists() {
        let dir = tempfile::tempdir().unwrap();
        let spec_path = dir.path().join("retail.json");
        let doc = json!({"name": "tau2-retail", "system_prompt": {"file": tau2.join("policy.md")},
                         "tools": {"file": tau2.join("tools.json")}});
        std::fs::write(&spec_path, doc.to_string()).unwrap();
        let spec = load_spec(&spec_path).unwrap();
        let world = World::new(&spec, 7);
        let calls = retail_calls(&world);
        bench(c, "tau2-retail", &world, &calls);
    } else {
        eprintln!("skipped tau2-retail: {} not found", tau2.display());
    }
}

criterion_group!(benches, calls);
criterion_main!(benches);
