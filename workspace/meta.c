/* meta.c - meta.json of a workspace: read and atomically rewritten.
 *
 * Paths are stored percent-encoded (bytes outside printable ASCII, '%', '"'
 * and '\') so that any file name survives the UTF-8 JSON parser.  Manifest
 * entries are compact arrays: [path, type, size, mtime_ns, mode, sha256|""].
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/util.h"
#include "workspace/internal.h"

#define META_MAX_BYTES ((size_t)256 << 20)

static const char type_chars[] = "-fdlo"; /* indexed by enum ws_ftype */

/* --- writing -------------------------------------------------------------- */

static void gs(yajl_gen g, const char *s)
{
  yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gpath(yajl_gen g, const char *s)
{
  cleanup_free char *e = ws_path_encode(s);
  gs(g, e);
}

static void gnum(yajl_gen g, int64_t v)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%lld", (long long)v);
  yajl_gen_number(g, buf, (size_t)n);
}

static void gstrv(yajl_gen g, char *const *v)
{
  yajl_gen_array_open(g);
  for (size_t i = 0; v && v[i]; i++)
    gs(g, v[i]);
  yajl_gen_array_close(g);
}

static void gen_manifest(yajl_gen g, const struct ws_manifest *m)
{
  yajl_gen_map_open(g);
  gs(g, "complete");
  yajl_gen_bool(g, m->complete);
  gs(g, "entries");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < m->n; i++) {
    const struct ws_mentry *e = &m->v[i];
    char hex[65] = "", t[2] = {type_chars[e->type], '\0'};
    if (e->has_hash)
      ws_hex(e->hash, 32, hex);
    yajl_gen_array_open(g);
    gpath(g, e->path);
    gs(g, t);
    gnum(g, (int64_t)e->size);
    gnum(g, e->mtime_ns);
    gnum(g, e->mode);
    gs(g, hex);
    yajl_gen_array_close(g);
  }
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
}

static void gen_meta(yajl_gen g, const struct workspace *w)
{
  yajl_gen_map_open(g);
  gs(g, "version"), gnum(g, 1);
  gs(g, "id"), gs(g, w->id);
  gs(g, "lowerdir"), gpath(g, w->lowerdir);
  if (w->view_start != 0)
    gs(g, "view_start"), gnum(g, (int64_t)w->view_start);
  gs(g, "dest"), gpath(g, w->dest);
  gs(g, "created"), gs(g, w->created);
  gs(g, "created_s"), gnum(g, w->created_s);
  gs(g, "retired_seq"), gnum(g, (int64_t)w->retired_seq);
  gs(g, "layers"), gstrv(g, w->layers);
  if (w->ovl_xattr != 0) /* the namespace of the overlay's metadata in the layers */
    gs(g, "overlay_xattr"), gs(g, w->ovl_xattr == WS_XATTR_USER ? "user" : "trusted");
  if (strv_len(w->mountpoints) > 0) {
    gs(g, "mountpoints");
    yajl_gen_array_open(g);
    for (size_t i = 0; w->mountpoints[i]; i++)
      gpath(g, w->mountpoints[i]);
    yajl_gen_array_close(g);
  }
  gs(g, "snapshots");
  yajl_gen_array_open(g);
  for (size_t i = 0; i < w->n_snaps; i++) {
    yajl_gen_map_open(g);
    gs(g, "name"), gs(g, w->snaps[i].name);
    gs(g, "created"), gs(g, w->snaps[i].created);
    gs(g, "created_s"), gnum(g, w->snaps[i].created_s);
    gs(g, "base"), gstrv(g, w->snaps[i].base);
    yajl_gen_map_close(g);
  }
  yajl_gen_array_close(g);
  gs(g, "manifest");
  gen_manifest(g, &w->manifest);
  yajl_gen_map_close(g);
}

int workspace_save(struct workspace *w, struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  cleanup_free char *tmp = xfmt("%s/meta.json.tmp", w->dir), *dst = xfmt("%s/meta.json", w->dir);
  const unsigned char *buf;
  size_t len;
  int fd, ret = -1;
  bool replacing;

  gen_meta(g, w);
  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
    error_set(err, 0, "workspace `%s`: cannot encode meta.json", w->id);
    goto out;
  }
  /* not truncated: the room workspace_save_reserve took is written into */
  fd = open(tmp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_errno(err, "workspace `%s`: write `%s`", w->id, tmp);
    goto out;
  }
  /* fsync before the rename keeps a good meta.json from being replaced by an
   * empty one after a crash; a new workspace has none to keep (and nothing
   * else in it is synced), so create skips the disk flush. */
  replacing = access(dst, F_OK) == 0;
  if (write_all(fd, buf, len) < 0 || write_all(fd, (const unsigned char *)"\n", 1) < 0 ||
      ftruncate(fd, (off_t)len + 1) < 0 || (replacing && fsync(fd) < 0)) {
    error_errno(err, "workspace `%s`: write `%s`", w->id, tmp);
    close(fd);
    goto out;
  }
  close(fd);
  if (rename(tmp, dst) < 0) {
    error_errno(err, "workspace `%s`: rename `%s`", w->id, tmp);
    goto out;
  }
  ret = 0;
out:
  yajl_gen_free(g);
  return ret;
}

int workspace_save_reserve(struct workspace *w, const char *what, uint64_t extra, struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);
  cleanup_free char *tmp = xfmt("%s/meta.json.tmp", w->dir);
  const unsigned char *buf;
  size_t len = 0;
  uint64_t need;
  int fd, e, ret = -1;

  gen_meta(g, w);
  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
    error_set(err, 0, "workspace `%s`: cannot encode meta.json", w->id);
    goto out;
  }
  need = (uint64_t)len + 1 + extra;
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_errno(err, "workspace `%s`: write `%s`", w->id, tmp);
    goto out;
  }
  if (fallocate(fd, 0, 0, (off_t)need) == 0 || errno == EOPNOTSUPP) {
    ret = 0; /* a file system without fallocate: no room is taken ahead */
  } else {
    e = errno;
    unlink(tmp);
    error_set(err, e,
              "workspace `%s`: %s: the data directory has no room to record it (%" PRIu64
              " bytes of `%s`), so nothing was done",
              w->id, what, need, tmp);
  }
  close(fd);
out:
  yajl_gen_free(g);
  return ret;
}

/* --- reading -------------------------------------------------------------- */

static const char *jstr(yajl_val obj, const char *key)
{
  const char *path[] = {key, NULL};
  yajl_val v = yajl_tree_get(obj, path, yajl_t_string);
  return v ? YAJL_GET_STRING(v) : NULL;
}

static bool jint(yajl_val v, int64_t *ret)
{
  return v && YAJL_IS_NUMBER(v) && parse_i64(YAJL_GET_NUMBER(v), ret) == 0;
}

static int64_t jkint(yajl_val obj, const char *key)
{
  const char *path[] = {key, NULL};
  int64_t r = 0;
  jint(yajl_tree_get(obj, path, yajl_t_number), &r);
  return r;
}

static char **jstrv(yajl_val obj, const char *key)
{
  const char *path[] = {key, NULL};
  yajl_val a = yajl_tree_get(obj, path, yajl_t_array);
  char **v = xmalloc0(sizeof *v);

  for (size_t i = 0; a && i < a->u.array.len; i++)
    if (YAJL_IS_STRING(a->u.array.values[i]))
      strv_push(&v, YAJL_GET_STRING(a->u.array.values[i]));
  return v;
}

static int nibble(char c)
{
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* Two hex digits (no sign, space or prefix, as the manifest writes them):
 * sscanf's "%2x" cost 32 calls a file at every load of a large workspace. */
static int hexbyte(const char *s)
{
  int hi = nibble(s[0]), lo = hi < 0 ? -1 : nibble(s[1]);
  return lo < 0 ? -1 : hi << 4 | lo;
}

static bool read_mentry(yajl_val a, struct ws_mentry *e)
{
  yajl_val *x = a->u.array.values;
  const char *t, *hex;
  int64_t size, mt, mode;

  if (!YAJL_IS_ARRAY(a) || a->u.array.len != 6 || !YAJL_IS_STRING(x[0]) || !YAJL_IS_STRING(x[1]) ||
      !YAJL_IS_STRING(x[5]) || !jint(x[2], &size) || !jint(x[3], &mt) || !jint(x[4], &mode))
    return false;
  t = strchr(type_chars, YAJL_GET_STRING(x[1])[0]);
  hex = YAJL_GET_STRING(x[5]);
  if (t == NULL || *t == '\0' || size < 0 || (strlen(hex) != 0 && strlen(hex) != 64))
    return false;
  e->path = ws_path_decode(YAJL_GET_STRING(x[0]));
  e->type = (enum ws_ftype)(t - type_chars);
  e->size = (uint64_t)size;
  e->mtime_ns = mt;
  e->mode = (uint32_t)mode & 07777;
  e->has_hash = strlen(hex) == 64;
  for (int i = 0; e->has_hash && i < 32; i++) {
    int b = hexbyte(hex + 2 * i);
    if (b < 0)
      e->has_hash = false;
    e->hash[i] = (unsigned char)b;
  }
  return true;
}

static int read_manifest(yajl_val root, struct ws_manifest *m)
{
  const char *mpath[] = {"manifest", NULL}, *cpath[] = {"complete", NULL},
             *epath[] = {"entries", NULL};
  yajl_val mo = yajl_tree_get(root, mpath, yajl_t_object), a;

  memset(m, 0, sizeof *m);
  if (mo == NULL)
    return 0;
  m->complete = YAJL_IS_TRUE(yajl_tree_get(mo, cpath, yajl_t_true));
  a = yajl_tree_get(mo, epath, yajl_t_array);
  if (a == NULL)
    return 0;
  m->v = xmalloc0((a->u.array.len + 1) * sizeof *m->v);
  for (size_t i = 0; i < a->u.array.len; i++) {
    if (!read_mentry(a->u.array.values[i], &m->v[m->n]))
      return -1;
    m->n++;
  }
  return 0;
}

static void read_snapshots(yajl_val root, struct workspace *w)
{
  const char *path[] = {"snapshots", NULL};
  yajl_val a = yajl_tree_get(root, path, yajl_t_array);

  if (a == NULL)
    return;
  w->snaps = xmalloc0((a->u.array.len + 1) * sizeof *w->snaps);
  for (size_t i = 0; i < a->u.array.len; i++) {
    yajl_val o = a->u.array.values[i];
    const char *name = jstr(o, "name"), *created = jstr(o, "created");
    if (!YAJL_IS_OBJECT(o) || name == NULL)
      continue;
    w->snaps[w->n_snaps++] = (struct ws_snapshot){xstrdup(name), xstrdup(created ? created : ""),
                                                  jkint(o, "created_s"), jstrv(o, "base")};
  }
}

static int read_text(const char *path, char **ret, struct error *err)
{
  cleanup_close int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  char *buf;
  size_t got = 0;

  if (fd < 0)
    return error_errno(err, "open `%s`", path);
  if (fstat(fd, &st) < 0 || (size_t)st.st_size > META_MAX_BYTES)
    return error_set(err, EFBIG, "read `%s`", path);
  buf = xmalloc((size_t)st.st_size + 1);
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n <= 0) {
      free(buf);
      return error_set(err, n < 0 ? errno : EIO, "read `%s`", path);
    }
    got += (size_t)n;
  }
  buf[got] = '\0';
  *ret = buf;
  return 0;
}

int ws_meta_read(struct workspace *w, struct error *err)
{
  cleanup_free char *path = xfmt("%s/meta.json", w->dir), *text = NULL;
  const char *lower, *dest, *created;
  char ebuf[256];
  yajl_val root;
  int ret = -1;

  if (read_text(path, &text, err) < 0)
    return -1;
  root = yajl_tree_parse(text, ebuf, sizeof ebuf);
  if (root == NULL || !YAJL_IS_OBJECT(root)) {
    error_set(err, 0, "`%s`: invalid JSON", path);
    goto out;
  }
  lower = jstr(root, "lowerdir"), dest = jstr(root, "dest"), created = jstr(root, "created");
  if (lower == NULL || dest == NULL || jkint(root, "version") != 1) {
    error_set(err, 0, "`%s`: missing lowerdir/dest or unknown version", path);
    goto out;
  }
  w->lowerdir = ws_path_decode(lower);
  w->view_start = (uint64_t)jkint(root, "view_start");
  w->dest = ws_path_decode(dest);
  w->created = xstrdup(created ? created : "");
  w->created_s = jkint(root, "created_s");
  w->retired_seq = (uint64_t)jkint(root, "retired_seq");
  w->layers = jstrv(root, "layers");
  {
    const char *x = jstr(root, "overlay_xattr");
    w->ovl_xattr = x == NULL ? 0 : streq(x, "user") ? WS_XATTR_USER : WS_XATTR_TRUSTED;
  }
  w->mountpoints = jstrv(root, "mountpoints");
  for (size_t i = 0; w->mountpoints[i]; i++) {
    char *d = ws_path_decode(w->mountpoints[i]);
    free(w->mountpoints[i]);
    w->mountpoints[i] = d;
  }
  read_snapshots(root, w);
  if (read_manifest(root, &w->manifest) < 0) {
    error_set(err, 0, "`%s`: manifest: bad entry", path);
    goto out;
  }
  ret = 0;
out:
  yajl_tree_free(root);
  return ret;
}
