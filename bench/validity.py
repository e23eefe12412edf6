#!/usr/bin/env python3
"""Measures the validity judgement itself (issue 21): its false alarms on a quiet machine and
its detection of a generator disturbed by CPU hogs, against a ground truth it does not see.

Ground truth is the target's own view. The built-in target reports its service time in
`Server-Timing`; loadlab records it beside the client's latency. The client's p99 exceeds the
server's by the loopback path and the generator's own delays; the first is the baseline (the
median excess over the quiet runs), so

    distortion = (client p99 - server p99) - baseline excess,  as a share of the client p99.

A run flagged invalid for contention (generator_saturated, host_contended, cpu_stolen,
scheduler_late) with distortion below LOW is a false alarm; a run left valid with distortion
above HIGH is a miss; in between either verdict is defensible and counted as neither.

    python3 bench/validity.py [--bin target/release/loadlab] [--quick]
    python3 bench/validity.py --timer [--runs 20]

Prints one table (Markdown); every run's figures go to $OUT/validity.jsonl.

`--timer` measures the other side (issue 35): quiet open runs at 100/s, 400/s and 2,000/s
against `/health` (sub-millisecond service), which a floor tuned on another machine called
saturated. Its table gives, per rate, how many runs were valid, the send lag p99 (latency
minus service time at p99, what the generator's timing added), the host timer's p95 lateness
and the floor it set, and how many runs the old fixed 0.5 ms floor would have flagged.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

LOW = 0.10   # distortion below this share of p99: the run's numbers are fine
HIGH = 0.25  # distortion above this share of p99: the run's numbers are not
CONTENTION = {"generator_saturated", "host_contended", "cpu_stolen", "host_disturbed",
              "scheduler_late"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpu, argv):
    return ["taskset", "-c", str(cpu)] + argv if cpu is not None else argv


class Target:
    def __init__(self, binary, cpu=None):
        self.port = free_port()
        self.proc = subprocess.Popen(
            pinned(cpu, [binary, "target", "--listen", f"127.0.0.1:{self.port}",
                         "--workers", "16", "--service-time", "1ms"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the target did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Hogs:
    """Busy loops (a shell `while :; do :; done` each), pinned to the given cores."""

    def __init__(self, cpus):
        self.procs = [subprocess.Popen(pinned(c, ["sh", "-c", "while :; do :; done"]))
                      for c in cpus]
        time.sleep(0.3)

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


def one_run(binary, port, load, cpu, scratch):
    out = os.path.join(scratch, "run.json")
    if os.path.exists(out):
        os.remove(out)
    argv = pinned(cpu, [binary, "run", "--url", f"http://127.0.0.1:{port}/api/ping",
                        *load.split(), "--duration", "3s", "--no-progress", "--quiet",
                        "--results", os.path.join(scratch, "results"), "--json", out])
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    r = json.load(open(out))
    g = r["generator"]
    server = r.get("server_latency_ms") or {}
    kinds = [x["kind"] for x in r["validity"]["reasons"]]
    others = (r.get("resources") or {}).get("host_load") or {}
    return {
        "exit": code,
        "kinds": kinds,
        "flagged": any(k in CONTENTION for k in kinds),
        "p50": r["latency_ms"]["p50"],
        "p99": r["latency_ms"]["p99"],
        "server_p99": server.get("p99", 0.0),
        "excess": r["latency_ms"]["p99"] - server.get("p99", 0.0),
        "pause_p99": (g.get("pauses_ms") or {}).get("p99"),
        "service_p99": r["service_time_ms"]["p99"],
        "lag_p99": g.get("scheduler_lag_ms_p99"),
        "waiting": g.get("run_delay_share"),
        "others": [p["name"] for p in others.get("top_others", [])][:2],
        "requests": r["requests"]["total"],
    }


def timer_run(binary, port, rate, scratch):
    out = os.path.join(scratch, "run.json")
    if os.path.exists(out):
        os.remove(out)
    argv = [binary, "run", "--url", f"http://127.0.0.1:{port}/health", "--rate", rate,
            "--duration", "5s", "--no-progress", "--quiet",
            "--results", os.path.join(scratch, "results"), "--json", out]
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    r = json.load(open(out))
    g = r["generator"]
    lat, svc = r["latency_ms"], r["service_time_ms"]
    # The old rule: a send delay of at least 0.5 ms and more than 10% of the latency at p50,
    # p95 or p99 (one step here, so the run's percentiles are the step's).
    old = any(lat[q] - svc[q] >= 0.5 and lat[q] - svc[q] > 0.1 * lat[q]
              for q in ("p50", "p95", "p99"))
    return {
        "exit": code,
        "kinds": [x["kind"] for x in r["validity"]["reasons"]],
        "send_lag_p99": lat["p99"] - svc["p99"],
        "latency_p99": lat["p99"],
        "scheduler_lag_p99": g.get("scheduler_lag_ms_p99"),
        "timer_p95": (g.get("host_timer") or {}).get("p95_ms"),
        "floor": g.get("delay_floor_ms"),
        "cpu": g.get("cpu_percent"),
        "steal": g.get("steal_percent") or 0.0,
        "timer_p99": (g.get("host_timer") or {}).get("p99_ms"),
        "old_rule_flags": old,
    }


def timer_table(binary, runs, scratch, log, rates=("100/s", "400/s", "2000/s")):
    target = Target(binary)
    rows = {}
    try:
        for rate in rates:
            rows[rate] = []
            for i in range(runs):
                row = timer_run(binary, target.port, rate, scratch)
                row.update(case="timer", load=rate, index=i)
                log.write(json.dumps(row) + "\n")
                rows[rate].append(row)
                print(f"  {rate} #{i}: exit {row['exit']} {row['kinds']} send lag p99 "
                      f"{row['send_lag_p99']:.3f} timer p95 {row['timer_p95']} p99 "
                      f"{row['timer_p99']} floor {row['floor']} steal {row['steal']:.1f}%",
                      file=sys.stderr)
    finally:
        target.stop()
    print("| load (`/health`, 5 s) | runs | valid | invalid kinds | send lag p99 (median / max) "
          "| latency p99 (median) | host timer p95 (median) | floor (median) | generator CPU "
          "(median) | steal (median / max) | valid with steal < 1% | old 0.5 ms floor would flag |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = lambda xs: statistics.median(x or 0.0 for x in xs)
    for rate, rs in rows.items():
        kinds = sorted({k for r in rs for k in r["kinds"]})
        print(f"| `--rate {rate}` | {len(rs)} | {sum(not r['kinds'] for r in rs)} | "
              f"{', '.join(kinds) or '-'} | {med(r['send_lag_p99'] for r in rs):.3f} / "
              f"{max(r['send_lag_p99'] for r in rs):.3f} ms | "
              f"{med(r['latency_p99'] for r in rs):.3f} ms | "
              f"{med(r['timer_p95'] for r in rs):.3f} ms | {med(r['floor'] for r in rs):.2f} ms | "
              f"{med(r['cpu'] for r in rs):.1f}% | {med(r['steal'] for r in rs):.1f} / "
              f"{max(r['steal'] for r in rs):.1f}% | "
              f"{sum(not r['kinds'] for r in rs if r['steal'] < 1.0)} of "
              f"{sum(r['steal'] < 1.0 for r in rs)} | {sum(r['old_rule_flags'] for r in rs)} |")


def case(name, binary, load, runs, target_cpu, generator_cpu, hog_cpus, scratch, log):
    target = Target(binary, target_cpu)
    hogs = Hogs(hog_cpus) if hog_cpus else None
    rows = []
    try:
        for i in range(runs):
            row = one_run(binary, target.port, load, generator_cpu, scratch)
            row.update(case=name, load=load, index=i)
            log.write(json.dumps(row) + "\n")
            rows.append(row)
            print(f"  {name} {load} #{i}: exit {row['exit']} {row['kinds']} p99 {row['p99']:.2f} "
                  f"server {row['server_p99']:.2f} pause p99 {row['pause_p99']} waiting "
                  f"{row['waiting']}", file=sys.stderr)
    finally:
        if hogs:
            hogs.stop()
        target.stop()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/loadlab")
    ap.add_argument("--quick", action="store_true", help="5 runs per case instead of 20/10")
    ap.add_argument("--timer", action="store_true",
                    help="quiet open runs at 100/400/2000/s against /health (issue 35)")
    ap.add_argument("--runs", type=int, default=20, help="runs per rate with --timer")
    ap.add_argument("--rates", default="100/s,400/s,2000/s",
                    help="the rates of --timer, comma-separated")
    ap.add_argument("--only", help="run only the cases whose name or load contains this text "
                    "(their table rows use the quiet baseline of all loads when theirs is not run)")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    n_clean, n_hog = (5, 3) if args.quick else (20, 10)
    if not shutil.which("taskset"):
        sys.exit("taskset (util-linux) is needed")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit("two cores are needed")
    gen_cpu, other_cpu = cpus[-1], cpus[0]
    out_dir = os.environ.get("OUT", "bench/out-validity")
    os.makedirs(out_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="loadlab-validity-")
    log = open(os.path.join(out_dir, "validity.jsonl"), "w")
    if args.timer:
        try:
            timer_table(binary, args.runs, scratch, log, args.rates.split(","))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    plan = [
        # name, load, runs, target cpu, generator cpu, hog cpus
        ("quiet", "--vus 10", n_clean, None, None, []),
        ("quiet", "--rate 500/s", n_clean, None, None, []),
        ("quiet", "--rate 2000/s", n_hog, None, None, []),
        ("hog on the generator's core", "--rate 500/s", n_hog, other_cpu, gen_cpu, [gen_cpu]),
        ("hog on the generator's core", "--vus 10", n_hog, other_cpu, gen_cpu, [gen_cpu]),
        ("hog on the other core", "--vus 10", n_hog, other_cpu, gen_cpu, [other_cpu]),
        ("hog on every core", "--rate 500/s", n_hog, None, None, cpus),
    ]
    if args.only:
        plan = [p for p in plan if args.only in f"{p[0]} {p[1]}"]
    results = []
    try:
        for name, load, runs, tcpu, gcpu, hogs in plan:
            results.append((name, load, case(name, binary, load, runs, tcpu, gcpu, hogs,
                                             scratch, log)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    # The loopback baseline of each load, measured on the quiet machine: what the path and the
    # load's own method (the open model's batch window at dense rates) add without contention.
    quiet = {load: [r["excess"] for r in rows] for name, load, rows in results if name == "quiet"}
    everything = [x for xs in quiet.values() for x in xs]
    baselines = {load: statistics.median(xs) for load, xs in quiet.items()}
    everything = everything or [0.25]  # without quiet runs: this machine's usual loopback excess
    print("\nBaseline (median client p99 - server p99 of the quiet runs of the same load): "
          + ", ".join(f"`{k}` {v:.3f} ms" for k, v in baselines.items())
          + f"; false alarm: flagged with distortion < {LOW:.0%} of p99; miss: valid with "
          f"distortion > {HIGH:.0%}.\n")
    print("| case | load | runs | invalid (contention) | false alarms | misses | "
          "p99 (median) | server p99 | distortion (median) | probe p99 (median) | "
          "workers waiting (median) | named |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, load, rows in results:
        baseline = baselines.get(load, statistics.median(everything))
        for r in rows:
            r["distortion"] = max(0.0, r["excess"] - baseline) / max(r["p99"], 1e-9)
        flagged = sum(r["flagged"] for r in rows)
        false_alarms = sum(r["flagged"] and r["distortion"] < LOW for r in rows)
        misses = sum(not r["flagged"] and r["distortion"] > HIGH for r in rows)
        med = lambda k: statistics.median(r[k] or 0.0 for r in rows)
        named = sorted({n for r in rows for n in r["others"]})
        print(f"| {name} | `{load}` | {len(rows)} | {flagged} | {false_alarms} | {misses} | "
              f"{med('p99'):.2f} ms | {med('server_p99'):.2f} ms | {med('distortion'):.0%} | "
              f"{med('pause_p99'):.2f} ms | {med('waiting'):.1%} | {', '.join(named) or '-'} |")


if __name__ == "__main__":
    main()
