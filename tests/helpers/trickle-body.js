// trickle-body.js SECS - secrets-proxy.bats body-trickle: four uploads through the proxy, each
// a POST whose head comes whole at once.  "plain-trickle" (other.test:80) then sends one byte
// of its 100-byte body every 29 s, "tls-trickle" (api.example.test:443, terminated by the
// proxy) one every 2 s; "plain-honest" and "tls-honest" send a 2.5 MiB body at 64 KiB/s
// (16 KiB every 250 ms, 40 s: longer than any one deadline would allow), the TLS one with the
// secret's placeholder in Authorization.  Prints for each "NAME closed after S s: FIRST-LINE
// BODY-LENGTH" (the last status line read, and "body_len N" from the echo's answer), or after
// SECS seconds "NAME open after SECS s".
const net = require("net");
const tls = require("tls");
const fs = require("fs");
const secs = Number(process.argv[2]);
const t0 = Date.now();
// each upload is live from the start: one that never connects is reported open
const live = {"plain-trickle": 1, "tls-trickle": 1, "plain-honest": 1, "tls-honest": 1};
const HONEST = 2560 * 1024;
function upload(name, s, host, len, auth) {
  live[name] = s;
  s.got = "";
  s.on("data", (d) => { s.got += d; });
  s.on("error", () => {});
  s.on("close", () => {
    clearInterval(s.timer);
    delete live[name];
    const last = (s.got.match(/HTTP\/1\.1 \d{3}[^\r]*/g) || ["-"]).pop();
    const bl = (s.got.match(/"body_len": \d+/) || ["-"])[0];
    console.log(`${name} closed after ${Math.round((Date.now() - t0) / 1000)} s: ${last} ${bl}`);
  });
  s.write(`POST /upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${len}\r\n` +
          (auth ? `Authorization: Bearer ${process.env.API_TOKEN}\r\n` : "") + "Connection: close\r\n\r\n");
}
function trickle(name, s, host, every) {
  upload(name, s, host, 100, false);
  let i = 0;
  s.timer = setInterval(() => { if (i++ < 100) s.write("x"); }, every * 1000);
}
function honest(name, s, host, auth) {
  upload(name, s, host, HONEST, auth);
  const piece = Buffer.alloc(16384, 0x61);
  let sent = 0;
  s.timer = setInterval(() => {
    if (sent < HONEST) {
      s.write(piece);
      sent += piece.length;
    }
  }, 250);
}
const ca = fs.readFileSync(process.env.SSL_CERT_FILE || "/dev/agentrt-ca-bundle.crt");
const tlsTo = (cb) => {
  const t = tls.connect({host: "203.0.113.10", port: 443, servername: "api.example.test", ca},
                        () => cb(t));
  t.on("error", () => {});
};
const pt = net.connect({host: "203.0.113.20", port: 80}, () => trickle("plain-trickle", pt, "other.test", 29));
pt.on("error", () => {});
tlsTo((t) => trickle("tls-trickle", t, "api.example.test", 2));
const ph = net.connect({host: "203.0.113.20", port: 80}, () => honest("plain-honest", ph, "other.test", false));
ph.on("error", () => {});
tlsTo((t) => honest("tls-honest", t, "api.example.test", true));
const end = setInterval(() => {
  if (Object.keys(live).length === 0 || Date.now() - t0 > secs * 1000) {
    for (const n of Object.keys(live)) console.log(`${n} open after ${secs} s`);
    process.exit(0);
  }
}, 200);
end.unref();
