#!/usr/bin/env python3
"""Records a HAR 1.2 file of a browser using the built-in target's API, as a person would with
devtools' "Save all as HAR", for the end-to-end test of `loadlab import har`
(tests/import.rs).

It serves a small HTML page whose script signs in, creates an application, reads it and
submits it with `fetch`; the page's server passes /api/* on to the target (same origin, so no
CORS). Headless Chromium loads the page, driven over the DevTools protocol on a pipe
(`--remote-debugging-pipe`: file descriptors 3 and 4, NUL-separated JSON; no websocket
library needed), and the Network.* events become the HAR's entries.

    python3 scripts/record_har.py --api http://127.0.0.1:8080 --out flow.har [--chromium PATH]

Only the standard library. Exit 0 and the HAR written, or exit 1 and why on stderr.
"""

import argparse
import base64
import datetime
import http.client
import http.server
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Permits</title></head>
<body><h1>Permits</h1><p id="out">working…</p>
<script>
(async () => {
  const json = { "Content-Type": "application/json", "Accept": "application/json" };
  await fetch("/api/ping", { headers: { "Accept": "application/json" } });
  const signin = await fetch("/api/auth/signin", {
    method: "POST", headers: json,
    body: JSON.stringify({ username: "user3", password: "password" }),
  });
  const { token } = await signin.json();
  const auth = { ...json, "Authorization": "Bearer " + token };
  const created = await fetch("/api/applications", {
    method: "POST", headers: auth, body: JSON.stringify({ title: "permit from chromium" }),
  });
  const app = await created.json();
  const got = await fetch("/api/applications/" + app.id, { headers: auth });
  await got.json();
  const submitted = await fetch("/api/applications/" + app.id + "/submit", {
    method: "POST", headers: auth,
  });
  await submitted.json();
  const statuses = [signin.status, created.status, got.status, submitted.status];
  document.getElementById("out").textContent = statuses.join(" ");
  document.title = "done " + statuses.join(" ");
})().catch((e) => { document.title = "failed " + e; });
</script></body></html>
"""


def serve(api):
    """The page at /, /api/* passed on to `api`; returns the server (already serving)."""
    api_url = urllib.parse.urlsplit(api)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, status, headers, body):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            conn = http.client.HTTPConnection(api_url.hostname, api_url.port, timeout=10)
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() in ("content-type", "accept", "authorization")
            }
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            kept = [
                (k, v)
                for k, v in resp.getheaders()
                if k.lower() in ("content-type", "server-timing")
            ]
            conn.close()
            self.reply(resp.status, kept, data)

        def do_GET(self):
            if self.path == "/":
                self.reply(200, [("Content-Type", "text/html; charset=utf-8")], PAGE.encode())
            elif self.path.startswith("/api/"):
                self.forward()
            else:
                self.reply(404, [("Content-Type", "text/plain")], b"not found")

        def do_POST(self):
            if self.path.startswith("/api/"):
                self.forward()
            else:
                self.reply(404, [("Content-Type", "text/plain")], b"not found")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Browser:
    """Headless Chromium spoken to over --remote-debugging-pipe."""

    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # The child reads commands on fd 3 and writes replies and events on fd 4.
            os.dup2(to_child_r, 100)
            os.dup2(from_child_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Chromium's own temporary files (its org.chromium.Chromium.* singleton socket
            # directory) go in the profile too, removed with it even if Chromium is killed.
            env=dict(os.environ, TMPDIR=profile),
            close_fds=False,
            preexec_fn=fds,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=20):
        """Sends a command and returns its result; events read meanwhile are kept."""
        wanted = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read(deadline)
            if msg.get("id") == wanted:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def close(self):
        try:
            self.send("Browser.close")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def iso(wall):
    t = datetime.datetime.fromtimestamp(wall, tz=datetime.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pairs(headers):
    return [{"name": k, "value": v} for k, v in headers.items()]


def har_of(browser, session, events):
    """HAR 1.2 entries from the Network.* events, in start order."""
    requests, responses, finished = {}, {}, {}
    for e in events:
        p = e.get("params", {})
        rid = p.get("requestId")
        if e["method"] == "Network.requestWillBeSent":
            requests[rid] = p
        elif e["method"] == "Network.responseReceived":
            responses[rid] = p
        elif e["method"] == "Network.loadingFinished":
            finished[rid] = p
    entries = []
    for rid, sent in sorted(requests.items(), key=lambda kv: kv[1]["timestamp"]):
        if rid not in responses:
            continue
        req, resp = sent["request"], responses[rid]["response"]
        end = finished.get(rid, {}).get("timestamp", sent["timestamp"])
        ms = max(0.0, (end - sent["timestamp"]) * 1000)
        url = urllib.parse.urlsplit(req["url"])
        post_text = req.get("postData")
        if post_text is None and req.get("hasPostData"):
            post_text = browser.call(
                "Network.getRequestPostData", {"requestId": rid}, session
            ).get("postData")
        try:
            body = browser.call("Network.getResponseBody", {"requestId": rid}, session)
        except RuntimeError:
            body = {"body": "", "base64Encoded": False}
        content = {"size": len(body["body"]), "mimeType": resp.get("mimeType", "")}
        content["text"] = body["body"]
        if body["base64Encoded"]:
            content["encoding"] = "base64"
            content["size"] = len(base64.b64decode(body["body"]))
        version = resp.get("protocol", "http/1.1").upper()
        entry = {
            "startedDateTime": iso(sent["wallTime"]),
            "time": round(ms, 3),
            "request": {
                "method": req["method"],
                "url": req["url"],
                "httpVersion": version,
                "headers": pairs(req.get("headers", {})),
                "queryString": [
                    {"name": k, "value": v} for k, v in urllib.parse.parse_qsl(url.query)
                ],
                "cookies": [],
                "headersSize": -1,
                "bodySize": len(post_text.encode()) if post_text else 0,
            },
            "response": {
                "status": resp["status"],
                "statusText": resp.get("statusText", ""),
                "httpVersion": version,
                "headers": pairs(resp.get("headers", {})),
                "cookies": [],
                "content": content,
                "redirectURL": "",
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {"send": 0, "wait": round(ms, 3), "receive": 0},
            "_resourceType": sent.get("type", "other").lower(),
        }
        if post_text is not None:
            mime = next(
                (v for k, v in req.get("headers", {}).items() if k.lower() == "content-type"),
                "",
            )
            entry["request"]["postData"] = {"mimeType": mime, "text": post_text}
        entries.append(entry)
    return entries


def record(chromium, api, timeout):
    server = serve(api)
    page = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory(prefix="loadlab-chromium-") as profile:
        browser = Browser(chromium, profile)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            browser.call("Network.enable", {}, session)
            browser.call("Page.enable", {}, session)
            browser.call("Page.navigate", {"url": page}, session)
            deadline = time.monotonic() + timeout
            title = ""
            while not title.startswith(("done", "failed")):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the page did not finish (title {title!r})")
                time.sleep(0.1)
                title = browser.call(
                    "Runtime.evaluate", {"expression": "document.title"}, session
                )["result"].get("value", "")
            if not title.startswith("done"):
                raise RuntimeError(f"the page's script failed: {title}")
            events = [e for e in browser.events if e.get("sessionId") == session]
            entries = har_of(browser, session, events)
            version = browser.call("Browser.getVersion").get("product", "Chromium")
        finally:
            browser.close()
            server.shutdown()
    name, _, ver = version.partition("/")
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "scripts/record_har.py", "version": "1"},
            "browser": {"name": name, "version": ver},
            "pages": [
                {
                    "startedDateTime": entries[0]["startedDateTime"] if entries else "",
                    "id": "page_1",
                    "title": page,
                    "pageTimings": {},
                }
            ],
            "entries": [dict(e, pageref="page_1") for e in entries],
        }
    }, title


def stop_on_sigterm(signum, _frame):
    """SIGTERM (a caller giving up) unwinds like an error: the browser is closed and its
    temporary profile removed, which the default action would leave behind."""
    sys.exit(128 + signum)


def main():
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--api", required=True, help="the target's URL, e.g. http://127.0.0.1:8080")
    ap.add_argument("--out", required=True, help="the HAR file to write")
    ap.add_argument("--chromium", help="the browser (default: chromium, chromium-browser or google-chrome on PATH)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds for the page (default 30)")
    args = ap.parse_args()
    chromium = args.chromium or next(
        (p for p in map(shutil.which, ["chromium", "chromium-browser", "google-chrome"]) if p),
        None,
    )
    if not chromium:
        print("record_har: no Chromium found (give --chromium PATH)", file=sys.stderr)
        return 1
    try:
        har, title = record(chromium, args.api, args.timeout)
    except (OSError, RuntimeError, TimeoutError, KeyError) as e:
        print(f"record_har: {e}", file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        json.dump(har, f, indent=2)
    print(f"record_har: {len(har['log']['entries'])} entries ({title}) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
