#!/usr/bin/env python3
"""A WebSocket server written with Python `websockets` (another implementation than
loadlab's), for tests/websocket.rs: it counts what it received and sent, and has the fault
endpoints the tests need.

    python3 scripts/ws_server.py PORT

Paths:
  /echo          sends every text or binary message back
  /drop          drops the TCP connection (no close frame) on the first message
  /big?bytes=N   answers the first message with one message of N bytes
  /ping          like /echo, and pings every 50 ms, closing (1011) when a pong is 200 ms late
GET /counts (plain HTTP) answers the counts as JSON. Prints `listening PORT` when ready.
"""

import asyncio
import json
import logging
import sys
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve

COUNTS = {"sessions": 0, "received": 0, "sent": 0, "bytes_received": 0,
          "bytes_sent": 0, "close_codes": {}, "pings_unanswered": 0}


def size(message):
    return len(message.encode() if isinstance(message, str) else message)


async def send(ws, message):
    await ws.send(message)
    COUNTS["sent"] += 1
    COUNTS["bytes_sent"] += size(message)


async def ping_loop(ws):
    while True:
        await asyncio.sleep(0.05)
        try:
            waiter = await ws.ping()
            await asyncio.wait_for(waiter, 0.2)
        except asyncio.TimeoutError:
            COUNTS["pings_unanswered"] += 1
            await ws.close(1011, "pong late")
            return
        except Exception:
            return


async def handler(ws):
    url = urlsplit(ws.request.path)
    COUNTS["sessions"] += 1
    pinger = asyncio.create_task(ping_loop(ws)) if url.path == "/ping" else None
    try:
        async for message in ws:
            COUNTS["received"] += 1
            COUNTS["bytes_received"] += size(message)
            if url.path == "/drop":
                ws.transport.abort()
                return
            if url.path == "/big":
                n = int(parse_qs(url.query).get("bytes", ["2000000"])[0])
                await send(ws, "x" * n)
                continue
            await send(ws, message)
    except Exception:
        pass
    finally:
        if pinger:
            pinger.cancel()
        code = str(ws.close_code) if ws.close_code is not None else "none"
        COUNTS["close_codes"][code] = COUNTS["close_codes"].get(code, 0) + 1


def process_request(connection, request):
    if request.path == "/counts":
        return connection.respond(HTTPStatus.OK, json.dumps(COUNTS) + "\n")
    return None


async def main(port):
    # Connections that close before a request (loadlab's reachability probe) are not errors.
    logging.getLogger("websockets").setLevel(logging.CRITICAL)
    async with serve(handler, "127.0.0.1", port, process_request=process_request,
                     ping_interval=None, max_size=None) as server:
        print("listening", port, flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
