#!/usr/bin/env python3
"""A test agent that answers every request after a pause (SECONDS, default
0.04) with a final reply, one request at a time.

Usage: slow.py [SECONDS]

Standard library only."""
import json
import sys
import time

pause = float(sys.argv[1]) if len(sys.argv) > 1 else 0.04
for line in sys.stdin:
    request = json.loads(line)
    time.sleep(pause)
    reply = {"role": "assistant", "content": "Done, thank you."}
    print(json.dumps({"id": request["id"], "message": reply}), flush=True)
