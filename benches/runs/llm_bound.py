#!/usr/bin/env python3
"""LLM-bound run throughput: `sparring simulate` with a model agent served by a
fake OpenAI-compatible server at a fixed latency (docs/benchmarks-runs.md).

Starts ../shared/bench/fake_llm_dual.py (or uses --url), runs the release
binary once per concurrency under GNU time, and prints one JSON line per run:
simulations, wall seconds, simulations per hour, CPU seconds per simulation,
peak RSS, model calls per simulation and the server's in-flight figures.

    python3 benches/runs/llm_bound.py --sims 3000 --concurrency 1,1000 --latency-ms 300
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def get(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def post(url):
    req = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=3000)
    ap.add_argument("--concurrency", default="1,1000")
    ap.add_argument("--latency-ms", type=int, default=300)
    ap.add_argument("--max-turns", type=int, default=5)
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--fake", default=os.path.join(ROOT, "..", "shared", "bench", "fake_llm_dual.py"))
    ap.add_argument("--url", help="use a server already running at this base URL (no /v1)")
    ap.add_argument("--rust-fake", action="store_true",
                    help="serve with the testkit's sparring-fake-llm (release build), whose agent asks a question after each tool result")
    ap.add_argument("--model-person", action="store_true",
                    help="the person is a model too (--person), served by the same fake")
    args = ap.parse_args()
    binary = os.path.join(ROOT, "target", "release", "sparring")
    server = None
    base = args.url
    if not base:
        base = f"http://127.0.0.1:{args.port}"
        if args.rust_fake:
            cmd = [os.path.join(ROOT, "target", "release", "sparring-fake-llm"), "--port", str(args.port),
                   "--latency-ms", str(args.latency_ms), "--workers", "1", "--agent-text",
                   "I have looked that up for you. Is there anything else I can help with?"]
            base = f"http://127.0.0.1:{args.port}"
        else:
            cmd = [sys.executable, args.fake, "--port", str(args.port), "--latency-ms", str(args.latency_ms)]
        server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                get(base + "/stats")
                break
            except OSError:
                time.sleep(0.1)
    try:
        for conc in [int(c) for c in args.concurrency.split(",")]:
            sims = args.sims if conc > 1 else min(args.sims, 20)
            out = tempfile.mkdtemp(prefix="sparring-bench-")
            post(base + "/stats/reset")
            cmd = ["/usr/bin/time", "-v", binary, "simulate",
                   os.path.join(ROOT, "examples", "support-desk", "spec.yaml"),
                   "--agent", f"openai:fake-model@{base}/v1",
                   "--budget", str(sims), "--repeats", "1000", "--concurrency", str(conc),
                   "--max-turns", str(args.max_turns), "--patience", "endless",
                   "--retries", "0", "--quiet", "--out", out]
            if args.model_person:
                cmd[-2:-2] = ["--person", f"openai:fake-person@{base}/v1"]
            start = time.monotonic()
            p = subprocess.run(cmd, capture_output=True, text=True,
                               env={**os.environ, "NO_PROGRESS": "1"})
            wall = time.monotonic() - start
            stats = get(base + "/stats")
            err = p.stderr
            user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
            system = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
            rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
            summary = json.load(open(os.path.join(out, "run.json")))
            rows = summary["counts"]["rows"]
            ended = summary["counts"]["ended_by"]
            print(json.dumps({
                "concurrency": conc, "sims": rows, "wall_s": round(wall, 2),
                "sims_per_hour": round(rows / wall * 3600),
                "cpu_s": round(user + system, 2),
                "cpu_ms_per_sim": round((user + system) * 1000 / max(rows, 1), 2),
                "peak_rss_mb": round(rss_kb / 1024, 1),
                "model_calls": stats["requests"],
                "calls_per_sim": round(stats["requests"] / max(rows, 1), 2),
                "server_max_inflight": stats.get("max_inflight", stats.get("max_in_flight")),
                "server_mean_inflight": stats.get("mean_inflight"),
                "server_req_per_s": stats.get("req_per_s_first_to_last"),
                "server_cpu_s": stats.get("server_cpu_s"),
                "ended_by": ended, "exit": p.returncode,
                "degraded": summary.get("degraded"),
                "person": summary.get("search", {}).get("person"),
            }), flush=True)
    finally:
        if server:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
