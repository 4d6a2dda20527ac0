// keepalive-idle.js N - secrets-proxy.bats keepalive-idle: N plain HTTP connections to
// other.test:80 and N HTTPS ones to api.example.test (terminated by the proxy), each sends one
// request, reads its answer and then stays idle; prints "answered A" once all are answered,
// then for each connection the remote closes "closed after S s"; exits after 45 s.
const net = require("net");
const tls = require("tls");
const fs = require("fs");
const n = Number(process.argv[2]);
const t0 = Date.now();
let answered = 0;
function one(s, host) {
  let got = "";
  s.on("data", (d) => {
    got += d;
    if (got.includes("\r\n\r\n") && !s.done) {
      s.done = true;
      if (++answered === 2 * n) console.log(`answered ${answered}`);
    }
  });
  s.on("close", () => console.log(`closed after ${Math.round((Date.now() - t0) / 1000)} s`));
  s.on("error", () => {});
  s.write(`GET /idle HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
}
const ca = fs.readFileSync(process.env.SSL_CERT_FILE || "/dev/agentrt-ca-bundle.crt");
for (let i = 0; i < n; i++) {
  const p = net.connect({host: "203.0.113.20", port: 80}, () => one(p, "other.test"));
  p.on("error", () => {});
  const t = tls.connect({host: "203.0.113.10", port: 443, servername: "api.example.test", ca}, () =>
    one(t, "api.example.test"));
  t.on("error", () => {});
}
setTimeout(() => process.exit(0), 45000);
