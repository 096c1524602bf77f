#!/usr/bin/env python3
"""sparring's OpenAI-compatible backend vs the official `openai` package's
AsyncOpenAI, against one local fake server, in one run.

Builds (release) the testkit's fake server (`sparring-fake-llm`, Rust/axum,
fixed latency) and the `load` example of sparring-llm, starts the server
once, then runs both clients alternately, ROUNDS times each, doing the same
work: REQUESTS chat completions (one rollout turn each: system prompt, the
person's ask, one tool) with CONCURRENCY in flight. For every run it records
requests/s (measured by the client), the client's peak RSS and CPU time
(from wait4), the server's CPU time (/proc) and the most requests the
server saw in flight (its /stats). Prints a Markdown table, the medians and
the ratios, and writes the raw figures as JSON.

Needs: cargo, python3 with `openai` (pip install -r benches/llm/requirements.txt).
Usage: python3 benches/llm/run.py [--requests 20000] [--concurrency 1000]
       [--latency-ms 100] [--rounds 3] [--server-workers 1] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def http(url: str, method: str = "GET") -> dict:
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def run_client(argv: list[str], server_pid: int, stats_url: str) -> dict:
    http(stats_url + "/reset", "POST")
    server_cpu0 = cpu_seconds(server_pid)
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    out = child.stdout.read()
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        sys.exit(f"client failed ({status}): {' '.join(argv)}\n{err.decode()}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result["peak_rss_mib"] = usage.ru_maxrss / 1024
    result["client_cpu_s"] = usage.ru_utime + usage.ru_stime
    result["server_cpu_s"] = cpu_seconds(server_pid) - server_cpu0
    result["server_max_in_flight"] = http(stats_url)["max_in_flight"]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--concurrency", type=int, default=1000)
    ap.add_argument("--latency-ms", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-workers", type=int, default=1)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "sparring-testkit",
                    "--bin", "sparring-fake-llm", "-p", "sparring-llm", "--example", "load"],
                   cwd=ROOT, check=True)
    server = subprocess.Popen(
        [os.path.join(ROOT, "target/release/sparring-fake-llm"), "--latency-ms", str(a.latency_ms),
         "--workers", str(a.server_workers)],
        stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline().strip()
    base = line.removeprefix("listening on ")
    stats_url = base.removesuffix("/v1") + "/stats"
    clients = {
        "sparring-llm": [os.path.join(ROOT, "target/release/examples/load")],
        "openai-python": [sys.executable, os.path.join(ROOT, "benches/llm/openai_client.py")],
    }
    common = ["--url", base, "--requests", str(a.requests), "--concurrency", str(a.concurrency)]
    results = {name: [] for name in clients}
    try:
        for r in range(a.rounds):
            order = list(clients) if r % 2 == 0 else list(reversed(clients))
            for name in order:
                res = run_client(clients[name] + common, server.pid, stats_url)
                results[name].append(res)
                print(f"round {r + 1} {name}: {res['rps']:.0f} req/s, peak RSS {res['peak_rss_mib']:.1f} MiB, "
                      f"client CPU {res['client_cpu_s']:.1f} s, server CPU {res['server_cpu_s']:.1f} s, "
                      f"in flight {res['peak_in_flight']} (server {res['server_max_in_flight']}), "
                      f"errors {res['errors']}", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait()

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in results[name])

    print(f"\n{a.requests} requests, {a.concurrency} in flight, fake latency {a.latency_ms} ms, "
          f"{a.rounds} rounds, {os.cpu_count()} CPUs\n")
    print("| client | req/s (median) | req/s (runs) | peak RSS MiB (median) | client CPU s | server CPU s | wall s | max in flight at server | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in clients:
        runs = ", ".join(f"{x['rps']:.0f}" for x in results[name])
        print(f"| {results[name][0]['client']} | {med(name, 'rps'):.0f} | {runs} | {med(name, 'peak_rss_mib'):.1f} | "
              f"{med(name, 'client_cpu_s'):.1f} | {med(name, 'server_cpu_s'):.1f} | {med(name, 'seconds'):.1f} | "
              f"{max(x['server_max_in_flight'] for x in results[name])} | {sum(x['errors'] for x in results[name])} |")
    ideal = a.concurrency / (a.latency_ms / 1000)
    print(f"\nthroughput ratio sparring/openai: {med('sparring-llm', 'rps') / med('openai-python', 'rps'):.2f}x; "
          f"memory ratio openai/sparring: {med('openai-python', 'peak_rss_mib') / med('sparring-llm', 'peak_rss_mib'):.2f}x; "
          f"latency-bound ceiling {ideal:.0f} req/s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
