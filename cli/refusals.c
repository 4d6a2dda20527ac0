/* refusals.c - a container's refusals from its trail (see refusals.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "cli/refusals.h"
#include "common/util.h"

/* what, shown on a terminal: its bytes as the record's writer had them,
 * then escaped (refused-calls-raw-name) */
static char *safe_text(const char *what)
{
  cleanup_free char *raw = xstrdup(what);
  struct jbuf b = {0};
  size_t n = jb_bytes_unescape(raw);

  jb_text(&b, raw, n);
  return jb_take(&b); /* never NULL: jb_str allocates */
}

static void refused_add(struct refused *r, char *what)
{
  for (size_t i = 0; i < r->n; i++)
    if (streq(r->v[i], what)) {
      free(what);
      return;
    }
  if (r->n < REFUSED_SHOWN)
    r->v[r->n++] = what;
  else {
    r->more++;
    free(what);
  }
}

static void refused_free(struct refused *r)
{
  for (size_t i = 0; i < r->n; i++)
    free(r->v[i]);
  r->n = r->more = 0;
}

void refusals_free(struct refusals *r)
{
  refused_free(&r->net);
  refused_free(&r->calls);
}

static const char *tree_str(yajl_val v, const char *key)
{
  const char *path[] = {key, NULL};
  yajl_val s = yajl_tree_get(v, path, yajl_t_string);
  return s != NULL ? YAJL_GET_STRING(s) : NULL;
}

static int refused_line(void *ctx, const char *line, size_t len)
{
  struct refusals *r = ctx;
  cleanup_free char *copy = NULL;
  yajl_val v;
  const char *kind, *what, *proto, *dir;

  static const char refused_v[] = "\"verdict\":\"refused\"", denied_k[] = "\"kind\":\"denied\"",
                    create_k[] = "\"kind\":\"create\"";

  /* only what follows the last create is this run's (sandbox-refused-calls) */
  if (memmem(line, len, create_k, sizeof create_k - 1) != NULL) {
    refusals_free(r);
    return 0;
  }
  /* most records are neither: no parse for them */
  if (memmem(line, len, refused_v, sizeof refused_v - 1) == NULL &&
      memmem(line, len, denied_k, sizeof denied_k - 1) == NULL)
    return 0;
  copy = xstrndup(line, len);
  if ((v = yajl_tree_parse(copy, NULL, 0)) == NULL)
    return 0;
  kind = tree_str(v, "kind");
  dir = tree_str(v, "direction");
  if (kind == NULL)
    ;
  else if (streq(kind, "dns") && (what = tree_str(v, "name")) != NULL)
    refused_add(&r->net, safe_text(what));
  else if (streq(kind, "syscall") && (what = tree_str(v, "syscall")) != NULL) {
    const char *prog = tree_str(v, "program");
    cleanup_free char *call = safe_text(what);
    cleanup_free char *p = prog != NULL ? safe_text(prog) : NULL;
    refused_add(&r->calls, p != NULL ? xfmt("%s (%s)", call, p) : xstrdup(call));
  } else if (streq(kind, "denied") && dir != NULL && streq(dir, "out") &&
             (what = tree_str(v, "dst")) != NULL && (proto = tree_str(v, "proto")) != NULL &&
             (streq(proto, "tcp") || streq(proto, "udp"))) {
    const char *pp[] = {"port", NULL};
    yajl_val port = yajl_tree_get(v, pp, yajl_t_number);
    cleanup_free char *dst = safe_text(what);
    bool v6 = strchr(dst, ':') != NULL;
    if (port != NULL && YAJL_IS_INTEGER(port))
      refused_add(&r->net, xfmt("%s%s%s:%lld/%s", v6 ? "[" : "", dst, v6 ? "]" : "",
                                YAJL_GET_INTEGER(port), proto));
    else
      refused_add(&r->net, xfmt("%s/%s", dst, proto));
  }
  yajl_tree_free(v);
  return 0;
}

int refusals_read(const char *trail, struct refusals *r)
{
  cleanup_close int fd = open(trail, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct audit_pos pos = {0};
  struct error e = {0};
  int ret = 0;

  if (fd < 0 || audit_scan(fd, &pos, refused_line, r, &e) < 0)
    ret = -1;
  error_clear(&e);
  return ret;
}

void refused_list(const struct refused *r, char *list, size_t size)
{
  size_t off = 0;

  list[0] = '\0';
  for (size_t i = 0; i < r->n && off < size; i++)
    off += (size_t)snprintf(list + off, size - off, "%s%s", i ? ", " : "", r->v[i]);
  if (r->more > 0 && off < size)
    snprintf(list + off, size - off, " and more");
}
