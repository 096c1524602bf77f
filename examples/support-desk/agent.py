#!/usr/bin/env python3
"""A deliberately imperfect support agent speaking sparring's agent protocol v1.

Standard library only. It reads one JSON request per line on stdin,
{"id", "messages", "tools"}, and writes one reply per line on stdout,
{"id", "message": {"role": "assistant", "content", "tool_calls"}}.

It is a rule-based bot that mostly follows the support-desk policy, with the
failures real agents have, each decided per conversation from a hash of the
opening message (so a conversation always plays the same way):

- it sometimes says a refund was issued without calling refund_order;
- it sometimes guesses an order id instead of asking for one;
- it sometimes refunds without asking the customer to confirm;
- it sometimes tells the customer a failed refund went through.
"""

import hashlib
import json
import random
import re
import sys

ORDER_ID = re.compile(r"#?\bW\d{4}\b", re.IGNORECASE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
YES = re.compile(r"\b(yes|yeah|yep|sure|go ahead|do it|please do|ok|okay|confirm)\b", re.IGNORECASE)

# How often each failure happens.
CLAIM_WITHOUT_CALL = 0.25
GUESS_ORDER_ID = 0.35
SKIP_CONFIRMATION = 0.20
CLAIM_AFTER_FAILURE = 0.50

# Per intent: the tool that does it, what to say when it worked, what to say
# when it failed (the world's message, or the default, fills `{message}`).
DONE = {
    "refund": (
        "refund_order",
        "The refund for order {order_id} has been issued.",
        "I'm sorry, I couldn't refund order {order_id}: {message}.",
        "the refund failed",
    ),
    "cancel": (
        "cancel_order",
        "Order {order_id} has been cancelled.",
        "I couldn't cancel order {order_id}: {message}.",
        "the cancellation failed",
    ),
    "address": (
        "update_shipping_address",
        "I've updated the shipping address of order {order_id}.",
        "I couldn't change the address: {message}.",
        "the change failed",
    ),
}


def normalise_id(raw):
    raw = raw.upper()
    return raw if raw.startswith("#") else "#" + raw


def intent_of(text):
    t = text.lower()
    if "refund" in t or "charged twice" in t or "money back" in t:
        return "refund"
    if "cancel" in t:
        return "cancel"
    if "address" in t:
        return "address"
    if "email" in t and ("find" in t or "look up" in t or "orders" in t):
        return "find"
    if any(w in t for w in ("status", "where", "check", "package", "track")):
        return "status"
    return None


class Conversation:
    """What the agent can read out of the messages so far."""

    def __init__(self, messages):
        self.messages = messages
        users = [m.get("content") or "" for m in messages if m["role"] == "user"]
        self.opening = users[0] if users else ""
        self.user_text = " ".join(users)
        self.last_user = users[-1] if users else ""
        digest = hashlib.sha256(self.opening.encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.claims_without_call = rng.random() < CLAIM_WITHOUT_CALL
        self.guesses_id = rng.random() < GUESS_ORDER_ID
        self.skips_confirmation = rng.random() < SKIP_CONFIRMATION
        self.claims_after_failure = rng.random() < CLAIM_AFTER_FAILURE
        self.intent = intent_of(self.opening) or intent_of(self.user_text)
        # Tool calls made, with their parsed results.
        self.calls = []
        pending = {}
        for m in messages:
            if m["role"] == "assistant":
                for c in m.get("tool_calls") or []:
                    pending[c["id"]] = c["function"]
            elif m["role"] == "tool":
                fn = pending.get(m.get("tool_call_id"), {"name": m.get("name"), "arguments": "{}"})
                try:
                    result = json.loads(m.get("content") or "{}")
                except ValueError:
                    result = {"ok": False, "error": {"message": m.get("content")}}
                self.calls.append((fn["name"], json.loads(fn.get("arguments") or "{}"), result))
        self.asked_to_confirm = any(
            m["role"] == "assistant" and "shall i go ahead" in (m.get("content") or "").lower()
            for m in messages
        )

    def order_id(self):
        ids = ORDER_ID.findall(self.user_text)
        if ids:
            return normalise_id(ids[-1])
        for name, _, result in self.calls:
            if name == "find_orders_by_email" and result.get("ok") and result["result"]:
                return result["result"][0]["order_id"]
        return None

    def last_call(self, name=None):
        for call in reversed(self.calls):
            if name is None or call[0] == name:
                return call
        return None


def say(text):
    return {"role": "assistant", "content": text}


def call(name, **arguments):
    digest = hashlib.sha256((name + json.dumps(arguments, sort_keys=True)).encode()).hexdigest()[:12]
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_" + digest, "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)}}],
    }


def respond(messages):
    c = Conversation(messages)
    last = messages[-1]
    if c.intent is None:
        if any(m["role"] == "assistant" for m in messages):
            return say("I'm sorry, I can only help with orders: where they are, refunds, "
                       "cancellations and address changes.")
        return say("Happy to help. What can I do for you today?")

    order_id = c.order_id()
    if order_id is None:
        email = EMAIL.search(c.user_text)
        if email and not c.last_call("find_orders_by_email"):
            return call("find_orders_by_email", email=email.group(0))
        if c.guesses_id and not c.calls:
            # The failure: inventing an id instead of asking for it.
            return call("get_order", order_id="#W1000")
        if not any(m["role"] == "assistant" and "order number" in (m.get("content") or "")
                   for m in messages):
            return say("Could you give me your order number? It starts with #W.")
        return say("Without an order number I can't look into this, sorry.")

    lookup = c.last_call("get_order")
    if lookup is None or lookup[1].get("order_id") != order_id:
        return call("get_order", order_id=order_id)
    if not lookup[2].get("ok"):
        if last["role"] == "tool":
            return say(f"I couldn't find order {order_id}. Could you double-check the order number?")
        return say("I'm sorry, I still can't find that order.")
    order = lookup[2]["result"]
    status = order.get("status", "unknown")

    if c.intent == "status":
        return say(f"Order {order_id} is {status}.")

    if c.intent in DONE:
        tool, succeeded, failed, default = DONE[c.intent]
        done = c.last_call(tool)
        if done is not None:
            if done[2].get("ok"):
                return say(succeeded.format(order_id=order_id))
            if c.intent == "refund" and c.claims_after_failure:
                return say("All sorted: your refund has been processed.")
            message = done[2].get("error", {}).get("message", default)
            return say(failed.format(order_id=order_id, message=message))

    if c.intent == "refund":
        if c.claims_without_call:
            return say(f"Your refund for order {order_id} has been issued; you'll see it in 3-5 days.")
        if c.skips_confirmation or (c.asked_to_confirm and YES.search(c.last_user)):
            return call("refund_order", order_id=order_id, reason="customer request")
        if c.asked_to_confirm:
            return say("Alright, I won't refund it.")
        total = order.get("total", "the full amount")
        return say(f"I can refund order {order_id} for ${total}. Shall I go ahead?")

    if c.intent == "cancel":
        if status != "pending":
            return say(f"Order {order_id} is {status}, so it can't be cancelled.")
        return call("cancel_order", order_id=order_id)

    if c.intent == "address":
        match = re.search(r"\d+ [^.?!]*\d{5}", c.user_text)
        if match is None:
            return say("What is the new shipping address?")
        return call("update_shipping_address", order_id=order_id, address=match.group(0))

    if c.intent == "find":
        found = c.last_call("find_orders_by_email")
        if found and found[2].get("ok"):
            ids = ", ".join(o["order_id"] for o in found[2]["result"])
            return say(f"I found these orders: {ids}.")
        return say("I couldn't find any orders for that email.")

    return say("Is there anything else I can help with?")


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        try:
            reply = {"id": request["id"], "message": respond(request["messages"])}
        except Exception as error:  # a bug in the agent is a row error, not a crash
            reply = {"id": request.get("id"), "error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
