/* http1.h - the HTTP/1.1 framing the egress TLS proxy needs (pure, fuzzed:
 * tests/fuzz/fuzz_http1.c).
 *
 * Strict on purpose: the proxy decides which requests get a secret and which
 * HTTP rules apply from what it parses, so anything two parsers could read
 * two ways (request smuggling) is refused: a bare LF or CR, obsolete line
 * folding, a NUL, Content-Length with Transfer-Encoding, two different
 * Content-Lengths, a Transfer-Encoding other than "chunked" (or any in an
 * HTTP/1.0 request), no Host or two of them, a Host that is not
 * name-or-[address][:port], a target that is not origin-form ("/path") or
 * starts with "//", CONNECT and PRI; in chunked bodies, anything but ";"
 * extensions after a size, control bytes, trailers that are no field lines.
 */
#ifndef AGENTRT_MONITOR_HTTP1_H
#define AGENTRT_MONITOR_HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 65536
#define HTTP_MAX_HEADERS 128

struct http_field {
  const char *name, *value; /* into the parsed buffer, not NUL-terminated */
  size_t name_len, value_len;
};

enum http_body { HTTP_BODY_NONE, HTTP_BODY_LENGTH, HTTP_BODY_CHUNKED, HTTP_BODY_CLOSE };

struct http_msg {
  /* request: method and target; response: status */
  const char *method, *target;
  size_t method_len, target_len;
  int status;
  int minor; /* HTTP/1.<minor> */
  const char *host;
  size_t host_len;
  struct http_field f[HTTP_MAX_HEADERS];
  size_t n;
  enum http_body body;
  uint64_t length;
  bool upgrade;    /* a request with Upgrade: websocket (only) and Connection: upgrade */
  bool conn_close; /* Connection: close, or HTTP/1.0 without keep-alive */
};

/* A request head at buf[0..len).  Returns the head's length (through the
 * empty line) when complete, 0 when more bytes are needed (and len <
 * HTTP_HEAD_MAX), -1 when malformed (*why set). */
long http_request_parse(const char *buf, size_t len, struct http_msg *m, const char **why);
/* A response head; head_request: it answers a HEAD (no body whatever it says). */
long http_response_parse(const char *buf, size_t len, bool head_request, struct http_msg *m,
                         const char **why);

/* A chunked body, fed as it arrives: how many of the len bytes belong to it
 * (all of them until its end); *done once the last chunk and the trailers
 * are through; -1 when malformed. */
struct http_chunked {
  int state;
  uint64_t left;
  unsigned line; /* bytes in the current size or trailer line */
  unsigned digits;
  bool colon; /* a trailer line's name has ended */
};
long http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, bool *done,
                       const char **why);

/* The server name of a TLS ClientHello record in buf (len bytes, the
 * record header included).  1 found (name NUL-terminated, lower case), 2 a
 * whole ClientHello with no server_name extension (name ""; a client of an
 * address, an IP URL), 0 more bytes needed, -1 not a ClientHello, or a
 * server_name extension that is not one list of one name (or comes twice).  *ech: the
 * hello has an encrypted_client_hello extension (the name is then only the
 * outer one; the server may route by a hidden inner one).  Pure. */
int tls_client_hello_sni(const unsigned char *buf, size_t len, char name[256], bool *ech);

/* Case-insensitive comparison of a field name. */
bool http_field_is(const struct http_field *f, const char *name);

/* A parsed Host (m->host, h: n bytes): its name (*ret_name, the length
 * returned; an IPv6 address without its brackets) and its port's digits
 * (*ret_port, up to the end of h, or NULL). */
size_t http_host_split(const char *h, size_t n, const char **ret_name, const char **ret_port);
/* m's Host names sni (lower case, no final dot): any case, a final dot
 * allowed, no port or port. */
bool http_host_is(const struct http_msg *m, const char *sni, uint16_t port);

#endif
