/* test_http_rule.c - the TLS proxy's decisions on a request
 * (monitor/http_rule.c): an egress.http rule's verdict on paths a server
 * could read as another, on rewrite headers and method overrides, and the
 * first head's Host as a plain connection is checked by it.  The refused
 * inputs are those fuzz_httprule found or was shown (tests/fuzz/corpus/httprule). */
#include <string.h>

#include "monitor/http_rule.h"
#include "tests/unit/tap.h"

static char *methods[] = {"GET", "POST", NULL}, *paths[] = {"/v1/", NULL};
static const struct profile_http_rule rule = {"api.example.test", methods, paths};

/* The verdict of the rule on "GET <target>" with the extra header lines h. */
static bool verdict(const char *target, const char *h, const char **why)
{
  char head[1024];
  struct http_msg m;
  const char *pwhy = NULL;

  snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: api.example.test\r\n%s\r\n", target, h);
  *why = NULL;
  if (http_request_parse(head, strlen(head), &m, &pwhy) <= 0) {
    *why = pwhy;
    return false;
  }
  return http_rule_check(&rule, &m, why);
}

static void test_paths(void)
{
  static const char *const refused[][2] = {
      /* before: the substring list */
      {"/v1/../admin", ""},
      {"/v1/..;/admin", ""},
      {"/v1/%2e%2e/admin", ""},
      {"/v1/%u002e%u002e/admin", ""},
      {"/v1/%c0%ae%c0%ae/admin", ""},
      {"/v1/x", "X-Original-URL: /admin\r\n"},
      /* double-encoding: decoded twice, or by a lenient decoder, a dot */
      {"/v1/%25%32%65%25%32%65/admin", ""},
      {"/v1/%%32%65%%32%65/admin", ""},
      {"/v1/%25u002e%25u002e/admin", ""},
      {"/v1/%25c0%25ae%25c0%25ae/admin", ""},
      /* overlong-dots: the forms of '.' and '\' the list had not */
      {"/v1/%e0%81%9c..%e0%81%9cadmin", ""},
      {"/v1/%f0%80%80%ae%f0%80%80%ae/admin", ""},
      {"/v1/x", "X-Original-URL: /v1/%f0%80%80%ae%f0%80%80%ae/admin\r\n"},
      /* a NUL or a ';' once decoded */
      {"/v1/..%00", ""},
      {"/v1/..%3b/admin", ""},
      /* fragment-dots: nginx cuts at '#': "/v1/.." */
      {"/v1/..#/admin", ""},
      {"/v1/x", "X-Rewrite-URL: /v1/..#x\r\n"},
      /* rewrite-raw-overlong: raw bytes in a rewrite header */
      {"/v1/x", "X-Rewrite-URL: /v1/\xc0\xae\xc0\xae/admin\r\n"},
      {"/v1/x", "X-Original-URL: /v1/\x7f\r\n"},
  };
  static const char *const allowed[][2] = {
      {"/v1/models?x=1#y", ""},
      {"/v1/a;b=c", ""},
      {"/v1/%e4%b8%ad%20x", ""},
      {"/v1/%E0%A4%A4/%F0%9F%98%80", ""},
      {"/v1/x", "X-Original-URL: /v1/y?z=1\r\n"},
      {"/v1/..x/y.", ""},
  };
  const char *why;

  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    bool ok = verdict(refused[i][0], refused[i][1], &why);
    tap_ok(!ok && why != NULL, "refused: GET %s [%.*s] (%s)", refused[i][0],
           (int)strcspn(refused[i][1], "\r"), refused[i][1], why ? why : "no reason");
  }
  for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
    bool ok = verdict(allowed[i][0], allowed[i][1], &why);
    tap_ok(ok, "allowed: GET %s [%.*s] %s", allowed[i][0], (int)strcspn(allowed[i][1], "\r"),
           allowed[i][1], why ? why : "");
  }
}

static void test_head_host(void)
{
  static const char head[] = "GET /x HTTP/1.1\r\nHost: Front.Test.:8080\r\n\r\nGET /y HTTP/1.1\r\n";
  char name[256] = "";
  long port = 0;
  int r = http_head_host(head, strlen(head), name, &port);

  tap_ok(r == 1 && strcmp(name, "front.test") == 0 && port == 8080,
         "the first head's Host, pipelined: %s %ld", name, port);
  for (size_t k = 0; k < strlen("GET /x HTTP/1.1\r\nHost: Front.Test.:8080\r\n\r\n"); k++)
    if (http_head_host(head, k, name, &port) != 0)
      tap_ok(false, "a head cut at %zu decided", k);
  tap_ok(http_head_host("GET / HTTP/1.1\r\n\r\n", 18, name, &port) == -1, "no Host: refused");
  tap_ok(http_head_host("GET / HTTP/1.1\r\nHost: .\r\n\r\n", 27, name, &port) == -1,
         "a Host of a dot: refused");
}

int main(void)
{
  test_paths();
  test_head_host();
  return tap_done();
}
