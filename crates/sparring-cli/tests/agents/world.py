"""A caller's world for `simulate --execute`: JSON lines on stdin, one reply
per line on stdout, state per rollout (orders it has cancelled)."""
import json
import sys

cancelled = {}
for line in sys.stdin:
    r = json.loads(line)
    key = r["rollout"]["rollout_index"]
    done = cancelled.setdefault(key, set())
    order = r["arguments"].get("order_id", "")
    if r["tool"] == "cancel_order" and order in done:
        reply = {"id": r["id"], "error": {"kind": "refused", "message": f"order {order} is already cancelled"}}
    else:
        if r["tool"] == "cancel_order":
            done.add(order)
        reply = {"id": r["id"], "result": {"served_by": "command-world", "tool": r["tool"],
                                            "order_id": order, "status": "pending",
                                            "prompt": r["rollout"]["prompt"]}}
    print(json.dumps(reply), flush=True)
