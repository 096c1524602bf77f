#!/usr/bin/env python3
"""The same load as `cargo run -p sparring-llm --example load`, through the
official `openai` package's AsyncOpenAI: --requests chat completions with
--concurrency in flight, each one rollout turn (system prompt, the person's
ask, one tool), the reply parsed into the SDK's objects. Prints one JSON line.
"""
import argparse
import asyncio
import json
import time

import openai

try:  # openai >= 3 ships on httpx2; older releases on httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx

TOOLS = [{"type": "function", "function": {
    "name": "get_order", "description": "Look up an order by its id",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]


async def main(url: str, requests: int, concurrency: int) -> None:
    # Pool as large as the concurrency, as sparring's client has.
    http = openai.DefaultAsyncHttpxClient(
        limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        timeout=httpx.Timeout(120.0),
    )
    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, http_client=http)
    state = {"next": 0, "in_flight": 0, "peak": 0, "errors": 0}

    async def worker() -> None:
        while True:
            i = state["next"]
            if i >= requests:
                return
            state["next"] = i + 1
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
            try:
                reply = await client.chat.completions.create(
                    model="fake-model",
                    messages=[
                        {"role": "system", "content": "You help shop customers. Look orders up before you answer."},
                        {"role": "user", "content": f"Where is my order #W{i:07}?"},
                    ],
                    tools=TOOLS,
                    tool_choice="auto",
                    seed=i,
                )
                _ = reply.choices[0].message.tool_calls
            except Exception:
                state["errors"] += 1
            finally:
                state["in_flight"] -= 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    await client.close()
    print(json.dumps({
        "client": f"openai-python {openai.__version__}",
        "requests": requests, "errors": state["errors"], "seconds": seconds,
        "rps": requests / seconds, "peak_in_flight": state["peak"],
    }))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=1000)
    a = ap.parse_args()
    asyncio.run(main(a.url, a.requests, a.concurrency))
