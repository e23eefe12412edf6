#!/usr/bin/env python3
"""An OpenAI-style streaming server from another implementation than loadlab's target, for
tests/streaming.rs: aiohttp's web server (PyPI, scripts/requirements-sse.txt, installed by
scripts/setup-test-deps.sh), HTTP/1.1 keep-alive with chunked bodies.

POST /v1/chat/completions streams Server-Sent Events on a schedule known in advance: after the
request is read, the role chunk and the first token at TTFT_MS, then a token every ITL_MS
(`max_tokens` tokens, default 8), a usage chunk, and `data: [DONE]`. Events are sent at absolute
times from the request's arrival (no drift). GET /counts answers what it did as JSON: requests,
events (data events but [DONE]) and tokens sent.

Hostile streams, for the typed errors: GET /hostile/<kind> with kind
  endless   one event whose data lines never end (no blank line, ever)
  huge      one 10 MB event
  nonewline bytes forever without a line end
  utf8      an event with bytes that are not UTF-8
  stall     one token, then nothing (the connection stays open)
  truncate  two tokens, then the connection closes without [DONE] (and without the last chunk)

Usage: sse_server.py PORT [TTFT_MS ITL_MS]; prints `listening PORT` when ready.
"""

import asyncio
import json
import sys

from aiohttp import web

COUNTS = {"requests": 0, "events": 0, "tokens": 0}


def event(payload: dict) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


def delta(content=None, role=None, finish=None) -> dict:
    d = {}
    if role:
        d["role"] = role
    if content is not None:
        d["content"] = content
    return {
        "id": "chatcmpl-py",
        "object": "chat.completion.chunk",
        "model": "py",
        "choices": [{"index": 0, "delta": d, "finish_reason": finish}],
    }


async def stream(request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    return response


async def chat(request: web.Request) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    start = loop.time()
    ttft, itl = request.app["ttft"], request.app["itl"]
    req = json.loads(await request.read() or b"{}")
    tokens = int(req.get("max_tokens", 8))
    prompt = sum(len(str(m.get("content", "")).split()) for m in req.get("messages", []))
    COUNTS["requests"] += 1
    response = await stream(request)
    for i in range(tokens):
        await asyncio.sleep(max(0.0, start + ttft + i * itl - loop.time()))
        out = b""
        if i == 0:
            out += event(delta(content="", role="assistant"))
            COUNTS["events"] += 1
        finish = "length" if i == tokens - 1 else None
        out += event(delta(content=f"w{i} ", finish=finish))
        COUNTS["events"] += 1
        COUNTS["tokens"] += 1
        await response.write(out)
    usage = {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens}
    out = event({"id": "chatcmpl-py", "object": "chat.completion.chunk", "choices": [], "usage": usage})
    COUNTS["events"] += 1
    await response.write(out + b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def counts(request: web.Request) -> web.Response:
    return web.json_response(COUNTS)


async def hostile(request: web.Request) -> web.StreamResponse:
    kind = request.match_info["kind"]
    response = await stream(request)
    if kind == "endless":
        while True:
            await response.write(b"data: " + b"x" * 1000 + b"\n")
    if kind == "huge":
        await response.write(b"data: " + b"y" * (10 * 1024 * 1024) + b"\n\n")
        await asyncio.sleep(3600)
    if kind == "nonewline":
        while True:
            await response.write(b"z" * 4096)
    if kind == "utf8":
        await response.write(b'data: {"choices":[{"delta":{"content":"\xff\xfe"}}]}\n\n')
        await asyncio.sleep(3600)
    if kind == "stall":
        await response.write(event(delta(content="w0 ")))
        await asyncio.sleep(3600)
    if kind == "truncate":
        await response.write(event(delta(content="w0 ")) + event(delta(content="w1 ")))
        # Closed without the last chunk of the chunked body (and without [DONE]).
        request.transport.close()
    return response


async def main():
    port = int(sys.argv[1])
    app = web.Application()
    app["ttft"] = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.1
    app["itl"] = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.02
    app.add_routes(
        [
            web.post("/v1/chat/completions", chat),
            web.get("/counts", counts),
            web.get("/hostile/{kind}", hostile),
        ]
    )
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"listening {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
