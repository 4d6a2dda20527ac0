/* secrets.c - the profile's "secrets" section: credentials the container
 * sees only as placeholders.
 *
 *   "secrets": [{"name": "API_TOKEN", "file": "/etc/agentrt/secrets/api",
 *                "hosts": ["api.example.com", "*.example.org"],
 *                "header": "Authorization", "format": "Bearer %s"}]
 *
 * profile/ parses and checks the entries and selects them for a container
 * (run.agentrt.secrets may only narrow the profile's list); it never opens
 * `file`: the monitor reads the value on the host.  Errors name the entry:
 * "p.json: secrets[1].hosts[0]: ...".
 */
#include <strings.h>

#include "profile/parse.h"

#include "common/util.h"
#include "common/egress_grammar.h"

void profile_secret_clear(struct profile_secret *s)
{
  free(s->name);
  free(s->file);
  strv_free(s->hosts);
  free(s->header);
  free(s->format);
  free(s->placeholder);
  memset(s, 0, sizeof *s);
}

void profile_secret_copy(struct profile_secret *d, const struct profile_secret *s)
{
  d->name = xstrdup(s->name);
  d->file = xstrdup(s->file);
  d->hosts = strv_dup(s->hosts);
  d->header = xstrdup(s->header);
  d->format = xstrdup(s->format);
  d->placeholder = xstrdup(s->placeholder);
}

char **profile_secret_names(const struct agent_profile *p)
{
  char **names = xmalloc0(sizeof(char *));

  for (size_t i = 0; i < p->n_secrets; i++)
    strv_push(&names, p->secrets[i].name);
  return names;
}

const struct profile_secret *profile_secret_find(const struct agent_profile *p, const char *name)
{
  for (size_t i = 0; name != NULL && i < p->n_secrets; i++)
    if (streq(p->secrets[i].name, name))
      return &p->secrets[i];
  return NULL;
}

bool profile_secret_host_match(const struct profile_secret *s, const char *host)
{
  size_t hn = host ? strlen(host) : 0;

  if (hn > 0 && host[hn - 1] == '.')
    hn--; /* "api.example.com." is the same name */
  if (hn == 0)
    return false;
  for (size_t i = 0; s->hosts != NULL && s->hosts[i] != NULL; i++) {
    const char *h = s->hosts[i];
    size_t n;

    if (str_has_prefix(h, "*.")) {
      n = strlen(h + 1); /* ".example.org" */
      if (hn > n && strncasecmp(host + hn - n, h + 1, n) == 0)
        return true;
    } else if (strlen(h) == hn && strncasecmp(host, h, hn) == 0) {
      return true;
    }
  }
  return false;
}

static bool env_name_ok(const char *s)
{
  if (s == NULL || *s == '\0' || (*s >= '0' && *s <= '9'))
    return false;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
          (*s >= '0' && *s <= '9')))
      return false;
  return true;
}

/* An HTTP field name (RFC 9110 token) that is not one the proxy itself
 * must control: framing, routing and connection management. */
static const char *header_problem(const char *h)
{
  static const char *const reserved[] = {"host",       "content-length", "transfer-encoding",
                                         "connection", "upgrade",        "te",
                                         "trailer",    "keep-alive",     "proxy-connection"};

  if (*h == '\0')
    return "is empty";
  for (const char *s = h; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          strchr("!#$%&'*+-.^_`|~", *s) != NULL))
      return "is not an HTTP header name";
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcasecmp(h, reserved[i]) == 0)
      return "is a header the proxy manages itself";
  return NULL;
}

/* Exactly one "%s" and no other '%'; printable ASCII only (no CR/LF). */
static bool format_ok(const char *f)
{
  int n = 0;

  for (const char *s = f; *s; s++) {
    if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
      return false;
    if (*s != '%')
      continue;
    if (s[1] != 's')
      return false;
    n++;
    s++;
  }
  return n == 1;
}

static int check_hosts(struct pctx *c, const char *path, char **hosts)
{
  size_t i;

  for (i = 0; hosts != NULL && hosts[i] != NULL; i++) {
    cleanup_free char *sub = xfmt("%s[%zu]", path, i);
    struct egress_entry e;
    struct error err = {0};

    if (egress_entry_parse(hosts[i], &e, &err) < 0)
      return profile_pfail(c, sub, "%s", err.msg);
    if (e.kind != EGRESS_DOMAIN || e.port_min != 0 || e.proto != 0)
      return profile_pfail(c, sub,
                           "`%s` is not a host name or \"*.\" + a domain (no address, "
                           "no port)",
                           hosts[i]);
  }
  if (i == 0)
    return profile_pfail(c, path, "needs at least one host");
  return 0;
}

static int secret_entry(struct pctx *c, const char *path, yajl_val v, struct profile_secret *s)
{
  if (!YAJL_IS_OBJECT(v))
    return profile_pfail(c, path, "expected an object {\"name\", \"file\", \"hosts\"}");
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *k = v->u.object.keys[i];
    yajl_val m = v->u.object.values[i];
    cleanup_free char *sub = profile_path_join(path, k);
    int r;

    if (streq(k, "name"))
      r = profile_get_string(c, sub, m, &s->name);
    else if (streq(k, "file"))
      r = profile_get_string(c, sub, m, &s->file);
    else if (streq(k, "hosts"))
      r = profile_get_strv(c, sub, m, &s->hosts);
    else if (streq(k, "header"))
      r = profile_get_string(c, sub, m, &s->header);
    else if (streq(k, "format"))
      r = profile_get_string(c, sub, m, &s->format);
    else
      r = profile_pfail(c, sub, "unknown field");
    if (r < 0)
      return -1;
  }
  if (s->name == NULL || s->file == NULL || s->hosts == NULL)
    return profile_pfail(c, path, "needs \"name\", \"file\" and \"hosts\"");
  if (s->header == NULL)
    s->header = xstrdup(PROFILE_SECRET_HEADER_DEFAULT);
  return 0;
}

int profile_parse_secrets(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  struct profile_secret *list;
  size_t n;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of {\"name\", \"file\", \"hosts\"} objects");
  n = v->u.array.len;
  if (n > PROFILE_SECRETS_MAX)
    return profile_pfail(c, path, "more than %d secrets", PROFILE_SECRETS_MAX);
  list = xmalloc0((n ? n : 1) * sizeof *list);
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *sub = xfmt("%s[%zu]", path, i);

    if (secret_entry(c, sub, v->u.array.values[i], &list[i]) < 0) {
      for (size_t j = 0; j <= i; j++)
        profile_secret_clear(&list[j]);
      free(list);
      return -1;
    }
  }
  for (size_t i = 0; i < p->n_secrets; i++)
    profile_secret_clear(&p->secrets[i]);
  free(p->secrets);
  p->secrets = list;
  p->n_secrets = n;
  return 0;
}

static int http_rule(struct pctx *c, const char *path, yajl_val v, struct profile_http_rule *r)
{
  if (!YAJL_IS_OBJECT(v))
    return profile_pfail(c, path, "expected an object {\"host\", \"methods\", \"paths\"}");
  for (size_t i = 0; i < v->u.object.len; i++) {
    const char *k = v->u.object.keys[i];
    yajl_val m = v->u.object.values[i];
    cleanup_free char *sub = profile_path_join(path, k);
    int rr;

    if (streq(k, "host"))
      rr = profile_get_string(c, sub, m, &r->host);
    else if (streq(k, "methods"))
      rr = profile_get_strv(c, sub, m, &r->methods);
    else if (streq(k, "paths"))
      rr = profile_get_strv(c, sub, m, &r->paths);
    else
      rr = profile_pfail(c, sub, "unknown field");
    if (rr < 0)
      return -1;
  }
  if (r->host == NULL)
    return profile_pfail(c, path, "needs \"host\"");
  return 0;
}

int profile_parse_http_rules(struct pctx *c, const char *path, yajl_val v, struct agent_profile *p)
{
  struct profile_egress *e = &p->egress;
  struct profile_http_rule *list;
  size_t n;

  if (!YAJL_IS_ARRAY(v))
    return profile_pfail(c, path, "expected an array of {\"host\", \"methods\", \"paths\"}");
  n = v->u.array.len;
  if (n > PROFILE_SECRETS_MAX)
    return profile_pfail(c, path, "more than %d rules", PROFILE_SECRETS_MAX);
  list = xmalloc0((n ? n : 1) * sizeof *list);
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *sub = xfmt("%s[%zu]", path, i);
    if (http_rule(c, sub, v->u.array.values[i], &list[i]) < 0) {
      for (size_t j = 0; j <= i; j++) {
        free(list[j].host);
        strv_free(list[j].methods);
        strv_free(list[j].paths);
      }
      free(list);
      return -1;
    }
  }
  for (size_t i = 0; i < e->n_http; i++) {
    free(e->http[i].host);
    strv_free(e->http[i].methods);
    strv_free(e->http[i].paths);
  }
  free(e->http);
  e->http = list;
  e->n_http = n;
  return 0;
}

const struct profile_http_rule *profile_http_rule_find(const struct profile_egress *e,
                                                       const char *host)
{
  for (size_t i = 0; i < e->n_http; i++) {
    char *hosts[2] = {e->http[i].host, NULL};
    struct profile_secret s = {.hosts = hosts};
    if (profile_secret_host_match(&s, host))
      return &e->http[i];
  }
  return NULL;
}

bool profile_http_rule_allows(const struct profile_http_rule *r, const char *method,
                              size_t method_len, const char *path, size_t path_len)
{
  bool ok = r->methods == NULL || r->methods[0] == NULL;

  for (size_t i = 0; !ok && r->methods[i] != NULL; i++)
    ok = strlen(r->methods[i]) == method_len && strncmp(r->methods[i], method, method_len) == 0;
  if (!ok)
    return false;
  if (r->paths == NULL || r->paths[0] == NULL)
    return true;
  for (size_t i = 0; r->paths[i] != NULL; i++) {
    size_t n = strlen(r->paths[i]);
    if (path_len >= n && strncmp(path, r->paths[i], n) == 0)
      return true;
  }
  return false;
}

static int check_http_rules(struct pctx *c, const struct profile_egress *e)
{
  for (size_t i = 0; i < e->n_http; i++) {
    const struct profile_http_rule *r = &e->http[i];
    char *one[2] = {r->host, NULL};
    cleanup_free char *sub = xfmt("egress.http[%zu]", i);
    cleanup_free char *f_host = xfmt("%s.host", sub);

    if (check_hosts(c, f_host, one) < 0)
      return -1;
    for (size_t k = 0; r->methods && r->methods[k]; k++) {
      cleanup_free char *fm = xfmt("%s.methods[%zu]", sub, k);
      for (const char *s = r->methods[k]; *s; s++)
        if (!(*s >= 'A' && *s <= 'Z'))
          return profile_pfail(c, fm, "`%s` is not an upper-case method name", r->methods[k]);
    }
    for (size_t k = 0; r->paths && r->paths[k]; k++) {
      cleanup_free char *fp = xfmt("%s.paths[%zu]", sub, k);
      if (r->paths[k][0] != '/' || strpbrk(r->paths[k], "?#%\\ ") != NULL ||
          strstr(r->paths[k], "/.") != NULL)
        return profile_pfail(c, fp, "`%s` is not a plain path prefix starting with /", r->paths[k]);
    }
    if (e->def == PROFILE_EGRESS_OFF)
      return profile_pfail(c, sub, "HTTP rules need an egress policy");
  }
  return 0;
}

int profile_validate_secrets(struct pctx *c, const struct agent_profile *p)
{
  if (check_http_rules(c, &p->egress) < 0)
    return -1;
  for (size_t i = 0; i < p->n_secrets; i++) {
    const struct profile_secret *s = &p->secrets[i];
    cleanup_free char *sub = xfmt("secrets[%zu]", i);
    cleanup_free char *f_name = xfmt("%s.name", sub);
    cleanup_free char *f_file = xfmt("%s.file", sub);
    cleanup_free char *f_hosts = xfmt("%s.hosts", sub);
    cleanup_free char *f_header = xfmt("%s.header", sub);
    cleanup_free char *f_format = xfmt("%s.format", sub);
    const char *why;

    if (!env_name_ok(s->name))
      return profile_pfail(c, f_name, "`%s` is not an environment variable name", s->name);
    for (size_t j = 0; j < i; j++)
      if (streq(p->secrets[j].name, s->name))
        return profile_pfail(c, f_name, "`%s` is also secrets[%zu]", s->name, j);
    if (!profile_path_is_normal_abs(s->file) || streq(s->file, "/"))
      return profile_pfail(c, f_file, "`%s` is not a normalised absolute path", s->file);
    if (check_hosts(c, f_hosts, s->hosts) < 0)
      return -1;
    if ((why = header_problem(s->header)) != NULL)
      return profile_pfail(c, f_header, "`%s` %s", s->header, why);
    if (s->format != NULL && !format_ok(s->format))
      return profile_pfail(c, f_format,
                           "needs exactly one %%s and no other %% or control character");
    if (p->egress.def == PROFILE_EGRESS_OFF)
      return profile_pfail(c, sub,
                           "secrets need an egress policy (egress.default deny or allow): the "
                           "proxy that substitutes them is part of it");
  }
  if (p->egress.tls_upstream_ca != NULL && !profile_path_is_normal_abs(p->egress.tls_upstream_ca))
    return profile_pfail(c, "egress.tls.upstreamCA", "`%s` is not a normalised absolute path",
                         p->egress.tls_upstream_ca);
  return 0;
}
