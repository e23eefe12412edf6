#!/usr/bin/env python3
"""The peer of bench/ws-roundtrip.sh: CONNS Python `websockets` clients, each sending a text
message and waiting for its echo, ROUND_TRIPS times in a row per session, for SECONDS.
Prints `round_trips cpu_seconds` (this process's user + system CPU time)."""

import asyncio
import resource
import sys
import time

from websockets.asyncio.client import connect


async def client(url, per_session, until, done):
    while time.monotonic() < until:
        async with connect(url, compression=None) as ws:
            for i in range(per_session):
                await ws.send('{"n": %d}' % i)
                await ws.recv()
                done[0] += 1


async def main(url, conns, per_session, seconds):
    done = [0]
    until = time.monotonic() + seconds
    await asyncio.gather(*(client(url, per_session, until, done) for _ in range(conns)))
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(done[0], r.ru_utime + r.ru_stime)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
