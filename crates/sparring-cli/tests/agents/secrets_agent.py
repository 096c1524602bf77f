#!/usr/bin/env python3
"""A test agent that echoes its own command line on stderr
(as a careless agent's debug output would), then answers every request.

Usage: secrets_agent.py ARGS... (any words; they are printed, not read)
Standard library only.
"""
import json
import os
import sys

print("argv: " + " ".join(sys.argv[1:]), file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    reply = {"role": "assistant", "content": "Thanks, all noted."}
    print(json.dumps({"id": request["id"], "message": reply}), flush=True)
