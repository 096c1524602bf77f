#!/usr/bin/env python3
"""Writes a spec of N tools or N policy rules to stdout, for timing a small
budget on a large spec (docs/benchmarks.md, "Large specs, small budget").

Usage: large_spec.py tools|rules N > spec.json
"""
import json, sys
kind, n = sys.argv[1], int(sys.argv[2])
ents = ["order", "account", "ticket", "invoice", "booking"]
tools = []
if kind == "tools":
    for i in range(n):
        e = ents[i % len(ents)]
        tools.append({"type": "function", "function": {
            "name": f"get_{e}_{i}", "description": f"Look up one {e} by its {e} id (variant {i}).",
            "parameters": {"type": "object", "properties": {f"{e}_id": {"type": "string", "description": f"The {e} id."}},
                           "required": [f"{e}_id"], "additionalProperties": False}}})
    prompt = "You are a support agent. Never reveal internal notes. Always confirm before cancelling an order."
else:
    tools = [{"type": "function", "function": {"name": "get_order", "description": "Look up one order by its order id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order id."}}, "required": ["order_id"]}}},
        {"type": "function", "function": {"name": "cancel_order", "description": "Cancel a pending order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "description": "The order id."}}, "required": ["order_id"]}}}]
    lines = [f"- You must never cancel an order of category c{i} without asking the customer to confirm first." for i in range(n)]
    prompt = "You are a support agent.\n\n" + "\n".join(lines)
json.dump({"name": f"{kind}-{n}", "system_prompt": prompt, "tools": tools}, sys.stdout)
