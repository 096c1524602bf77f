#!/usr/bin/env python3
"""A test agent that answers out of order and says which request it answers.

Each request is answered from its own thread after a random delay of up to
50 ms. The reply quotes the request's id and the number of messages it saw,
and carries the order in which replies were written, so a test can check
that every reply reached its own request and that replies overtook each
other. Standard library only.
"""
import json
import random
import sys
import threading
import time

lock = threading.Lock()
written = 0


def answer(request):
    global written
    time.sleep(random.random() * 0.05)
    with lock:
        written += 1
        text = f"{request['id']}|{len(request['messages'])}|{written}"
        reply = {"id": request["id"], "message": {"role": "assistant", "content": text}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


for line in sys.stdin:
    threading.Thread(target=answer, args=(json.loads(line),)).start()
