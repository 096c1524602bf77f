"""shop.lookup as a command agent (agent protocol v1), for the comparison
with the same agent as a Python callable."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import shop  # noqa: E402

for line in sys.stdin:
    request = json.loads(line)
    last = request["messages"][-1]
    if last["role"] == "tool":
        message = {"role": "assistant", "content": shop.reply_to(json.loads(last["content"]))}
    else:
        args = shop.first_call(last.get("content"))
        if args is None:
            message = {"role": "assistant", "content": shop.NO_ORDER}
        else:
            calls = [{"id": "call_1", "type": "function", "function": {"name": "get_order", "arguments": args}}]
            message = {"role": "assistant", "content": None, "tool_calls": calls}
    print(json.dumps({"id": request["id"], "message": message}), flush=True)
