#!/usr/bin/env python3
"""fake-apiserver.py - the few discovery answers `kubectl apply --dry-run=client`
needs to map node.k8s.io/v1 RuntimeClass, with no cluster (integration tests).

    fake-apiserver.py PORTFILE    listens on 127.0.0.1:<free port>, writes the port

Every object GET is a 404, so kubectl reports "created (dry run)".
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

GROUP = {"name": "node.k8s.io",
         "versions": [{"groupVersion": "node.k8s.io/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "node.k8s.io/v1", "version": "v1"}}
ROUTES = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [GROUP]},
    "/apis/node.k8s.io": dict(GROUP, kind="APIGroup", apiVersion="v1"),
    "/apis/node.k8s.io/v1": {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "node.k8s.io/v1",
        "resources": [{"name": "runtimeclasses", "singularName": "", "namespaced": False,
                       "kind": "RuntimeClass",
                       "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}]},
}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        body = ROUTES.get(path)
        code = 200
        if body is None:
            code = 404
            body = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": "not found"}
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    srv = HTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    srv.serve_forever()


if __name__ == "__main__":
    main()
