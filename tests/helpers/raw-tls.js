// raw-tls.js HOST SERVERNAME ALPN PAYLOAD - send PAYLOAD as it is over TLS (the
// container's CA bundle) and print what comes back until the peer closes or
// 4 s pass; secrets-proxy.bats's probe of the proxy's request parser.
// In PAYLOAD, \r \n \t \xHH are the bytes, {PH} is $API_TOKEN, and {PAUSE} sends
// what came before as its own write 200 ms before the rest.  ALPN "-": none.
// SERVERNAME "plain": plain TCP to port 80 instead.
const tls = require("tls"), net = require("net"), fs = require("fs");
const [host, servername, alpn, payload] = process.argv.slice(2);
const text = payload.replace(/\\x([0-9a-f]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))
  .replace(/\\r/g, "\r").replace(/\\n/g, "\n").replace(/\\t/g, "\t")
  .split("{PH}").join(process.env.API_TOKEN || "");
const parts = text.split("{PAUSE}");
const opts = {host, port: 443, servername, ca: fs.readFileSync(process.env.SSL_CERT_FILE)};
if (alpn !== "-") opts.ALPNProtocols = alpn.split(",");
let got = "";
const start = () => {
  let i = 0;
  const next = () => { s.write(parts[i++]); if (i < parts.length) setTimeout(next, 200); };
  next();
};
const s = servername === "plain" ? net.connect({host, port: 80}, start) : tls.connect(opts, start);
s.on("data", d => { got += d; });
s.on("error", e => { got += "\nERR " + e.message; });
s.on("close", () => { console.log(got); process.exit(0); });
setTimeout(() => { console.log(got + "\nTIMEOUT"); process.exit(0); }, 4000);
