#!/usr/bin/env python3
"""A scripted bank teller speaking sparring's agent protocol v1.

Standard library only. Whatever the customer asks, it reads the balance of
A-1001, moves 250 from A-1001 to A-1002, reads both balances again and says
what the tools answered. It exists to show (and test) that the sandbox
world moves money and that a later read shows the new balance; it follows
no policy.
"""

import json
import sys

SCRIPT = [
    ("get_balance", {"account_id": "A-1001"}),
    ("transfer_money", {"from_account_id": "A-1001", "to_account_id": "A-1002", "amount": 250}),
    ("get_balance", {"account_id": "A-1001"}),
    ("get_balance", {"account_id": "A-1002"}),
]


def reply(request):
    messages = request.get("messages", [])
    results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
    step = len(results)
    if step < len(SCRIPT):
        name, args = SCRIPT[step]
        call = {"id": f"call_{step}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "The bank answered: " + " | ".join(results)}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        out = {"id": request.get("id"), "message": reply(request)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
