#!/usr/bin/env python3
"""The support-desk example agent (examples/support-desk/agent.py: tool calls
across several requests of one conversation) with culprit conversations whose
every reply is written twice.

Usage: tools_twice.py STATE_FILE [N]

A conversation (a request id without its last `-N`) becomes a culprit when
the agent's reply to it is a tool call, until N conversations are culprits
(default 1); so a culprit has at least two requests, the tool call and what
follows the tool's result. The culprits are written to STATE_FILE, one a
line, so a restarted process knows them. From then on every reply of a
culprit is written twice, with the same id; every other reply once. Lines
`culprit ROLLOUT` go to stderr. One request at a time, standard library only.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples", "support-desk"))
from agent import respond  # noqa: E402

state = sys.argv[1]
wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def culprits():
    if not os.path.exists(state):
        return []
    with open(state) as f:
        return f.read().split()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    rid = request["id"]
    rollout = rid.rsplit("-", 1)[0]
    reply = {"id": rid, "message": respond(request["messages"])}
    known = culprits()
    if rollout not in known and len(known) < wanted and reply["message"].get("tool_calls"):
        with open(state, "a") as f:
            f.write(rollout + "\n")
        print("culprit " + rollout, file=sys.stderr, flush=True)
        known.append(rollout)
    send(reply)
    if rollout in known:
        send(reply)
