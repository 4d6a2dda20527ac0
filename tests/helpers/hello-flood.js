// hello-flood.js ADDR SERVERNAME SECONDS [PARALLEL] - open TCP connections to ADDR:443 for
// SECONDS, PARALLEL at a time (8), each sending one ClientHello for SERVERNAME that never
// changes (a TLS 1.3 hello with an X25519 key share of fixed bytes: no cryptography here) and
// closing once the first bytes come back; prints "sent N answered M".  secrets-proxy.bats's
// measure of what a container's handshakes cost its proxy.
const net = require("net");
const [addr, name, secs, par] = process.argv.slice(2);
const u16 = n => Buffer.from([n >> 8, n & 255]);
const ext = (t, d) => Buffer.concat([u16(t), u16(d.length), d]);
const sni = Buffer.from(name);
const list = Buffer.concat([Buffer.from([0]), u16(sni.length), sni]);
const exts = Buffer.concat([
  ext(0, Buffer.concat([u16(list.length), list])),
  ext(43, Buffer.from([2, 3, 4])),                     // supported_versions: TLS 1.3
  ext(10, Buffer.from([0, 2, 0, 0x1d])),               // supported_groups: x25519
  ext(13, Buffer.from([0, 4, 4, 3, 8, 4])),            // signature_algorithms
  ext(51, Buffer.concat([u16(36), u16(0x1d), u16(32), Buffer.alloc(32, 9)])), // key_share
]);
const body = Buffer.concat([Buffer.from([3, 3]), Buffer.alloc(32, 0x11), Buffer.from([0]),
  Buffer.from([0, 2, 0x13, 1]), Buffer.from([1, 0]), u16(exts.length), exts]);
const hs = Buffer.concat([Buffer.from([1, 0, body.length >> 8, body.length & 255]), body]);
const hello = Buffer.concat([Buffer.from([0x16, 3, 1]), u16(hs.length), hs]);
const end = Date.now() + Number(secs) * 1000;
let sent = 0, answered = 0, live = 0;
const one = () => {
  if (Date.now() >= end) {
    if (live === 0) { console.log(`sent ${sent} answered ${answered}`); process.exit(0); }
    return;
  }
  live++;
  const s = net.connect({host: addr, port: 443}, () => { s.write(hello); sent++; });
  const done = () => { s.destroy(); };
  s.setTimeout(3000, done);
  s.once("data", () => { answered++; done(); });
  s.on("error", () => {});
  s.on("close", () => { live--; setImmediate(one); });
};
for (let i = 0; i < Number(par || 8); i++) one();
