#!/usr/bin/env python3
"""https-echo.py ADDR PORT CERT KEY LOG - the fake internet's HTTPS upstream for secrets.bats.

Every request's head is appended to LOG (host side: the test reads what arrived).  The answer
is JSON with the path, the method, the request body's length and the SHA-256 of the
Authorization and X-Api-Key values (never the values: the container must not get them back).
/bulk/N sends N bytes; /sse streams three server-sent events; /ws answers an upgrade (to the
first protocol asked for) with 101 and then echoes bytes, /ws-unasked does so to any request;
/slow sends a line every 0.2 s for 30 s; /delay answers after 1 s, /delay/N/... after N s;
/early answers 417 at once, the request body left unread (read as the next request).
TRACE answers with the request as received, as Apache does by default.  Plain HTTP when CERT is "-".
"""
import hashlib, json, socket, socketserver, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

addr, port, cert, key, log = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]


def sha(v):
    return hashlib.sha256(v.encode()).hexdigest() if v is not None else None


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            n = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return n
                self.rfile.read(size)
                self.rfile.readline()
                n += size
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        return n

    def handle_one(self):
        with open(log, "a") as f:
            f.write("%s %s %s\n%s\n" % (self.command, self.path, self.headers.get("Host"), str(self.headers)))
        if (self.path == "/ws" and self.headers.get("Upgrade")) or self.path == "/ws-unasked":
            # any protocol asked for (h2c too: a server that then reads HTTP/2 requests);
            # /ws-unasked: a 101 to whatever came
            self.send_response(101)
            self.send_header("Upgrade", self.headers.get("Upgrade", "websocket").split(",")[0].strip())
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", "x")
            self.end_headers()
            self.wfile.flush()
            for _ in range(100):
                d = self.connection.recv(4096)
                if not d:
                    break
                self.connection.sendall(b"echo:" + d)
            self.close_connection = True
            return
        if self.path in ("/sse", "/slow"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(3 if self.path == "/sse" else 150):
                self.wfile.write(b"data: tick %d\n\n" % i)
                self.wfile.flush()
                time.sleep(0.2)
            self.close_connection = True
            return
        if self.path.startswith("/bulk/"):
            total = int(self.path.split("/")[2])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(total))
            self.end_headers()
            chunk = b"x" * 65536
            while total > 0:
                self.wfile.write(chunk[:min(total, len(chunk))])
                total -= min(total, len(chunk))
            return
        if self.path == "/early":
            # a final answer before the body, which is left unread and taken for the next
            # request on the connection (as a server that misframes would)
            self.send_response(417)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        n = self.body()
        if self.path.startswith("/delay"):
            p = self.path.split("/")
            time.sleep(int(p[2]) if len(p) > 3 and p[2].isdigit() else 1)
        out = json.dumps({"method": self.command, "path": self.path, "body_len": n,
                          "auth_sha256": sha(self.headers.get("Authorization")),
                          "xkey_sha256": sha(self.headers.get("X-Api-Key")),
                          "server": addr}).encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = handle_one

    def do_TRACE(self):
        """the request as received (Apache's default, TraceEnable on): what a TRACE exposes"""
        with open(log, "a") as f:
            f.write("%s %s %s\n%s\n" % (self.command, self.path, self.headers.get("Host"), str(self.headers)))
        out = ("%s\r\n%s" % (self.requestline, str(self.headers))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "message/http")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_TRACK = do_trace = do_TRACE


class S(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    address_family = socket.AF_INET6 if ":" in addr else socket.AF_INET


srv = S((addr, port), H)
if cert != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
