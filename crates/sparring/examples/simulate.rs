//! `sparring simulate` in a few lines: the same rows and `run.json`.
//! ```text
//! cargo run --release -p sparring --example simulate -- SPEC "AGENT COMMAND" OUT
//! ```

fn main() -> Result<(), sparring::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [spec, agent, out] = args.as_slice() else {
        eprintln!("usage: simulate SPEC \"AGENT COMMAND\" OUT");
        std::process::exit(2);
    };
    let result = sparring::Simulation::from_file(spec)?
        .agent(agent)
        .out(out)
        .run_blocking()?;
    let c = &result.summary.counts;
    eprintln!(
        "{} rows, {} passed; stopped because {}",
        c.rows, c.passed, result.summary.stopped_because
    );
    for w in &result.summary.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}
