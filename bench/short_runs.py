#!/usr/bin/env python3
"""Short open-model runs of two loadlab builds, interleaved, against `loadlab target` (not
pinned, as a user runs them): how many came out valid, and the send lag and latency tails of
each build (medians over the runs, and the worst). A 1 s run judges its p99 on the ten latest
sends, so a stall of the generator's own at the start or at an interval's end is what makes
such a run invalid on a quiet host. Driven by bench/short-runs.sh."""
import argparse
import json
import os
import socket
import statistics
import subprocess
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(binary, url, args, path):
    subprocess.run([binary, "run", "--url", url, "--rate", f"{args.rate}/s",
                    "--duration", f"{args.duration}s", "--quiet", "--no-progress",
                    "--results", os.path.join(args.out, "store"), "--json", path],
                   capture_output=True, timeout=args.duration + 60)
    j = json.load(open(path))
    kinds = [r["kind"] for r in j["validity"].get("reasons", [])]
    return {"valid": j["valid"], "kinds": kinds,
            "lag_p99": j["lag_ms"]["p99"], "lag_max": j["lag_ms"]["max"],
            "lat_p99": j["latency_ms"]["p99"], "lat_max": j["latency_ms"]["max"],
            "rss_mib": (j["generator"].get("max_rss_bytes") or 0) / 2**20}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="first build (binary)")
    p.add_argument("--b", required=True, help="second build (binary)")
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--duration", type=float, default=1.0)
    p.add_argument("--path", default="/api/ping")
    p.add_argument("--out", default="bench/out-short-runs")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    port = free_port()
    target = subprocess.Popen([args.b, "target", "--listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}{args.path}"
        runs = {"a": [], "b": []}
        for i in range(args.pairs):
            order = ["a", "b"] if i % 2 == 0 else ["b", "a"]
            for name in order:
                path = os.path.join(args.out, f"{name}-{i}.json")
                runs[name].append(one_run(getattr(args, name), url, args, path))
    finally:
        target.terminate()
    print(f"{args.pairs} interleaved pairs, {args.rate}/s for {args.duration} s, "
          f"against loadlab target {args.path}")
    print("| build | valid | invalid kinds | send lag p99 (median, worst) | send lag max (median) "
          "| latency p99 (median) | latency max (median) | peak RSS (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ["a", "b"]:
        r = runs[name]
        med = lambda k: statistics.median(x[k] for x in r)  # noqa: E731
        kinds = sorted({k for x in r for k in x["kinds"]})
        print(f"| {name}: {getattr(args, name)} | {sum(x['valid'] for x in r)}/{len(r)} "
              f"| {', '.join(kinds) or '-'} | {med('lag_p99'):.3f}, "
              f"{max(x['lag_p99'] for x in r):.3f} ms | {med('lag_max'):.3f} ms "
              f"| {med('lat_p99'):.3f} ms | {med('lat_max'):.3f} ms | {med('rss_mib'):.1f} MiB |")
    with open(os.path.join(args.out, "runs.json"), "w") as f:
        json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
