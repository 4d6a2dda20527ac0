#!/usr/bin/env python3
"""integration/cri/cri.py - a small CRI v1 client for the tests (a kubelet's calls, no kubelet).

Usage:
  cri.py --addr SOCK call METHOD [JSON]   one unary call; JSON is the request (proto field
                                          names), the response is printed as JSON
  cri.py exec URL                         the stream of an Exec response (WebSocket,
                                          v4.channel.k8s.io): stdout/stderr copied, exit
                                          status = the command's
  cri.py --addr SOCK bench ...            RunPodSandbox+CreateContainer+StartContainer
                                          latency, handlers alternated (bench/cri.sh)

METHOD is RuntimeService/Version, ImageService/ListImages, ...  The message classes come from
runtime_pb2 (protoc --python_out of integration/cri/runtime.proto), found on PYTHONPATH.
A gRPC error prints `cri: METHOD: CODE: details` and exits 2.
"""
import argparse
import base64
import json
import os
import socket
import statistics
import struct
import sys
import time
import urllib.parse

import grpc
from google.protobuf import json_format

import runtime_pb2 as pb

PACKAGE = "runtime.v1"


def method_types(method):
    """'RuntimeService/Version' -> (request class, response class) from the proto's service."""
    svc, _, name = method.partition("/")
    sd = pb.DESCRIPTOR.services_by_name.get(svc)
    if sd is None or name not in sd.methods_by_name:
        raise SystemExit("cri: unknown method `%s`" % method)
    m = sd.methods_by_name[name]
    return getattr(pb, m.input_type.name), getattr(pb, m.output_type.name)


class Client:
    def __init__(self, addr, timeout=60):
        self.chan = grpc.insecure_channel("unix://" + os.path.abspath(addr))
        self.timeout = timeout
        self.stubs = {}

    def call(self, method, req):
        if method not in self.stubs:
            reqt, respt = method_types(method)
            self.stubs[method] = (
                reqt,
                self.chan.unary_unary(
                    "/%s.%s" % (PACKAGE, method),
                    request_serializer=reqt.SerializeToString,
                    response_deserializer=respt.FromString,
                ),
            )
        reqt, stub = self.stubs[method]
        if isinstance(req, dict):
            req = json_format.ParseDict(req, reqt())
        return stub(req, timeout=self.timeout)


def to_json(msg):
    return json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                     including_default_value_fields=True)


def cmd_call(args):
    req = json.loads(args.json) if args.json else {}
    try:
        resp = Client(args.addr, args.timeout).call(args.method, req)
    except grpc.RpcError as e:
        print("cri: %s: %s: %s" % (args.method, e.code().name, e.details()), file=sys.stderr)
        return 2
    except json_format.ParseError as e:
        print("cri: %s: request: %s" % (args.method, e), file=sys.stderr)
        return 2
    d = to_json(resp)
    # ExecSync's output is bytes (base64 in JSON): give the text too
    for k in ("stdout", "stderr"):
        if k in d and isinstance(getattr(resp, k, None), bytes):
            d[k] = getattr(resp, k).decode("utf-8", "replace")
    print(json.dumps(d, sort_keys=True))
    return 0


# --- Exec streaming: WebSocket with the v4.channel.k8s.io subprotocol -------------------

def ws_send(sock, opcode, payload):
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def read_exact(sock, buf, n):
    while len(buf) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError("stream closed")
        buf += chunk
    return buf


def ws_frames(sock, buf):
    """Yield (opcode, payload) of the server's frames (unmasked, maybe fragmented)."""
    msg, mop = b"", None
    while True:
        buf = read_exact(sock, buf, 2)
        b0, b1 = buf[0], buf[1]
        n, off = b1 & 0x7F, 2
        if n == 126:
            buf = read_exact(sock, buf, 4)
            n, off = struct.unpack("!H", buf[2:4])[0], 4
        elif n == 127:
            buf = read_exact(sock, buf, 10)
            n, off = struct.unpack("!Q", buf[2:10])[0], 10
        mkey = b""
        if b1 & 0x80:
            buf = read_exact(sock, buf, off + 4)
            mkey, off = buf[off:off + 4], off + 4
        buf = read_exact(sock, buf, off + n)
        data, buf = buf[off:off + n], buf[off + n:]
        if mkey:
            data = bytes(b ^ mkey[i % 4] for i, b in enumerate(data))
        op = b0 & 0x0F
        if op >= 8:  # control frames are never fragmented
            yield op, data
            continue
        if op != 0:
            mop = op
        msg += data
        if b0 & 0x80:
            yield mop, msg
            msg, mop = b"", None


def cmd_exec(args):
    u = urllib.parse.urlsplit(args.url)
    if u.scheme != "http":
        print("cri: exec: only http stream URLs: %s" % args.url, file=sys.stderr)
        return 2
    sock = socket.create_connection((u.hostname, u.port or 80), timeout=args.timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    path = u.path + ("?" + u.query if u.query else "")
    sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
                  "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n" % (path, u.netloc, key)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            print("cri: exec: the stream server closed before answering", file=sys.stderr)
            return 2
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode("latin-1")
    if " 101 " not in status + " ":
        print("cri: exec: %s" % status, file=sys.stderr)
        return 2
    out = {1: sys.stdout.buffer, 2: sys.stderr.buffer}
    errmsg = b""
    try:
        for op, data in ws_frames(sock, buf):
            if op == 8:
                break
            if op == 9:
                ws_send(sock, 10, data)
                continue
            if op not in (1, 2) or not data:
                continue
            ch, payload = data[0], data[1:]
            if ch in out:
                out[ch].write(payload)
                out[ch].flush()
            elif ch == 3:
                errmsg += payload
    except EOFError:
        pass
    finally:
        sock.close()
    if not errmsg:
        return 0
    st = json.loads(errmsg)
    if st.get("status") == "Success":
        return 0
    for cause in st.get("details", {}).get("causes", []):
        if cause.get("reason") == "ExitCode":
            return int(cause["message"])
    print("cri: exec: %s" % st.get("message", errmsg.decode("utf-8", "replace")), file=sys.stderr)
    return 2


# --- bench: pod + container to running, handlers alternated ------------------------------

def pod_config(name, uid, args):
    return {
        "metadata": {"name": name, "uid": uid, "namespace": "bench"},
        "log_directory": os.path.join(args.log_dir, uid),
        "linux": {"cgroup_parent": args.cgroup_parent},
    }


def start_pod(c, handler, name, uid, args):
    cfg = pod_config(name, uid, args)
    os.makedirs(cfg["log_directory"], exist_ok=True)
    pod = c.call("RuntimeService/RunPodSandbox", {"config": cfg, "runtime_handler": handler})
    ctr = c.call("RuntimeService/CreateContainer", {
        "pod_sandbox_id": pod.pod_sandbox_id,
        "config": {"metadata": {"name": "c"}, "image": {"image": args.image},
                   "command": ["sleep", "1000"], "log_path": "c.log"},
        "sandbox_config": cfg,
    })
    c.call("RuntimeService/StartContainer", {"container_id": ctr.container_id})
    return pod.pod_sandbox_id


def stop_pod(c, pod_id):
    c.call("RuntimeService/StopPodSandbox", {"pod_sandbox_id": pod_id})
    c.call("RuntimeService/RemovePodSandbox", {"pod_sandbox_id": pod_id})


def cmd_bench(args):
    c = Client(args.addr, args.timeout)
    handlers = args.handlers.split(",")
    samples = {h: [] for h in handlers}
    ratios = []
    fails = 0
    # one untimed warm-up per handler
    for h in handlers:
        stop_pod(c, start_pod(c, h, "warm-" + h, "bench-warm-" + h, args))
    for r in range(args.rounds):
        row = {}
        order = handlers if r % 2 == 0 else handlers[::-1]
        for h in order:
            uid = "bench-%d-%s" % (r, h)
            t0 = time.perf_counter()
            try:
                pod_id = start_pod(c, h, "b%d-%s" % (r, h), uid, args)
            except grpc.RpcError as e:
                print("cri: bench: %s round %d: %s: %s" % (h, r, e.code().name, e.details()),
                      file=sys.stderr)
                fails += 1
                continue
            row[h] = (time.perf_counter() - t0) * 1000.0
            stop_pod(c, pod_id)
        for h, v in row.items():
            samples[h].append(v)
        if len(handlers) == 2 and all(h in row for h in handlers):
            ratios.append(row[handlers[0]] / row[handlers[1]])
        print("round\t%d\t%s" % (r, "\t".join("%s=%.1f" % (h, row.get(h, float("nan")))
                                                for h in handlers)), file=sys.stderr)
    res = {"rounds": args.rounds, "failures": fails,
           "median_ms": {h: statistics.median(v) if v else None for h, v in samples.items()},
           "samples_ms": samples}
    if ratios:
        res["paired_median_ratio"] = statistics.median(ratios)
        res["ratio"] = "%s/%s" % (handlers[0], handlers[1])
    print(json.dumps(res))
    return 0 if fails == 0 else 1


def main():
    ap = argparse.ArgumentParser(prog="cri.py")
    ap.add_argument("--addr", default="/run/containerd/containerd.sock")
    ap.add_argument("--timeout", type=float, default=60)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("call")
    p.add_argument("method")
    p.add_argument("json", nargs="?")
    p = sub.add_parser("exec")
    p.add_argument("url")
    p = sub.add_parser("bench")
    p.add_argument("--handlers", default="agentrt,runc")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--image", required=True)
    p.add_argument("--cgroup-parent", required=True)
    p.add_argument("--log-dir", required=True)
    args = ap.parse_args()
    return {"call": cmd_call, "exec": cmd_exec, "bench": cmd_bench}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
