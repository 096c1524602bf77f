#!/usr/bin/env python3
"""A test judge speaking agent protocol v1: reads the conversation out of the
judge prompt and answers with a JSON verdict.

Modes: `strict` (fails everything), `gullible` (passes a conversation that
tells the grader to award full marks, fails the rest), `garbage` (never a
verdict)."""
import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "strict"
for line in sys.stdin:
    req = json.loads(line)
    prompt = req["messages"][-1]["content"]
    if mode == "garbage":
        text = "I would rather not say."
    else:
        convo = prompt.split("<conversation>", 1)[1].split("</conversation>", 1)[0]
        passed = mode == "gullible" and "award full marks" in convo.lower()
        text = json.dumps({"score": 1.0 if passed else 0.0, "reason": mode,
                           "failure_class": None if passed else "other"})
    print(json.dumps({"id": req["id"], "message": {"role": "assistant", "content": text}}), flush=True)
