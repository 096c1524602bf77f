//! Prints array sizes and times for benchmark configurations, one JSON line each.
//!
//! ```text
//! cargo run --release -p sparring-grid --example grid_bench -- [--effort E] [--seed S] [--rows] CONFIG...
//! ```
//!
//! A CONFIG is a `--levels` string (`3^13`, `5,3^8,2^2`); a trailing `+c`
//! adds one forbidden pair per value `t` of the first axis, with value
//! `t mod levels[3]` of the fourth axis (the project shapes' "one constraint
//! per tool"). Each array is checked independently (coverage, forbidden
//! pairs) before its line is printed; `--rows` adds the rows themselves so
//! that an outside checker can verify them too. Timing lives here, never in
//! the library.
//!
//! Seconds are meant to survive other load on a shared machine. A run that
//! takes at least 50 ms of CPU is timed by the CPU time of its thread (from
//! `/proc/thread-self/schedstat`, Linux, which is only updated at scheduler
//! ticks); a shorter run is repeated (it is deterministic) and timed by its
//! fastest wall-clock repetition. `wall_seconds` is the first run's wall time.

use std::time::Instant;

use sparring_grid::{CoveringArray, Effort, GridProblem, coverage, parse_levels};

fn main() {
    let mut effort = Effort::DEFAULT;
    let mut seed = 0_u64;
    let mut with_rows = false;
    let mut configs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--effort" => {
                effort = parse(args.next());
            }
            "--seed" => {
                seed = parse(args.next());
            }
            "--rows" => with_rows = true,
            _ => configs.push(arg),
        }
    }
    for config in configs {
        let (text, constrained) = match config.strip_suffix("+c") {
            Some(t) => (t, true),
            None => (config.as_str(), false),
        };
        let levels = parse_levels(text).unwrap_or_else(|e| fail(&e));
        let mut problem = GridProblem::new(levels.clone()).with_seed(seed);
        if constrained {
            for t in 0..levels[0] {
                problem = problem.forbid((0, t), (3, t % levels[3]));
            }
        }
        let (built, construction_seconds, _) =
            measure(|| CoveringArray::generate(&problem.clone().with_effort(Effort::NONE)));
        let (array, seconds, wall_seconds) =
            measure(|| CoveringArray::generate(&problem.clone().with_effort(effort)));
        let check = coverage(&levels, &problem.forbidden, &array.rows).unwrap_or_else(|e| fail(&e));
        let clean = array.rows.iter().all(|row| {
            problem
                .forbidden
                .iter()
                .all(|&((a, x), (b, y))| !(row[a] == x && row[b] == y))
        });
        let valid = clean && check.pairs_covered == check.pairs_planned;
        let rows = if with_rows {
            let text: Vec<String> = array.rows.iter().map(|r| format!("{r:?}")).collect();
            format!(",\"array\":[{}]", text.join(","))
        } else {
            String::new()
        };
        println!(
            "{{\"config\":\"{config}\",\"k\":{},\"rows\":{},\"seconds\":{seconds:.4},\"wall_seconds\":{wall_seconds:.4},\"construction_rows\":{},\"construction_seconds\":{construction_seconds:.4},\"lower_bound\":{},\"pairs_planned\":{},\"work\":{},\"valid\":{valid}{rows}}}",
            levels.len(),
            array.n_rows(),
            built.n_rows(),
            array.lower_bound,
            check.pairs_planned,
            array.work_spent,
        );
    }
}

/// CPU time below which a run is repeated and timed by wall clock.
const CPU_RESOLUTION_S: f64 = 0.05;
/// Wall time spent repeating a short run.
const REPEAT_FOR_S: f64 = 0.3;

/// Runs `f`, returning its array, the seconds to report and the first wall time.
fn measure(
    f: impl Fn() -> Result<CoveringArray, sparring_grid::GridError>,
) -> (CoveringArray, f64, f64) {
    let wall = Instant::now();
    let cpu = thread_cpu_ns();
    let array = f().unwrap_or_else(|e| fail(&e));
    let first_wall = wall.elapsed().as_secs_f64();
    if let (Some(a), Some(b)) = (cpu, thread_cpu_ns()) {
        let cpu_s = (b - a) as f64 / 1e9;
        if cpu_s >= CPU_RESOLUTION_S {
            return (array, cpu_s, first_wall);
        }
    }
    let mut fastest = first_wall;
    let mut spent = first_wall;
    while spent < REPEAT_FOR_S && first_wall < CPU_RESOLUTION_S {
        let again = Instant::now();
        let _ = f();
        let t = again.elapsed().as_secs_f64();
        fastest = fastest.min(t);
        spent += t;
    }
    (array, fastest, first_wall)
}

fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn parse<T: std::str::FromStr<Err: std::fmt::Display>>(text: Option<String>) -> T {
    text.unwrap_or_default()
        .parse()
        .unwrap_or_else(|e| fail(&e))
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2);
}
