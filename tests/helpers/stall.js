// stall.js ADDR PORT N SECONDS HEX - open N TCP connections to ADDR:PORT, send the bytes HEX
// on each, then nothing more for SECONDS; prints "open N".  secrets-proxy.bats's slowloris:
// what half a request costs the proxy while the client does nothing.
const net = require("net");
const [addr, port, n, secs, first] = process.argv.slice(2);
let open = 0;
for (let i = 0; i < Number(n); i++) {
  const s = net.connect({host: addr, port: Number(port)}, () => { open++; s.write(Buffer.from(first, "hex")); });
  s.on("error", () => {});
}
setTimeout(() => { console.log(`open ${open}`); process.exit(0); }, Number(secs) * 1000);
