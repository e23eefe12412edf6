#!/usr/bin/env python3
"""A gRPC server written with Python `grpcio` (another implementation than loadlab's target),
for the gRPC tests: it serves permits.v1.Permits from examples/proto/permits.proto, compiled
at start with grpc_tools.protoc into a temporary directory (removed once the generated modules
are imported), with server reflection on, counts
what it did, and has the fault flags the tests need.

    python3 scripts/grpc_server.py PORT [--counts-port P] [--unavailable-every N]
                                        [--delay-ms D] [--stream-stop-after N]
                                        [--no-reflection]

  --unavailable-every N  every Nth Create aborts with UNAVAILABLE
  --delay-ms D           Create and Get sleep D ms first; a call whose deadline comes sooner
                         ends DEADLINE_EXCEEDED at its deadline
  --stream-stop-after N  Watch sends N messages, then aborts with UNAVAILABLE "stream stopped"
  --no-reflection        serve no reflection service (clients need the .proto)

Serves gRPC on 127.0.0.1:PORT (0 = any free port) and `GET /counts` (plain HTTP, JSON) on
127.0.0.1:P (default any free port): calls per method and final status name, messages
received and sent per method (the Permits methods; reflection calls are not counted).
Reflection answers as grpc.reflection.v1alpha and as v1 (same servicer). Prints
`listening GRPC_PORT COUNTS_PORT` when ready.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from grpc_reflection.v1alpha import reflection
from grpc_tools import protoc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROTO_DIR = os.path.join(ROOT, "examples", "proto")
CYCLE = ["RECEIVED", "IN_REVIEW", "APPROVED"]


def compile_proto():
    # The generated modules are needed only until they are imported: the directory is removed
    # at once, so nothing is left behind however the server ends (the tests SIGKILL it).
    with tempfile.TemporaryDirectory(prefix="loadlab-grpc-") as out:
        include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
        rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--python_out={out}",
                          f"--grpc_python_out={out}", "permits.proto"])
        if rc != 0:
            sys.exit(f"grpc_server: protoc failed on {PROTO_DIR}/permits.proto ({rc})")
        sys.path.insert(0, out)
        try:
            import permits_pb2
            import permits_pb2_grpc
        finally:
            sys.path.remove(out)
    return permits_pb2, permits_pb2_grpc


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = {}
        self.received = {}
        self.sent = {}
        self.creates = 0

    def add(self, table, method, n=1):
        with self.lock:
            table[method] = table.get(method, 0) + n

    def call(self, method, status):
        with self.lock:
            by = self.calls.setdefault(method, {})
            by[status] = by.get(status, 0) + 1

    def next_create(self):
        with self.lock:
            self.creates += 1
            return self.creates

    def json(self):
        with self.lock:
            return json.dumps({"calls": self.calls, "messages_received": self.received,
                               "messages_sent": self.sent}) + "\n"


class Failed(Exception):
    """A call that ends with a status other than OK (counted, then aborted)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def ended_early(context):
    """How a call the client left ended: at its deadline, or cancelled."""
    left = context.time_remaining()
    return "DEADLINE_EXCEEDED" if left is not None and left <= 0 else "CANCELLED"


def make_servicer(pb, pb_grpc, args, counts):
    def delay(context):
        """Sleeps --delay-ms, or until the deadline when that comes first."""
        if args.delay_ms <= 0:
            return
        wanted = args.delay_ms / 1000
        left = context.time_remaining()
        if left is not None and left < wanted:
            time.sleep(max(left, 0))
            raise Failed(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
        time.sleep(wanted)

    def unary(method, work):
        def handler(self, request, context):
            counts.add(counts.received, method)
            try:
                answer = work(request, context)
            except Failed as f:
                counts.call(method, f.code.name)
                context.abort(f.code, f.message)
            if not context.is_active():
                # The client went away (reset, or its deadline) while the call was working.
                counts.call(method, ended_early(context))
                return answer
            counts.add(counts.sent, method)
            counts.call(method, "OK")
            return answer
        return handler

    def create(request, context):
        n = counts.next_create()
        delay(context)
        if args.unavailable_every and n % args.unavailable_every == 0:
            raise Failed(grpc.StatusCode.UNAVAILABLE, f"create {n} refused (--unavailable-every)")
        if not request.applicant:
            raise Failed(grpc.StatusCode.INVALID_ARGUMENT, "applicant is empty")
        return pb.Permit(id=f"permit-{n}", applicant=request.applicant, kind=request.kind,
                         status=pb.RECEIVED, created_unix_ms=int(time.time() * 1000),
                         padding=b"." * request.pad_bytes)

    def get(request, context):
        delay(context)
        if not request.id:
            raise Failed(grpc.StatusCode.INVALID_ARGUMENT, "id is empty")
        if request.id == "missing":
            raise Failed(grpc.StatusCode.NOT_FOUND, "no permit has the id missing")
        return pb.Permit(id=request.id, applicant=f"applicant of {request.id}",
                         kind="building", status=pb.IN_REVIEW,
                         created_unix_ms=int(time.time() * 1000))

    def watch(self, request, context):
        counts.add(counts.received, "Watch")
        events = request.events or 3
        every = (request.every_ms or 10) / 1000
        status = "CANCELLED"
        try:
            if not request.id or events > 1000:
                status = "INVALID_ARGUMENT"
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "id empty or events > 1000")
            start = time.monotonic()
            for seq in range(1, events + 1):
                if args.stream_stop_after is not None and seq > args.stream_stop_after:
                    status = "UNAVAILABLE"
                    context.abort(grpc.StatusCode.UNAVAILABLE, "stream stopped")
                wait = start + (seq - 1) * every - time.monotonic()
                left = context.time_remaining()
                if left is not None and wait > left:
                    # The next event would come after the deadline: end there.
                    time.sleep(max(left, 0))
                    status = "DEADLINE_EXCEEDED"
                    context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
                if wait > 0:
                    time.sleep(wait)
                if not context.is_active():
                    return
                yield pb.PermitEvent(id=request.id, status=pb.Status.Value(CYCLE[(seq - 1) % 3]),
                                     seq=seq)
                counts.add(counts.sent, "Watch")
            status = "OK"
        finally:
            if status == "CANCELLED":
                status = ended_early(context)
            counts.call("Watch", status)

    servicer = type("Permits", (pb_grpc.PermitsServicer,), {
        "Create": unary("Create", create),
        "Get": unary("Get", get),
        "Watch": watch,
    })
    return servicer()


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def add_reflection_v1(server, names):
    """grpcio-reflection has only v1alpha; v1 has the same messages on the wire, so the same
    servicer also answers under the v1 name (as grpc's C++ and Go servers serve both)."""
    from grpc_reflection.v1alpha import reflection_pb2 as rpb
    servicer = reflection.ReflectionServicer(names)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=rpb.ServerReflectionRequest.FromString,
        response_serializer=rpb.ServerReflectionResponse.SerializeToString)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": handler}),))


def serve_counts(counts, port):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/counts":
                self.send_error(404)
                return
            body = counts.json().encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--counts-port", type=int, default=0)
    parser.add_argument("--unavailable-every", type=int, default=0)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--stream-stop-after", type=int, default=None)
    parser.add_argument("--no-reflection", action="store_true")
    args = parser.parse_args()
    pb, pb_grpc = compile_proto()
    counts = Counts()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
    pb_grpc.add_PermitsServicer_to_server(make_servicer(pb, pb_grpc, args, counts), server)
    names = (pb.DESCRIPTOR.services_by_name["Permits"].full_name, REFLECTION_V1,
             reflection.SERVICE_NAME)
    if not args.no_reflection:
        reflection.enable_server_reflection(names, server)
        add_reflection_v1(server, names)
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    counts_port = serve_counts(counts, args.counts_port)
    print("listening", port, counts_port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
