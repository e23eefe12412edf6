#!/usr/bin/env python3
"""An OpenAI-style streaming server from another implementation than loadlab's target, for
tests/streaming.rs: plain asyncio (the standard library only, so nothing to install), HTTP/1.1
keep-alive with chunked bodies.

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

COUNTS = {"requests": 0, "events": 0, "tokens": 0}


def chunk(payload: dict) -> bytes:
    data = b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


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


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    length = 0
    for line in lines[1:]:
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    return method, path, body


def head(status="200 OK", ctype="text/event-stream", chunked=True, length=None) -> bytes:
    h = f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n"
    h += "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n"
    return (h + "\r\n").encode()


async def chat(writer, body: bytes, ttft: float, itl: float):
    loop = asyncio.get_running_loop()
    start = loop.time()
    req = json.loads(body or b"{}")
    tokens = int(req.get("max_tokens", 8))
    prompt = sum(len(str(m.get("content", "")).split()) for m in req.get("messages", []))
    COUNTS["requests"] += 1
    writer.write(head())
    await writer.drain()
    for i in range(tokens):
        await asyncio.sleep(max(0.0, start + ttft + i * itl - loop.time()))
        out = b""
        if i == 0:
            out += chunk(delta(content="", role="assistant"))
            COUNTS["events"] += 1
        finish = "length" if i == tokens - 1 else None
        out += chunk(delta(content=f"w{i} ", finish=finish))
        COUNTS["events"] += 1
        COUNTS["tokens"] += 1
        writer.write(out)
        await writer.drain()
    usage = {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens}
    out = chunk({"id": "chatcmpl-py", "object": "chat.completion.chunk", "choices": [], "usage": usage})
    COUNTS["events"] += 1
    done = b"data: [DONE]\n\n"
    out += b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done)
    writer.write(out)
    await writer.drain()


def raw(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def hostile(writer, kind: str):
    """Returns False when the connection must close."""
    writer.write(head())
    if kind == "endless":
        while True:
            writer.write(raw(b"data: " + b"x" * 1000 + b"\n"))
            await writer.drain()
    if kind == "huge":
        writer.write(raw(b"data: " + b"y" * (10 * 1024 * 1024) + b"\n\n"))
        await writer.drain()
        await asyncio.sleep(3600)
    if kind == "nonewline":
        while True:
            writer.write(raw(b"z" * 4096))
            await writer.drain()
    if kind == "utf8":
        writer.write(raw(b'data: {"choices":[{"delta":{"content":"\xff\xfe"}}]}\n\n'))
        await writer.drain()
        await asyncio.sleep(3600)
    if kind == "stall":
        writer.write(chunk(delta(content="w0 ")))
        await writer.drain()
        await asyncio.sleep(3600)
    if kind == "truncate":
        writer.write(chunk(delta(content="w0 ")) + chunk(delta(content="w1 ")))
        await writer.drain()
        return False
    return False


async def serve(reader, writer, ttft, itl):
    try:
        while True:
            try:
                method, path, body = await read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if path == "/counts":
                text = json.dumps(COUNTS).encode()
                writer.write(head(ctype="application/json", chunked=False, length=len(text)) + text)
                await writer.drain()
            elif method == "POST" and path == "/v1/chat/completions":
                await chat(writer, body, ttft, itl)
            elif path.startswith("/hostile/"):
                await hostile(writer, path.removeprefix("/hostile/"))
                return
            else:
                writer.write(head("404 Not Found", "text/plain", False, 0))
                await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    port = int(sys.argv[1])
    ttft = float(sys.argv[2]) / 1000 if len(sys.argv) > 2 else 0.1
    itl = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.02
    server = await asyncio.start_server(lambda r, w: serve(r, w, ttft, itl), "127.0.0.1", port)
    print(f"listening {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
