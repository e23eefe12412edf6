#!/usr/bin/env python3
"""Two loadlab builds, interleaved, against a pinned local nginx: per rate (open model) or VU
count (`--model closed`), the tail (p99, max), the connections opened, the scheduler lag and
the CPU per request of each build, and the median of each over the repetitions. Driven by
bench/openmodel-ab.sh."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import read_status  # noqa: E402
from openmodel import CpuMeter  # noqa: E402


def one_run(name, binary, rate, rep, args):
    json_path = os.path.join(args.out, f"{name}-{rate}-{rep}.json")
    before = read_status(args.status_url)
    with CpuMeter() as m:
        load = ["--rate", f"{rate}/s"] if args.model == "open" else ["--vus", str(rate)]
        subprocess.run(["taskset", "-c", str(args.gen_cpu), binary, "run", "--url", args.url]
                       + load + ["--duration", f"{args.duration}s", "--quiet",
                        "--no-progress", "--json", json_path] + args.extra,
                       capture_output=True, timeout=args.duration + 60)
    time.sleep(0.2)  # nginx finishes the last responses
    requests = read_status(args.status_url) - before - 1
    cpu = m.cpu
    j = json.load(open(json_path))
    return {
        "build": name, "rate": rate, "rep": rep,
        "us_per_req": cpu / max(requests, 1) * 1e6,
        "achieved": requests / args.duration,
        "p99_ms": j["latency_ms"]["p99"], "max_ms": j["latency_ms"]["max"],
        "scheduler_lag_p99_ms": j["generator"].get("scheduler_lag_ms_p99") or 0.0,
        "send_lag_p99_ms": j["lag_ms"]["p99"],
        "connections": sum(j["origins"][0]["connections"].values()),
        "connection_waits": j["requests"].get("delayed_by_connect_limit", 0),
        "dropped": j["iterations"]["dropped"] if args.model == "open" else 0,
        "invalid": [r["kind"] for r in j["validity"]["reasons"]],
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--status-url", required=True)
    p.add_argument("--a", required=True, help="NAME=PATH of the first build")
    p.add_argument("--b", required=True, help="NAME=PATH of the second build")
    p.add_argument("--rates", default="40000,50000,60000",
                   help="arrivals/s (open model) or VUs (closed)")
    p.add_argument("--model", choices=["open", "closed"], default="open")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--duration", type=int, default=5)
    p.add_argument("--gen-cpu", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("extra", nargs="*", help="more `loadlab run` flags, after --")
    args = p.parse_args()
    builds = [tuple(args.a.split("=", 1)), tuple(args.b.split("=", 1))]
    runs = []
    for rep in range(1, args.reps + 1):
        for rate in [int(r) for r in args.rates.split(",")]:
            for name, binary in (builds if rep % 2 else builds[::-1]):
                r = one_run(name, binary, rate, rep, args)
                runs.append(r)
                with open(os.path.join(args.out, "runs.jsonl"), "a") as f:
                    f.write(json.dumps(r) + "\n")
                print(f"[ab] rep {rep} {name:10} {rate:>7}/s: p99 {r['p99_ms']:.1f} ms, max "
                      f"{r['max_ms']:.1f} ms, {r['connections']} connections, scheduler lag p99 "
                      f"{r['scheduler_lag_p99_ms']} ms, {r['us_per_req']:.1f} µs/req, "
                      f"{r['dropped']} dropped {r['invalid'] or ''}", flush=True)
                time.sleep(1)
    cols = ["p99_ms", "max_ms", "connections", "scheduler_lag_p99_ms", "us_per_req", "achieved"]
    print("\n| rate | build | p99 latency (ms) | latency max (ms) | connections | scheduler lag p99 (ms) "
          "| CPU µs/req | achieved/s | runs with drops or invalid |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for rate in sorted({r["rate"] for r in runs}):
        for name, _ in builds:
            rs = [r for r in runs if r["rate"] == rate and r["build"] == name]
            m = {c: statistics.median([r[c] for r in rs]) for c in cols}
            bad = sum(1 for r in rs if r["dropped"] or r["invalid"])
            print(f"| {rate:,}{'/s' if args.model == 'open' else ' VUs'} | {name} | {m['p99_ms']:.1f} | {m['max_ms']:.1f} | "
                  f"{m['connections']:.0f} | {m['scheduler_lag_p99_ms']:.2f} | {m['us_per_req']:.1f} "
                  f"| {m['achieved']:,.0f} | {bad}/{len(rs)} |")
    print("(medians over the repetitions; the builds alternate which goes first)")


if __name__ == "__main__":
    main()
