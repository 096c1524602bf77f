#!/usr/bin/env python3
"""A test agent that answers requests out of order.

Each request is answered from its own thread after a random delay of up to
30 ms, so with several requests in flight the replies come back in a different
order from the requests. Every reply is a final answer. Standard library only.
"""
import json
import random
import sys
import threading
import time

lock = threading.Lock()


def answer(request):
    time.sleep(random.random() * 0.03)
    reply = {"id": request["id"], "message": {"role": "assistant", "content": "Done, thanks for waiting."}}
    with lock:
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


for line in sys.stdin:
    threading.Thread(target=answer, args=(json.loads(line),)).start()
