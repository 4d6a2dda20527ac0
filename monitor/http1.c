/* http1.c - see http1.h */
#include "monitor/http1.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool tchar(unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

bool http_field_is(const struct http_field *f, const char *name)
{
  return strlen(name) == f->name_len && strncasecmp(f->name, name, f->name_len) == 0;
}

/* The end of the head (offset after CRLFCRLF), 0 if not there yet, -1 on a
 * bare CR or LF or a NUL. */
static long head_end(const char *buf, size_t len, const char **why)
{
  for (size_t i = 0; i < len; i++) {
    if (buf[i] == '\0') {
      *why = "NUL byte in the head";
      return -1;
    }
    if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')) {
      *why = "bare LF in the head";
      return -1;
    }
    if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n') {
      *why = "bare CR in the head";
      return -1;
    }
    if (buf[i] == '\n' && i >= 3 && buf[i - 2] == '\n')
      return (long)i + 1;
  }
  if (len >= HTTP_HEAD_MAX) {
    *why = "head larger than 64 KiB";
    return -1;
  }
  return 0;
}

static bool list_has(const char *v, size_t n, const char *word)
{
  size_t wl = strlen(word);

  for (size_t i = 0; i < n;) {
    size_t s, e;
    while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    s = i;
    while (i < n && v[i] != ',')
      i++;
    e = i;
    while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
      e--;
    if (e - s == wl && strncasecmp(v + s, word, wl) == 0)
      return true;
  }
  return false;
}

/* The field's name is `name` when each '_' in it is read as '-'. */
static bool dashed_is(const struct http_field *f, const char *name)
{
  if (strlen(name) != f->name_len)
    return false;
  for (size_t i = 0; i < f->name_len; i++) {
    char c = f->name[i] == '_' ? '-' : f->name[i];
    if ((c | 0x20) != name[i] && c != name[i])
      return false;
  }
  return true;
}

/* Header lines from p (after the start line) to end (the final CRLF). */
static int fields(const char *p, const char *end, struct http_msg *m, const char **why)
{
  bool has_cl = false, has_te = false, conn_upgrade = false, has_upgrade = false;
  bool keep_alive = false, websocket = false;

  while (p < end) {
    const char *eol = memchr(p, '\r', (size_t)(end - p));
    const char *colon, *v, *ve;
    struct http_field *f;

    if (eol == NULL)
      eol = end;
    if (eol == p)
      break;
    if (*p == ' ' || *p == '\t') {
      *why = "obsolete line folding";
      return -1;
    }
    colon = memchr(p, ':', (size_t)(eol - p));
    if (colon == NULL || colon == p) {
      *why = "a header line without a name";
      return -1;
    }
    for (const char *c = p; c < colon; c++)
      if (!tchar((unsigned char)*c)) {
        *why = "a header name that is not a token";
        return -1;
      }
    if (m->n == HTTP_MAX_HEADERS) {
      *why = "more than 128 header fields";
      return -1;
    }
    v = colon + 1;
    while (v < eol && (*v == ' ' || *v == '\t'))
      v++;
    ve = eol;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
      ve--;
    for (const char *c = v; c < ve; c++)
      if ((unsigned char)*c < 0x20 && *c != '\t') {
        *why = "a control character in a header value";
        return -1;
      }
    f = &m->f[m->n++];
    *f = (struct http_field){p, v, (size_t)(colon - p), (size_t)(ve - v)};
    if (memchr(p, '_', (size_t)(colon - p)) &&
        (dashed_is(f, "content-length") || dashed_is(f, "transfer-encoding"))) {
      /* CGI-style servers read "Content_Length" as Content-Length */
      *why = "a Content-Length or Transfer-Encoding spelt with '_'";
      return -1;
    }
    if (http_field_is(f, "content-length")) {
      uint64_t n = 0;
      if (f->value_len == 0 || f->value_len > 15) {
        *why = "a bad Content-Length";
        return -1;
      }
      for (size_t i = 0; i < f->value_len; i++) {
        if (f->value[i] < '0' || f->value[i] > '9') {
          *why = "a bad Content-Length";
          return -1;
        }
        n = n * 10 + (uint64_t)(f->value[i] - '0');
      }
      if (has_cl && n != m->length) {
        *why = "two different Content-Lengths";
        return -1;
      }
      has_cl = true;
      m->length = n;
    } else if (http_field_is(f, "transfer-encoding")) {
      if (has_te || f->value_len != 7 || strncasecmp(f->value, "chunked", 7) != 0) {
        *why = "a Transfer-Encoding other than one \"chunked\"";
        return -1;
      }
      has_te = true;
    } else if (http_field_is(f, "host")) {
      if (m->host != NULL) {
        *why = "two Host fields";
        return -1;
      }
      m->host = f->value;
      m->host_len = f->value_len;
    } else if (http_field_is(f, "connection")) {
      conn_upgrade |= list_has(f->value, f->value_len, "upgrade");
      m->conn_close |= list_has(f->value, f->value_len, "close");
      keep_alive |= list_has(f->value, f->value_len, "keep-alive");
    } else if (http_field_is(f, "upgrade")) {
      /* one field naming websocket alone: offered a list, a server may pick
       * h2c and then read HTTP/2 requests the proxy never sees */
      websocket = !has_upgrade && f->value_len == 9 && strncasecmp(f->value, "websocket", 9) == 0;
      has_upgrade = true;
    }
    p = eol + 2;
  }
  if (has_cl && has_te) {
    *why = "Content-Length with Transfer-Encoding";
    return -1;
  }
  m->body = has_te ? HTTP_BODY_CHUNKED : has_cl ? HTTP_BODY_LENGTH : HTTP_BODY_NONE;
  m->upgrade = websocket && conn_upgrade;
  if (m->minor == 0 && !keep_alive)
    m->conn_close = true;
  return 0;
}

/* host [ ":" port ]: a name of letters, digits, '-', '.' and '_', or an
 * address in brackets; the port 1 to 5 digits.  Nothing a server could read
 * as userinfo ("name:@other"), a list ("name, other") or a path. */
static bool host_syntax(const char *h, size_t n)
{
  size_t i = 0, d;

  if (n > 0 && h[0] == '[') {
    for (i = 1; i < n && h[i] != ']'; i++)
      if (!((h[i] >= '0' && h[i] <= '9') || ((h[i] | 0x20) >= 'a' && (h[i] | 0x20) <= 'f') ||
            h[i] == ':' || h[i] == '.'))
        return false;
    if (i == n || i == 1)
      return false;
    i++;
  } else {
    for (; i < n && h[i] != ':'; i++)
      if (!((h[i] >= '0' && h[i] <= '9') || ((h[i] | 0x20) >= 'a' && (h[i] | 0x20) <= 'z') ||
            h[i] == '-' || h[i] == '.' || h[i] == '_'))
        return false;
    if (i == 0 || i > 254)
      return false;
  }
  if (i == n)
    return true;
  if (h[i] != ':')
    return false;
  for (d = i + 1; d < n; d++)
    if (h[d] < '0' || h[d] > '9')
      return false;
  return n - i - 1 >= 1 && n - i - 1 <= 5;
}

static int version(const char *p, const char *end, struct http_msg *m)
{
  if (end - p != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
    return -1;
  m->minor = p[7] - '0';
  return 0;
}

long http_request_parse(const char *buf, size_t len, struct http_msg *m, const char **why)
{
  long n = head_end(buf, len, why);
  const char *eol, *sp1, *sp2;

  memset(m, 0, sizeof *m);
  if (n <= 0)
    return n;
  eol = memchr(buf, '\r', (size_t)n);
  sp1 = memchr(buf, ' ', (size_t)(eol - buf));
  sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (sp1 == NULL || sp2 == NULL || sp1 == buf || sp2 == sp1 + 1 || version(sp2 + 1, eol, m) < 0) {
    *why = "a request line that is not METHOD /target HTTP/1.x";
    return -1;
  }
  for (const char *c = buf; c < sp1; c++)
    if (!tchar((unsigned char)*c)) {
      *why = "a method that is not a token";
      return -1;
    }
  if (sp1[1] != '/' && !(sp2 - sp1 == 2 && sp1[1] == '*')) {
    *why = "a target that is not a path (absolute or authority form)";
    return -1;
  }
  if (sp2 - sp1 > 2 && sp1[2] == '/') {
    /* "//name/path": some servers read the name as the authority */
    *why = "a target that starts with \"//\"";
    return -1;
  }
  if ((sp1 - buf == 7 && strncasecmp(buf, "CONNECT", 7) == 0) ||
      (sp1 - buf == 3 && memcmp(buf, "PRI", 3) == 0)) {
    *why = "a CONNECT or PRI (HTTP/2 preface) request";
    return -1;
  }
  for (const char *c = sp1 + 1; c < sp2; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) {
      *why = "a byte in the target that must be percent-encoded";
      return -1;
    }
  m->method = buf;
  m->method_len = (size_t)(sp1 - buf);
  m->target = sp1 + 1;
  m->target_len = (size_t)(sp2 - sp1 - 1);
  if (fields(eol + 2, buf + n - 2, m, why) < 0)
    return -1;
  if (m->host == NULL && m->minor == 1) {
    *why = "no Host field";
    return -1;
  }
  if (m->host != NULL && !host_syntax(m->host, m->host_len)) {
    *why = "a Host that is not a name or address with an optional port";
    return -1;
  }
  if (m->minor == 0 && m->body == HTTP_BODY_CHUNKED) {
    /* an HTTP/1.0 server may not know chunked and read the body as requests */
    *why = "Transfer-Encoding in an HTTP/1.0 request";
    return -1;
  }
  return n;
}

long http_response_parse(const char *buf, size_t len, bool head_request, struct http_msg *m,
                         const char **why)
{
  long n = head_end(buf, len, why);
  const char *eol;

  memset(m, 0, sizeof *m);
  if (n <= 0)
    return n;
  eol = memchr(buf, '\r', (size_t)n);
  if (eol - buf < 12 || version(buf, buf + 8, m) < 0 || buf[8] != ' ' || buf[9] < '1' ||
      buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9' ||
      (eol - buf > 12 && buf[12] != ' ')) {
    *why = "a status line that is not HTTP/1.x NNN";
    return -1;
  }
  m->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
  if (fields(eol + 2, buf + n - 2, m, why) < 0)
    return -1;
  if (head_request || m->status / 100 == 1 || m->status == 204 || m->status == 304)
    m->body = HTTP_BODY_NONE;
  else if (m->body == HTTP_BODY_NONE)
    m->body = HTTP_BODY_CLOSE; /* neither length nor chunked: until the server closes */
  return n;
}

enum {
  CH_SIZE,
  CH_EXT,
  CH_SIZE_LF,
  CH_DATA,
  CH_DATA_CR,
  CH_DATA_LF,
  CH_TRAILER,
  CH_TRAILER_LF,
  CH_BWS
};

long http_chunked_feed(struct http_chunked *c, const char *buf, size_t len, bool *done,
                       const char **why)
{
  size_t i = 0;

  *done = false;
  while (i < len) {
    char ch = buf[i];

    switch (c->state) {
    case CH_SIZE:
      if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')) {
        if (++c->digits > 15) {
          *why = "a chunk size above 15 hex digits";
          return -1;
        }
        c->left = c->left * 16 + (uint64_t)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
        i++;
        break;
      }
      if (c->digits == 0) {
        *why = "a chunk without a size";
        return -1;
      }
      if (ch == ';' || ch == ' ' || ch == '\t') {
        c->state = CH_BWS;
        break;
      }
      if (ch != '\r') {
        *why = "a bad chunk size line";
        return -1;
      }
      c->state = CH_SIZE_LF;
      i++;
      break;
    case CH_BWS: /* after the size: blanks, then ";" extensions or the CRLF */
      if (ch == ';') {
        c->state = CH_EXT;
      } else if (ch == '\r') {
        c->state = CH_SIZE_LF;
      } else if ((ch != ' ' && ch != '\t') || ++c->line > 4096) {
        *why = "a chunk size followed by other than \";\" extensions";
        return -1;
      }
      i++;
      break;
    case CH_EXT:
      if (ch == '\r') {
        c->state = CH_SIZE_LF;
      } else if (((unsigned char)ch < 0x20 && ch != '\t') || ch == 0x7f || ++c->line > 4096) {
        *why = "a bad chunk extension";
        return -1;
      }
      i++;
      break;
    case CH_SIZE_LF:
      if (ch != '\n') {
        *why = "a chunk size line without CRLF";
        return -1;
      }
      i++;
      c->line = 0;
      c->digits = 0;
      c->state = c->left == 0 ? CH_TRAILER : CH_DATA;
      break;
    case CH_DATA: {
      size_t take = len - i < c->left ? len - i : (size_t)c->left;
      i += take;
      c->left -= take;
      if (c->left == 0)
        c->state = CH_DATA_CR;
      break;
    }
    case CH_DATA_CR:
    case CH_DATA_LF:
      if (ch != (c->state == CH_DATA_CR ? '\r' : '\n')) {
        *why = "chunk data not followed by CRLF";
        return -1;
      }
      i++;
      c->state = c->state == CH_DATA_CR ? CH_DATA_LF : CH_SIZE;
      break;
    case CH_TRAILER: /* a field line (name ":" value) or the empty line */
      if (ch == '\r' && (c->line == 0 || c->colon)) {
        c->state = CH_TRAILER_LF;
      } else if (++c->line > 8192 ||
                 (c->colon    ? ((unsigned char)ch < 0x20 && ch != '\t') || ch == 0x7f
                  : ch == ':' ? c->line == 1
                              : !tchar((unsigned char)ch))) {
        *why = "a bad trailer line";
        return -1;
      } else if (ch == ':') {
        c->colon = true;
      }
      i++;
      break;
    case CH_TRAILER_LF:
      if (ch != '\n') {
        *why = "a trailer line without CRLF";
        return -1;
      }
      i++;
      if (c->line == 0) {
        *done = true;
        memset(c, 0, sizeof *c);
        return (long)i;
      }
      c->line = 0;
      c->colon = false;
      c->state = CH_TRAILER;
      break;
    }
  }
  return (long)i;
}

/* ---- the TLS ClientHello (tls_client_hello_sni in http1.h) */

static unsigned rd16(const unsigned char *p)
{
  return (unsigned)p[0] << 8 | p[1];
}

int tls_client_hello_sni(const unsigned char *buf, size_t len, char name[256], bool *ech)
{
  size_t rec, i, end, n;

  if (len < 5)
    return 0;
  if (buf[0] != 0x16 || buf[1] != 3)
    return -1;
  rec = rd16(buf + 3);
  if (rec < 4 || rec > 16384)
    return -1;
  if (len < 5 + rec)
    return 0;
  buf += 5;
  if (buf[0] != 1) /* client_hello */
    return -1;
  n = (size_t)buf[1] << 16 | rd16(buf + 2);
  if (n + 4 > rec) /* a hello across records: not from a client we serve */
    return -1;
  end = 4 + n;
  i = 4 + 2 + 32; /* version, random */
  if (i + 1 > end)
    return -1;
  i += 1 + buf[i]; /* session id */
  if (i + 2 > end)
    return -1;
  i += 2 + rd16(buf + i); /* cipher suites */
  if (i + 1 > end)
    return -1;
  i += 1 + buf[i]; /* compression */
  if (i + 2 > end)
    return -1;
  end = i + 2 + rd16(buf + i) < end ? i + 2 + rd16(buf + i) : end;
  i += 2;
  *ech = false;
  name[0] = '\0';
  while (i + 4 <= end) {
    unsigned type = rd16(buf + i), elen = rd16(buf + i + 2);
    size_t e = i + 4, hl;
    if (e + elen > end)
      return -1;
    if (type == 0xfe0d) /* encrypted_client_hello: the name that counts is hidden */
      *ech = true;
    if (type == 0) {
      /* one list of exactly one host_name: a server reading another entry
       * (or another extension) would see another name */
      if (name[0] != '\0' || elen < 5 || rd16(buf + e) != elen - 2 || buf[e + 2] != 0)
        return -1;
      hl = rd16(buf + e + 3);
      if (hl == 0 || hl > 253 || 5 + hl != elen)
        return -1;
      for (size_t k = 0; k < hl; k++) {
        unsigned char ch = buf[e + 5 + k];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.' || ch == '_'))
          return -1;
        name[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch | 0x20 : ch);
      }
      name[hl] = '\0';
      if (name[hl - 1] == '.')
        name[hl - 1] = '\0';
      if (name[0] == '\0')
        return -1;
    }
    i = e + elen;
  }
  return name[0] ? 1 : 2;
}

/* A Host field's name and port (the parser has checked it is name[:port]
 * or [address][:port], nothing else): *ret_name and the name's length, the
 * brackets of an IPv6 address left out; *ret_port the port's digits or
 * NULL.  A first colon is not the port's: "[2001:db8::1]" was read as the
 * name "[2001" on port 0 and refused. */
size_t http_host_split(const char *h, size_t n, const char **ret_name, const char **ret_port)
{
  const char *end = h[0] == '[' ? memchr(h, ']', n) : NULL;
  const char *colon;

  *ret_name = end ? h + 1 : h;
  colon = memchr(end ? end : h, ':', n - (size_t)((end ? end : h) - h));
  *ret_port = colon ? colon + 1 : NULL;
  return end ? (size_t)(end - h - 1) : colon ? (size_t)(colon - h) : n;
}

/* Host is the server name, any case, a final dot allowed, no port or the
 * one connected to. */
bool http_host_is(const struct http_msg *m, const char *sni, uint16_t port)
{
  const char *name, *digits;
  size_t n, plen;
  char want[8];

  if (m->host == NULL)
    return false;
  n = http_host_split(m->host, m->host_len, &name, &digits);
  if (digits != NULL) {
    snprintf(want, sizeof want, "%u", (unsigned)port);
    plen = (size_t)(m->host + m->host_len - digits);
    if (plen != strlen(want) || memcmp(digits, want, plen) != 0)
      return false;
  }
  if (n > 0 && name[n - 1] == '.')
    n--;
  return n == strlen(sni) && strncasecmp(name, sni, n) == 0;
}
