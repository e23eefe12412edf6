#!/usr/bin/env python3
"""What reading a stream costs loadlab (issue 37, item 7): CPU per event of a Server-Sent
Events stream, against a peer that reads the same streams (bench/sse_peer, a small Go client
on the standard library), and CPU per request of a one-event stream against a plain request.

The built-in target serves `/sse/ticks?rate=R&count=N` (N events `{"tick": i}` R a second, then
`data: [DONE]`) on core 0; each client runs alone on core 1 (taskset), closed model, VUS
streams at once for SECONDS, alternating client by client, RUNS times. CPU is the client
process's user + system time (getrusage of the child), divided by the events (or requests)
it read: loadlab's from its run.json, the peer's from its own count.

    cargo build --release && python3 bench/streaming_cost.py [--runs 5] [--seconds 4]

Prints a Markdown table of medians; each run's figures go to $OUT/streaming_cost.jsonl.
"""

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COUNT = 200
EVENT_RATE = 20000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd):
    """Runs cmd; its stdout and the CPU seconds (user + system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout, cpu


def loadlab_run(binary, scenario, work):
    json_path = os.path.join(work, "run.json")
    _, cpu = timed(["taskset", "-c", "1", binary, "run", scenario, "--quiet", "--allow-saturated",
                    "--json", json_path, "--results", os.path.join(work, "results")])
    with open(json_path) as f:
        run = json.load(f)
    events = (run.get("stream") or {}).get("events", 0)
    return cpu, run["requests"]["total"] if isinstance(run["requests"], dict) else run["requests"], events


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/loadlab"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--vus", type=int, default=20)
    args = ap.parse_args()
    out_dir = os.environ.get("OUT", tempfile.mkdtemp(prefix="loadlab-streaming-cost-"))
    work = tempfile.mkdtemp(prefix="loadlab-sse-")
    peer = os.path.join(work, "sse_peer")
    subprocess.run(["go", "build", "-o", peer, "."], cwd=os.path.join(ROOT, "bench/sse_peer"),
                   check=True)
    port = free_port()
    target = subprocess.Popen(["taskset", "-c", "0", args.bin, "target", "--listen",
                               f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    base = f"http://127.0.0.1:{port}"
    ticks = f"/sse/ticks?rate={EVENT_RATE}&count={COUNT}"
    one = "/sse/ticks?rate=100000&count=1"
    load = f"load: {{ model: closed, vus: {args.vus}, duration: {args.seconds}s }}\n"

    def scenario(name, path, stream):
        text = f"name: {name}\ntarget: {base}\n{load}steps:\n  - name: s\n    get: '{path}'\n"
        if stream:
            text += "    stream: { format: sse, tokens: events, done: '[DONE]' }\n"
        p = os.path.join(work, f"{name}.yaml")
        with open(p, "w") as f:
            f.write(text)
        return p

    streams = scenario("streams", ticks, True)
    single = scenario("single", one, True)
    plain = scenario("plain", "/api/ping", False)
    rows = {k: [] for k in ("loadlab_event", "peer_event", "loadlab_stream_req", "loadlab_plain_req")}
    log = open(os.path.join(out_dir, "streaming_cost.jsonl"), "a")
    try:
        for i in range(args.runs):
            cpu, requests, events = loadlab_run(args.bin, streams, work)
            rows["loadlab_event"].append(1e6 * cpu / max(events, 1))
            out, pcpu = timed(["taskset", "-c", "1", peer, base + ticks, str(args.vus),
                               f"{args.seconds}s"])
            pstreams, pevents, pfailed = map(int, out.split())
            rows["peer_event"].append(1e6 * pcpu / max(pevents, 1))
            scpu, sreq, _ = loadlab_run(args.bin, single, work)
            rows["loadlab_stream_req"].append(1e6 * scpu / max(sreq, 1))
            qcpu, qreq, _ = loadlab_run(args.bin, plain, work)
            rows["loadlab_plain_req"].append(1e6 * qcpu / max(qreq, 1))
            record = {"run": i, "loadlab": {"cpu_s": cpu, "streams": requests, "events": events},
                      "peer": {"cpu_s": pcpu, "streams": pstreams, "events": pevents,
                               "failed": pfailed},
                      "one_event": {"cpu_s": scpu, "requests": sreq},
                      "plain": {"cpu_s": qcpu, "requests": qreq}}
            log.write(json.dumps(record) + "\n")
            print(json.dumps(record), file=sys.stderr)
    finally:
        target.terminate()
        target.wait()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"\n{args.runs} runs of {args.seconds} s, {args.vus} streams at once, {COUNT} events"
          f" each at {EVENT_RATE}/s; medians, CPU of the client process:\n")
    print("| measure | loadlab | Go peer (net/http + bufio) | ratio |")
    print("|---|---|---|---|")
    print(f"| µs of CPU per SSE event (incl. its share of the request) | {med['loadlab_event']:.2f}"
          f" | {med['peer_event']:.2f} | {med['loadlab_event'] / med['peer_event']:.2f} |")
    print(f"| µs of CPU per request, one-event stream | {med['loadlab_stream_req']:.1f} | | |")
    print(f"| µs of CPU per request, plain GET /api/ping | {med['loadlab_plain_req']:.1f} | | "
          f"{med['loadlab_stream_req'] / med['loadlab_plain_req']:.2f} (stream / plain) |")


if __name__ == "__main__":
    main()
