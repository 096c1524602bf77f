#!/usr/bin/env python3
"""A test agent that misbehaves once, on purpose.

Usage: flaky.py MODE MARKER_FILE [N]

Answers every request with a short final reply, except the Nth request (default
3) of the first process, where it:
  nonjson     prints a line that is not JSON
  unknown-id  replies with an id nobody asked for
  die         exits with status 3 without answering
  error       replies {"id", "error"}
  stderr      writes to stderr and answers normally
The marker file records that the misbehaviour happened, so a restarted process
behaves (`once.py`). Standard library only.
"""
import json
import sys

from once import claim

mode, marker = sys.argv[1], sys.argv[2]
nth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
seen = 0

for line in sys.stdin:
    request = json.loads(line)
    seen += 1
    if seen == nth and claim(marker):
        if mode == "nonjson":
            print("Traceback (most recent call last): oops", flush=True)
            continue
        if mode == "unknown-id":
            print(json.dumps({"id": "nobody-asked", "message": {"role": "assistant", "content": "hi"}}), flush=True)
            continue
        if mode == "die":
            sys.exit(3)
        if mode == "error":
            print(json.dumps({"id": request["id"], "error": "model overloaded"}), flush=True)
            continue
        if mode == "stderr":
            print("debug: thinking hard", file=sys.stderr, flush=True)
    reply = {"id": request["id"], "message": {"role": "assistant", "content": "Thanks, all noted."}}
    print(json.dumps(reply), flush=True)
