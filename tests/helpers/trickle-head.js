// trickle-head.js SECS - secrets-proxy.bats slowloris: a plain HTTP connection to
// other.test:80 sends one whole request, reads its answer, then starts a second request head;
// an HTTPS one to api.example.test (terminated by the proxy) starts its first head.  Each
// then sends one more byte of its head a second, never ending it.  Prints "answered" for the
// plain connection's first answer, then for each "NAME closed after S s: FIRST-LINE" (the
// last status line read) or, after SECS seconds, "NAME open after SECS s".
const net = require("net");
const tls = require("tls");
const fs = require("fs");
const secs = Number(process.argv[2]);
const t0 = Date.now();
const pad = "GET /slow HTTP/1.1\r\nHost: HOST\r\n" + "X-Pad: a\r\n".repeat(100);
const live = {};
function trickle(name, s, host) {
  const head = pad.replace("HOST", host);
  let i = 0;
  live[name] = s;
  const t = setInterval(() => { if (i < head.length) s.write(head[i++]); }, 1000);
  s.on("close", () => {
    clearInterval(t);
    delete live[name];
    const last = ((s.got || "").match(/HTTP\/1\.1 \d{3}[^\r]*/g) || ["-"]).pop();
    console.log(`${name} closed after ${Math.round((Date.now() - t0) / 1000)} s: ${last}`);
  });
}
const p = net.connect({host: "203.0.113.20", port: 80}, () =>
  p.write("GET /first HTTP/1.1\r\nHost: other.test\r\nConnection: keep-alive\r\n\r\n"));
p.got = "";
p.on("data", (d) => {
  p.got += d;
  if (!p.started && p.got.includes("\r\n\r\n")) {
    p.started = true;
    console.log("answered");
    trickle("plain", p, "other.test");
  }
});
p.on("error", () => {});
const ca = fs.readFileSync(process.env.SSL_CERT_FILE || "/dev/agentrt-ca-bundle.crt");
const t = tls.connect({host: "203.0.113.10", port: 443, servername: "api.example.test", ca}, () =>
  trickle("tls", t, "api.example.test"));
t.got = "";
t.on("data", (d) => { t.got += d; });
t.on("error", () => {});
setTimeout(() => {
  for (const n of Object.keys(live)) console.log(`${n} open after ${secs} s`);
  process.exit(0);
}, secs * 1000);
