//! Writes a tau2-bench domain's spec with fixtures for `sparring simulate`.
//!
//! `cargo run -p sparring-testkit --example tau2_spec -- DOMAIN DIR` writes
//! `DIR/tau2-DOMAIN.json` (DOMAIN: `retail` or `airline`) and prints its
//! path: the policy and tools referenced from `../shared/data/tau2` (or
//! `$SPARRING_TAU2_DATA`) by
//! `{file: PATH}`, the fixtures every task's gold actions need
//! (`sparring_testkit::tau2::domain_db`). Keep DIR outside the repository:
//! tau2's text is not ours to commit.

#![allow(missing_docs)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [domain, dir] = args.as_slice() else {
        eprintln!("usage: tau2_spec DOMAIN DIR");
        std::process::exit(2);
    };
    if !["retail", "airline"].contains(&domain.as_str()) {
        eprintln!("error: no fixtures for tau2 domain `{domain}`; hint: retail or airline");
        std::process::exit(2);
    }
    match sparring_testkit::tau2::write_spec(domain, std::path::Path::new(dir)) {
        Some(path) => println!("{}", path.display()),
        None => std::process::exit(2),
    }
}
