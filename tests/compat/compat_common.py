"""What the compatibility scripts share: failing a check, reading JSON lines, running."""

import json
import sys


class Failure(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Failure(what)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run(main):
    """Runs `main`; a failed check prints `FAILED: …` and exits 1."""
    try:
        main()
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
