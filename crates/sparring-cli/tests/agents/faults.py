#!/usr/bin/env python3
"""A sequential test agent (one request at a time, like the minimal agent of
docs/agent-protocol.md) with one deterministic culprit.

Usage: faults.py MODE STATE_FILE [K]

The K-th distinct rollout it sees (default 3; a rollout is a request id
without its last `-N`) becomes the culprit, written to STATE_FILE, so every
process (a restarted one too) knows it. Every request of the culprit gets
the fault; every other request a short final reply. MODE:
  hang        never answers (sleeps)
  crash       exits with status 3
  garbage     prints a line that is not JSON
  twice       answers twice with the same id
  unknown-id  answers with an id nobody asked for
  badutf8     answers with bytes that are not UTF-8
  closeout    closes its stdout and sleeps
  ok          no fault (a control)
Lines `culprit ROLLOUT` and `fault MODE` go to stderr. Standard library only.
"""
import json
import os
import sys
import time

mode, state = sys.argv[1], sys.argv[2]
k = int(sys.argv[3]) if len(sys.argv) > 3 else 3
seen = []


def culprit(rollout):
    if os.path.exists(state):
        with open(state) as f:
            return f.read().strip() == rollout
    if rollout not in seen:
        seen.append(rollout)
    if len(seen) == k and rollout == seen[-1]:
        with open(state, "w") as f:
            f.write(rollout)
        print("culprit " + rollout, file=sys.stderr, flush=True)
        return True
    return False


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    rid = request["id"]
    rollout = rid.rsplit("-", 1)[0]
    reply = {"id": rid, "message": {"role": "assistant", "content": "Thanks, all noted."}}
    if mode != "ok" and culprit(rollout):
        print("fault " + mode, file=sys.stderr, flush=True)
        if mode == "hang":
            time.sleep(3600)
        elif mode == "crash":
            sys.exit(3)
        elif mode == "garbage":
            print("Traceback (most recent call last): oops", flush=True)
            continue
        elif mode == "twice":
            send(reply)
            send(reply)
            continue
        elif mode == "unknown-id":
            send({"id": "nobody-asked", "message": reply["message"]})
            continue
        elif mode == "badutf8":
            sys.stdout.buffer.write(
                b'{"id": "' + rid.encode() + b'", "message": {"role": "assistant", "content": "caf\xe9"}}\n'
            )
            sys.stdout.flush()
            continue
        elif mode == "closeout":
            sys.stdout.flush()
            os.close(1)
            time.sleep(3600)
    send(reply)
