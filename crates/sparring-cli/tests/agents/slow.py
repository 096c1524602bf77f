#!/usr/bin/env python3
"""A test agent that answers every request after 40 ms with a final reply.
Standard library only."""
import json
import sys
import time

for line in sys.stdin:
    request = json.loads(line)
    time.sleep(0.04)
    reply = {"role": "assistant", "content": "Done, thank you."}
    print(json.dumps({"id": request["id"], "message": reply}), flush=True)
