#!/usr/bin/env python3
"""Measuring and aggregating helper for bench/run.sh and bench/h2.sh (Python 3 standard library only).

Subcommands:
  status URL                      print nginx stub_status "requests" counter
  record --runs FILE ...          parse one generator run and append it to runs.jsonl
  sample-rss PID CSV              sample /proc/PID/status VmRSS once a second until PID exits
  report --runs FILE --out FILE   write the markdown results (medians) and print them
  report-h2 --runs FILE --out FILE  the same for bench/h2.sh (loadlab vs h2load per setting)
"""

import argparse
import json
import os
import re
import statistics
import sys
import time
import urllib.request


# ---------------------------------------------------------------- status

def read_status(url):
    """nginx stub_status body:
        Active connections: 1
        server accepts handled requests
         12 12 345
        Reading: 0 Writing: 1 Waiting: 0
    """
    with urllib.request.urlopen(url, timeout=5) as r:
        body = r.read().decode()
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("server accepts handled requests"):
            accepts, handled, requests = (int(x) for x in lines[i + 1].split())
            return requests
    raise SystemExit(f"unexpected stub_status body from {url!r}: {body!r}")


def cmd_status(a):
    try:
        print(read_status(a.url))
    except OSError as e:  # URLError, connection refused, timeout
        print(f"measure.py status: cannot read {a.url}: {e}", file=sys.stderr)
        return 1


# ---------------------------------------------------------------- record

def parse_time_file(path):
    """/usr/bin/time -f '%e %U %S %M' -o PATH: last non-empty line holds the numbers
    (earlier lines may hold 'Command exited with non-zero status N')."""
    try:
        lines = [l for l in open(path).read().splitlines() if l.strip()]
    except OSError:
        return None
    for line in reversed(lines):
        parts = line.split()
        if len(parts) == 4:
            try:
                e, u, s, m = float(parts[0]), float(parts[1]), float(parts[2]), int(parts[3])
                return {"wall_s": e, "user_s": u, "sys_s": s, "maxrss_kib": m}
            except ValueError:
                continue
    return None


def parse_wrk_stdout(path):
    try:
        text = open(path).read()
    except OSError:
        return {}
    out = {}
    m = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", text)
    if m:
        out["gen_requests"] = int(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        out["gen_non2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: (.*)", text)
    if m:
        out["gen_socket_errors"] = m.group(1).strip()
    return out


def parse_h2load_stdout(path):
    try:
        text = open(path).read()
    except OSError:
        return {}
    out = {}
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored", text)
    if m:
        out["gen_requests"] = int(m.group(4))
        out["gen_failed"] = int(m.group(5)) + int(m.group(6))
    return out


def dig(d, path):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def parse_loadlab_json(path):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        return {"json_error": f"{type(e).__name__}: {e}"}
    return {
        "gen_requests": dig(j, "requests.total"),
        "gen_failed": dig(j, "requests.failed"),
        "dropped": dig(j, "iterations.dropped"),
        "lag_p99_ms": dig(j, "lag_ms.p99"),
        "latency_p99_ms": dig(j, "latency_ms.p99"),
        "valid": dig(j, "valid"),
        "saturated": dig(j, "generator.saturated"),
        "gen_cpu_s": dig(j, "generator.cpu_seconds"),
    }


def cmd_record(a):
    rec = {"mode": a.mode, "generator": a.gen, "rep": a.rep, "rc": a.rc}
    t = parse_time_file(a.time_file)
    problems = []
    if t is None:
        problems.append(f"no /usr/bin/time output in {a.time_file}")
    else:
        rec.update(t)
    rec["requests"] = a.after - a.before - 1  # the "after" status request counts itself
    if a.stdout and a.gen == "wrk":
        rec.update(parse_wrk_stdout(a.stdout))
    if a.stdout and a.gen == "h2load":
        rec.update(parse_h2load_stdout(a.stdout))
    if a.json:
        rec.update(parse_loadlab_json(a.json))
        if "json_error" in rec:
            problems.append(f"result JSON unreadable: {rec['json_error']}")
    if a.rc != 0:
        problems.append(f"exit status {a.rc}")
    if rec["requests"] <= 0:
        problems.append("nginx counted no requests")
    if t is not None and rec["requests"] > 0:
        cpu = t["user_s"] + t["sys_s"]
        rec["cpu_s"] = cpu
        rec["cpu_us_per_req"] = cpu / rec["requests"] * 1e6
        rec["req_per_s"] = rec["requests"] / t["wall_s"] if t["wall_s"] > 0 else None
    rec["ok"] = not problems
    rec["problems"] = problems
    with open(a.runs, "a") as f:
        f.write(json.dumps(rec) + "\n")
    # one progress line for the console
    def fmt(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "-"
    line = (f"  {a.mode:6} {a.gen:8} rep {a.rep}: requests={rec['requests']} "
            f"req/s={fmt(rec.get('req_per_s'), '.0f')} cpu={fmt(rec.get('cpu_s'), '.2f')}s "
            f"cpu/req={fmt(rec.get('cpu_us_per_req'), '.2f')}us "
            f"rss={fmt((rec.get('maxrss_kib') or 0) / 1024, '.1f')}MiB")
    if a.mode in ("open", "long"):
        line += f" dropped={rec.get('dropped')} lag_p99={rec.get('lag_p99_ms')}ms"
    if problems:
        line += "  FAILED: " + "; ".join(problems)
    print(line, flush=True)
    return 0 if not problems else 1


# ---------------------------------------------------------------- sample-rss

def vmrss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None  # zombie: no VmRSS line


def cmd_sample_rss(a):
    start = time.monotonic()
    n = 0
    with open(a.csv, "w") as f:
        f.write("t_s,rss_kib\n")
        while True:
            n += 1
            # sleep to the next whole second after start (no drift)
            delay = start + n * a.interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            rss = vmrss_kib(a.pid)
            if rss is None:
                break
            f.write(f"{n * a.interval:g},{rss}\n")
            f.flush()


def read_rss_csv(path):
    rows = []
    try:
        with open(path) as f:
            next(f, None)
            for line in f:
                t, r = line.strip().split(",")
                rows.append((float(t), int(r)))
    except OSError:
        pass
    return rows


def rss_at(rows, t):
    """RSS of the last sample at or before t seconds."""
    best = None
    for ts, r in rows:
        if ts <= t + 1e-9:
            best = (ts, r)
    return best


# ---------------------------------------------------------------- report

def med(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None


def mx(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return max(xs) if xs else None


def f(v, spec=".1f", none="-"):
    return format(v, spec) if isinstance(v, (int, float)) else none


def pair_ratios(runs, gen, peer):
    """CPU µs/req of `gen` / `peer`, per repetition (each pair ran back to back)."""
    by = {(r["generator"], r["rep"]): r for r in runs if r["ok"]}
    ratios = []
    for rep in sorted({r["rep"] for r in runs}):
        l, k = by.get((gen, rep)), by.get((peer, rep))
        if l and k and l.get("cpu_us_per_req") and k.get("cpu_us_per_req"):
            ratios.append(l["cpu_us_per_req"] / k["cpu_us_per_req"])
    return ratios


def cmd_report(a):
    runs = []
    with open(a.runs) as fh:
        for line in fh:
            if line.strip():
                runs.append(json.loads(line))
    out = []
    w = out.append

    w("# loadlab efficiency benchmark")
    w("")
    if a.meta and os.path.exists(a.meta):
        for line in open(a.meta).read().splitlines():
            w(f"- {line}")
        w("")

    # closed model --------------------------------------------------------
    closed = [r for r in runs if r["mode"] == "closed"]
    if closed:
        w(f"## Closed model ({a.closed_desc})")
        w("")
        w("Medians over repetitions; requests are counted by nginx (stub_status); CPU = user+sys "
          "of the generator process tree (/usr/bin/time); req/s = nginx requests / generator wall time.")
        w("")
        w("| generator | reps ok | req/s | CPU µs/req | peak RSS MiB | CPU s | requests |")
        w("|---|---|---|---|---|---|---|")
        gens = []
        for r in closed:
            if r["generator"] not in gens:
                gens.append(r["generator"])
        for g in gens:
            rs = [r for r in closed if r["generator"] == g]
            ok = [r for r in rs if r["ok"]]
            w(f"| {g} | {len(ok)}/{len(rs)} | {f(med([r.get('req_per_s') for r in ok]), '.0f')} "
              f"| {f(med([r.get('cpu_us_per_req') for r in ok]), '.2f')} "
              f"| {f(med([(r.get('maxrss_kib') or 0) / 1024 for r in ok if r.get('maxrss_kib')]), '.1f')} "
              f"| {f(med([r.get('cpu_s') for r in ok]), '.2f')} "
              f"| {f(med([r.get('requests') for r in ok]), '.0f')} |")
        w("")
        # per-pair ratios (pairs = same repetition number, run back to back)
        for peer, target in (("wrk", "target ≤ 1.0×, stretch ≤ 0.8×"),
                             ("baseline", "within 3 %: ≤ 1.03×")):
            if peer not in gens or "loadlab" not in gens:
                continue
            ratios = pair_ratios(closed, "loadlab", peer)
            w(f"**CPU µs/req ratio loadlab / {peer}: {f(med(ratios), '.3f')}×** "
              f"(median of {len(ratios)} per-pair ratios: {', '.join(f(x, '.3f') for x in ratios) or '-'}; "
              f"spread {f(min(ratios) if ratios else None, '.3f')}–{f(max(ratios) if ratios else None, '.3f')}; {target})")
            w("")

    # open model ----------------------------------------------------------
    opn = [r for r in runs if r["mode"] == "open"]
    if opn:
        ok = [r for r in opn if r["ok"]]
        w(f"## Open model ({a.open_desc})")
        w("")
        w("| generator | reps ok | req/s | CPU µs/req | peak RSS MiB | dropped (median / max) "
          "| lag p99 ms (median / max) | requests.total (JSON) | requests (nginx) |")
        w("|---|---|---|---|---|---|---|---|---|")
        w(f"| loadlab | {len(ok)}/{len(opn)} | {f(med([r.get('req_per_s') for r in ok]), '.0f')} "
          f"| {f(med([r.get('cpu_us_per_req') for r in ok]), '.2f')} "
          f"| {f(med([(r.get('maxrss_kib') or 0) / 1024 for r in ok if r.get('maxrss_kib')]), '.1f')} "
          f"| {f(med([r.get('dropped') for r in ok]), '.0f')} / {f(mx([r.get('dropped') for r in ok]), '.0f')} "
          f"| {f(med([r.get('lag_p99_ms') for r in ok]), '.3f')} / {f(mx([r.get('lag_p99_ms') for r in ok]), '.3f')} "
          f"| {f(med([r.get('gen_requests') for r in ok]), '.0f')} "
          f"| {f(med([r.get('requests') for r in ok]), '.0f')} |")
        w("")
        w("Targets: ≤ 10 µs/req, 0 dropped, lag p99 < 1 ms.")
        w("")

    # RSS flatness ----------------------------------------------------------
    if a.rss_csv:
        rows = read_rss_csv(a.rss_csv)
        w(f"## RSS flatness ({a.rss_desc})")
        w("")
        if not rows:
            w("No RSS samples (the generator did not run or exited at once).")
        else:
            a10, a60 = rss_at(rows, 10), rss_at(rows, a.rss_end)
            peak = max(r for _, r in rows)
            if a10 and a60:
                growth = (a60[1] - a10[1]) / a10[1] * 100 if a10[1] else 0.0
                verdict = "flat" if abs(growth) <= a.rss_tolerance else "NOT flat"
                w(f"| RSS @ {a10[0]:g} s | RSS @ {a60[0]:g} s | change | peak | samples | verdict (±{a.rss_tolerance:g} %) |")
                w("|---|---|---|---|---|---|")
                w(f"| {a10[1] / 1024:.1f} MiB | {a60[1] / 1024:.1f} MiB | {growth:+.1f} % "
                  f"| {peak / 1024:.1f} MiB | {len(rows)} | {verdict} |")
            else:
                w(f"Too few samples ({len(rows)}) to compare 10 s with {a.rss_end:g} s.")
            w("")
            w(f"Samples (once a second): `{os.path.relpath(a.rss_csv)}`.")
        for r in (r for r in runs if r["mode"] == "long"):
            w("")
            w(f"Same run: {'ok' if r['ok'] else 'FAILED (' + '; '.join(r['problems']) + ')'}, "
              f"{f(r.get('req_per_s'), '.0f')} req/s, {f(r.get('cpu_us_per_req'), '.2f')} CPU µs/req, "
              f"dropped {r.get('dropped')}, lag p99 {f(r.get('lag_p99_ms'), '.3f')} ms.")
        w("")

    # raw runs ----------------------------------------------------------------
    w("## All runs")
    w("")
    w("| mode | generator | rep | rc | wall s | user s | sys s | max RSS MiB | requests (nginx) "
      "| gen-reported | req/s | CPU µs/req | dropped | lag p99 ms | problems |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        w(f"| {r['mode']} | {r['generator']} | {r['rep']} | {r['rc']} | {f(r.get('wall_s'), '.2f')} "
          f"| {f(r.get('user_s'), '.2f')} | {f(r.get('sys_s'), '.2f')} "
          f"| {f((r.get('maxrss_kib') or 0) / 1024 if r.get('maxrss_kib') else None, '.1f')} "
          f"| {r.get('requests')} | {f(r.get('gen_requests'), 'd')} "
          f"| {f(r.get('req_per_s'), '.0f')} | {f(r.get('cpu_us_per_req'), '.2f')} "
          f"| {r.get('dropped') if r.get('dropped') is not None else '-'} "
          f"| {f(r.get('lag_p99_ms'), '.3f')} | {'; '.join(r.get('problems') or []) or ''} |")
    w("")

    text = "\n".join(out)
    with open(a.out, "w") as fh:
        fh.write(text)
    print(text)
    return 0


# ---------------------------------------------------------------- report-h2

def cmd_report_h2(a):
    """bench/h2.sh: per connections × streams setting, loadlab vs h2load, interleaved."""
    runs = [json.loads(line) for line in open(a.runs) if line.strip()]
    out = []
    w = out.append
    w("# loadlab HTTP/2 efficiency benchmark (h2c, vs h2load)")
    w("")
    if a.meta and os.path.exists(a.meta):
        for line in open(a.meta).read().splitlines():
            w(f"- {line}")
        w("")
    w("Requests counted by nginx (stub_status); CPU = user+sys of the generator (/usr/bin/time); "
      "ratio = loadlab / h2load CPU µs/req of the same repetition (run back to back).")
    w("")
    w("| connections × streams | generator | reps ok | req/s | CPU µs/req | peak RSS MiB |")
    w("|---|---|---|---|---|---|")
    modes = []
    for r in runs:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    # h2load, then each loadlab generator (`loadlab`, `loadlab-wire`: GENS in h2.sh).
    gens = ["h2load"] + sorted({r["generator"] for r in runs if r["generator"] != "h2load"})
    mine = [g for g in gens if g.startswith("loadlab")]
    for mode in modes:
        for g in gens:
            rs = [r for r in runs if r["mode"] == mode and r["generator"] == g]
            ok = [r for r in rs if r["ok"]]
            w(f"| {mode} | {g} | {len(ok)}/{len(rs)} | {f(med([r.get('req_per_s') for r in ok]), '.0f')} "
              f"| {f(med([r.get('cpu_us_per_req') for r in ok]), '.2f')} "
              f"| {f(med([(r.get('maxrss_kib') or 0) / 1024 for r in ok if r.get('maxrss_kib')]), '.1f')} |")
    w("")
    w("| connections × streams | generator | ratio to h2load (median) | spread (min–max) | per repetition |")
    w("|---|---|---|---|---|")
    for mode in modes:
        for g in mine:
            ratios = pair_ratios([r for r in runs if r["mode"] == mode], g, "h2load")
            w(f"| {mode} | {g} | **{f(med(ratios), '.2f')}×** | {f(min(ratios) if ratios else None, '.2f')}–"
              f"{f(max(ratios) if ratios else None, '.2f')} | {', '.join(f(x, '.2f') for x in ratios) or '-'} |")
    w("")
    w("Target ≤ 1.0× h2load (stretch 0.8×).")
    w("")
    w("## All runs")
    w("")
    w("| mode | generator | rep | rc | wall s | user s | sys s | requests (nginx) | gen-reported | CPU µs/req | problems |")
    w("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        w(f"| {r['mode']} | {r['generator']} | {r['rep']} | {r['rc']} | {f(r.get('wall_s'), '.2f')} "
          f"| {f(r.get('user_s'), '.2f')} | {f(r.get('sys_s'), '.2f')} | {r.get('requests')} "
          f"| {f(r.get('gen_requests'), 'd')} | {f(r.get('cpu_us_per_req'), '.2f')} "
          f"| {'; '.join(r.get('problems') or []) or ''} |")
    w("")
    text = "\n".join(out)
    with open(a.out, "w") as fh:
        fh.write(text)
    print(text)
    return 0


# ---------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("status")
    s.add_argument("url")
    s.set_defaults(fn=cmd_status)

    s = sub.add_parser("record")
    s.add_argument("--runs", required=True)
    s.add_argument("--mode", required=True)
    s.add_argument("--gen", required=True)
    s.add_argument("--rep", required=True, type=int)
    s.add_argument("--rc", required=True, type=int)
    s.add_argument("--time-file", required=True)
    s.add_argument("--before", required=True, type=int)
    s.add_argument("--after", required=True, type=int)
    s.add_argument("--stdout")
    s.add_argument("--json")
    s.set_defaults(fn=cmd_record)

    s = sub.add_parser("sample-rss")
    s.add_argument("pid", type=int)
    s.add_argument("csv")
    s.add_argument("--interval", type=float, default=1.0)
    s.set_defaults(fn=cmd_sample_rss)

    s = sub.add_parser("report")
    s.add_argument("--runs", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--meta")
    s.add_argument("--closed-desc", default="")
    s.add_argument("--open-desc", default="")
    s.add_argument("--rss-csv")
    s.add_argument("--rss-desc", default="")
    s.add_argument("--rss-end", type=float, default=60.0)
    s.add_argument("--rss-tolerance", type=float, default=10.0)
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("report-h2")
    s.add_argument("--runs", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--meta")
    s.set_defaults(fn=cmd_report_h2)

    a = p.parse_args()
    sys.exit(a.fn(a) or 0)


if __name__ == "__main__":
    main()
