"""A small shop for the tests: its tools, its policy, and one agent's logic
that both a Python callable and a command agent play (so their rows can be
compared)."""

import re

POLICY = """You are the support desk of a small online shop.
- Always look the order up with get_order before you say anything about it.
- Never refund an order that is not delivered.
- Confirm with the customer before you cancel an order.
"""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up one order by its order id, such as '#W1001'.",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": "The order id, such as '#W1001'."}
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    },
    {
        "name": "cancel_order",
        "description": "Cancel a pending order.",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "description": "The order id, such as '#W1001'."}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
    },
]

FIXTURES = {
    "orders": [
        {"order_id": "#W1001", "status": "pending", "email": "ana.lima@mail.test", "name": "Ana Lima"},
        {"order_id": "#W1002", "status": "shipped", "email": "ben.okafor@mail.test", "name": "Ben Okafor"},
        {"order_id": "#W1003", "status": "delivered", "email": "chloe.martin@mail.test", "name": "Chloe Martin"},
    ]
}

SEEDS = ["Where is my order #W1002?", "Please cancel order #W1001."]

SPEC = {
    "name": "shop",
    "system_prompt": POLICY,
    "tools": TOOLS,
    "fixtures": FIXTURES,
    "seeds": SEEDS,
}

ORDER = re.compile(r"#W\d+")


def first_call(message):
    """The tool call the agent makes for a message, or None."""
    m = ORDER.search(message or "")
    return None if m is None else {"order_id": m.group(0)}


def reply_to(answer):
    """The agent's reply once the world answered its lookup."""
    if answer.get("ok"):
        status = answer["result"].get("status", "unknown")
        return f"I found your order: its status is {status}."
    return "I could not find that order, sorry."


NO_ORDER = "Could you tell me your order number?"


def lookup(message, tools):
    """The agent as a Python callable."""
    args = first_call(message)
    if args is None:
        return NO_ORDER
    return reply_to(tools.get_order(**args))
