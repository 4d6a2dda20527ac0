/* layout.c - data directory layout, store keys and lookups (datadir.h). */
#include "datadir/datadir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sha256.h"
#include "common/util.h"

#define KEY_MAX 200
#define MAX_STORES 4096
#define MAX_ENTRIES 100000
#define ROOT_FILE_MAX 4096

char *datadir_default(bool rootless)
{
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

  if (!rootless)
    return xstrdup(DATADIR_DEFAULT);
  if (xdg != NULL && xdg[0] == '/')
    return xfmt("%s/agentrt", xdg);
  if (home != NULL && home[0] == '/')
    return xfmt("%s/.local/share/agentrt", home);
  return xstrdup(DATADIR_DEFAULT);
}

char *datadir_normalize_root(const char *root)
{
  char *out = xmalloc(strlen(root) + 2);
  size_t o = 0;

  for (const char *p = root; *p; p++)
    if (*p != '/' || o == 0 || out[o - 1] != '/')
      out[o++] = *p;
  while (o > 1 && out[o - 1] == '/')
    o--;
  out[o] = '\0';
  return out;
}

char *datadir_key(const char *root)
{
  cleanup_free char *n = datadir_normalize_root(root);
  const char *p = n[0] == '/' ? n + 1 : n;
  char *k = xmalloc(strlen(p) * 3 + 2), hex[SHA256_HEX_LEN + 1];
  size_t o = 0;

  for (; *p; p++) {
    unsigned char ch = (unsigned char)*p;
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
        ch == '.' || ch == '_' || ch == '-')
      k[o++] = (char)ch;
    else if (ch == '/')
      k[o++] = '+';
    else
      o += (size_t)sprintf(k + o, "%%%02X", ch);
  }
  k[o] = '\0';
  if (o == 0)
    strcpy(k, "+");
  if (o > KEY_MAX || streq(k, ".") || streq(k, "..")) {
    sha256_hex(n, strlen(n), hex);
    free(k);
    return xfmt("h-%s", hex);
  }
  return k;
}

char *datadir_store(const char *data_dir, const char *root)
{
  cleanup_free char *key = datadir_key(root);
  return xfmt("%s/%s/%s", data_dir, DATADIR_ROOTS, key);
}

static int mkdir_one(const char *path, struct error *err)
{
  if (mkdir(path, 0700) < 0 && errno != EEXIST)
    return error_errno(err, "data directory: mkdir `%s`", path);
  return 0;
}

/* mkdir -p of the data directory itself (its parents as 0755). */
static int mkdir_parents(const char *dir, struct error *err)
{
  cleanup_free char *p = xstrdup(dir);

  for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = '\0';
    if (mkdir(p, 0755) < 0 && errno != EEXIST)
      return error_errno(err, "data directory: mkdir `%s`", p);
    *s = '/';
  }
  return mkdir_one(p, err);
}

int datadir_store_prepare(const char *data_dir, const char *root, struct error *err)
{
  cleanup_free char *roots = xfmt("%s/%s", data_dir, DATADIR_ROOTS);
  cleanup_free char *store = datadir_store(data_dir, root);
  cleanup_free char *file = xfmt("%s/%s", store, DATADIR_ROOT_FILE);
  cleanup_free char *tmp = NULL, *line = NULL;
  cleanup_close int fd = -1;
  size_t n;

  if (access(file, F_OK) == 0)
    return 0;
  if (mkdir_parents(data_dir, err) < 0 || mkdir_one(roots, err) < 0 || mkdir_one(store, err) < 0)
    return -1;
  line = datadir_normalize_root(root);
  n = strlen(line);
  tmp = xfmt("%s.%d", file, (int)getpid());
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, line, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
      rename(tmp, file) < 0) {
    error_errno(err, "data directory: write `%s`", file);
    unlink(tmp);
    return -1;
  }
  return 0;
}

void datadir_hit_free(struct datadir_hit *h)
{
  free(h->id);
  free(h->root);
  free(h->store);
  *h = (struct datadir_hit){0};
}

/* The root recorded in a store, NULL when it has none. */
static char *store_root(const char *store)
{
  cleanup_free char *file = xfmt("%s/%s", store, DATADIR_ROOT_FILE);
  cleanup_close int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char buf[ROOT_FILE_MAX];
  ssize_t n;

  if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 0)
    return NULL;
  buf[n] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  return buf[0] == '/' ? xstrdup(buf) : NULL;
}

struct hits {
  struct datadir_hit *v;
  size_t n;
};

static void hits_free(struct hits *h)
{
  for (size_t i = 0; i < h->n; i++)
    datadir_hit_free(&h->v[i]);
  free(h->v);
  *h = (struct hits){0};
}

static int name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (no dot files), bounded. */
static char **list_names(const char *dir)
{
  DIR *d = opendir(dir);
  char **v = xmalloc0(sizeof *v);
  struct dirent *e;
  size_t n = 0;

  if (d == NULL)
    return v;
  while ((e = readdir(d)) != NULL && n < MAX_ENTRIES) {
    if (e->d_name[0] == '.')
      continue;
    strv_push(&v, e->d_name);
    n++;
  }
  closedir(d);
  qsort(v, n, sizeof *v, name_cmp);
  return v;
}

/* Entries of one store matching id (exactly, or as a prefix when !exact;
 * id NULL: all). */
static void scan_store(const struct datadir_query *q, const char *store, const char *root,
                       bool legacy, const char *id, struct hits *out)
{
  cleanup_free char *dir = xfmt("%s/%s", store, q->sub);
  cleanup_strv char **names = list_names(dir);
  size_t idn = id ? strlen(id) : 0;

  for (size_t i = 0; names[i]; i++) {
    cleanup_free char *need = xfmt("%s/%s/%s", dir, names[i], q->need);
    struct stat st;
    if (id != NULL && strncmp(names[i], id, idn) != 0)
      continue;
    if (lstat(need, &st) < 0 || !S_ISREG(st.st_mode))
      continue;
    out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
    out->v[out->n++] = (struct datadir_hit){
        .id = xstrdup(names[i]), .root = xstrdup(root), .store = xstrdup(store), .legacy = legacy};
  }
}

/* Every candidate: the data dir's stores (or only_root's), then the legacy
 * store, which is skipped for an id the data dir already has there. */
static void collect(const struct datadir_query *q, const char *id, struct hits *out)
{
  cleanup_free char *roots = xfmt("%s/%s", q->data_dir, DATADIR_ROOTS);
  cleanup_free char *only = q->only_root ? datadir_normalize_root(q->only_root) : NULL;
  size_t before;

  if (q->legacy_only) {
    /* nothing from the stores */
  } else if (only != NULL) {
    cleanup_free char *store = datadir_store(q->data_dir, only);
    scan_store(q, store, only, false, id, out);
  } else {
    cleanup_strv char **keys = list_names(roots);
    for (size_t i = 0; keys[i] && i < MAX_STORES; i++) {
      cleanup_free char *store = xfmt("%s/%s", roots, keys[i]);
      cleanup_free char *root = store_root(store);
      if (root != NULL)
        scan_store(q, store, root, false, id, out);
    }
  }
  if (q->legacy_root == NULL)
    return;
  before = out->n;
  {
    cleanup_free char *lr = datadir_normalize_root(q->legacy_root);
    scan_store(q, lr, lr, true, id, out);
  }
  for (size_t i = before; i < out->n; i++) {
    bool dup = false;
    for (size_t j = 0; j < before && !dup; j++)
      dup = streq(out->v[j].id, out->v[i].id) && streq(out->v[j].root, out->v[i].root);
    if (dup) {
      datadir_hit_free(&out->v[i]);
      memmove(&out->v[i], &out->v[i + 1], (out->n - i - 1) * sizeof *out->v);
      out->n--, i--;
    }
  }
}

int datadir_list(const struct datadir_query *q, struct datadir_hit **ret, size_t *ret_n,
                 struct error *err)
{
  struct hits h = {0};

  collect(q, NULL, &h);
  *ret = h.v;
  *ret_n = h.n;
  return 0;
}

int datadir_find(const struct datadir_query *q, const char *id, struct datadir_hit *ret,
                 struct error *err)
{
  struct hits h = {0};
  size_t exact = 0, pick = 0;
  char list[700];
  size_t o = 0;

  collect(q, id, &h);
  for (size_t i = 0; i < h.n; i++)
    if (streq(h.v[i].id, id))
      exact++, pick = i;
  if (h.n == 0) {
    hits_free(&h);
    return error_set(err, ENOENT, "%s `%s`: %s (no such container id or prefix in `%s`%s%s%s)",
                     q->what, id, q->none, q->data_dir, q->legacy_root ? " nor under `" : "",
                     q->legacy_root ? q->legacy_root : "", q->legacy_root ? "`" : "");
  }
  if (exact == 1 || (exact == 0 && h.n == 1)) {
    *ret = h.v[pick];
    h.v[pick] = (struct datadir_hit){0};
    hits_free(&h);
    return 0;
  }
  list[0] = '\0';
  for (size_t i = 0; i < h.n && o + 1 < sizeof list; i++) {
    if (exact > 0 && !streq(h.v[i].id, id))
      continue;
    int w = snprintf(list + o, sizeof list - o, "%s%s (engine root `%s`)", o ? ", " : "", h.v[i].id,
                     h.v[i].root);
    o = w < 0 ? sizeof list : o + (size_t)w;
  }
  if (o >= sizeof list)
    strcpy(list + sizeof list - 5, "...");
  error_set(err, EEXIST, "%s `%s` is ambiguous: %s; give --root or a longer id", q->what, id, list);
  hits_free(&h);
  return -1;
}
