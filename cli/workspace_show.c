/* workspace_show.c - text and JSON renderings of `agentrt workspace` (diff,
 * list, snapshots, the prepare helper's mount entry). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cli/workspace_cmd.h"
#include "common/util.h"
#include "workspace/internal.h"

static void gs(yajl_gen g, const char *s)
{
  yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gks(yajl_gen g, const char *k, const char *v)
{
  if (v == NULL)
    return;
  gs(g, k);
  gs(g, v);
}

static void gku(yajl_gen g, const char *k, uint64_t v)
{
  char buf[32];
  int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  gs(g, k);
  yajl_gen_number(g, buf, (size_t)n);
}

static void gkmode(yajl_gen g, const char *k, uint32_t mode)
{
  char buf[8];
  snprintf(buf, sizeof buf, "%04o", mode & 07777);
  gks(g, k, buf);
}

static int flush(FILE *out, yajl_gen g, struct error *err)
{
  const unsigned char *buf;
  size_t len;
  int ret = 0;

  if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
    ret = error_set(err, 0, "workspace: cannot encode JSON");
  else
    fprintf(out, "%.*s\n", (int)len, (const char *)buf);
  yajl_gen_free(g);
  return ret;
}

/* The whole of a small regular file below rootfd, or NULL. */
static char *read_small(int rootfd, const char *path, size_t *ret_len)
{
  cleanup_close int fd = ws_open_beneath(rootfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  struct stat st;
  size_t got = 0;
  char *buf;

  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size > WS_DIFF_MAX_BYTES)
    return NULL;
  buf = xmalloc((size_t)st.st_size + 1);
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  *ret_len = got;
  return buf;
}

/* "a/<path>", quoted as a whole when the path needs it (as git does). */
static char *label(const char *prefix, const char *path)
{
  cleanup_free char *raw = xfmt("%s%s", prefix, path);
  return ws_quote_path(raw);
}

/* A unified diff of one change, or a line saying why there is none: a
 * text too large to show was "Binary files differ" (text-called-binary: a
 * line appended to a host text of 20,001 lines or over 1 MiB read as a
 * binary's change). */
static char *patch_of(const struct ws_layers *l, const struct ws_change *c)
{
  cleanup_free char *a = NULL, *b = NULL, *la = NULL, *lb = NULL;
  const char *old = c->old_path ? c->old_path : c->path;
  size_t alen = 0, blen = 0;
  bool big = false;
  char *p;

  if (c->type != WS_T_FILE || (c->kind == WS_MODIFIED && c->content_same) ||
      c->kind == WS_RENAMED || (c->old_type != WS_T_FILE && c->old_type != WS_T_NONE))
    return NULL;
  if (c->kind != WS_ADDED && (a = read_small(l->hostfd, old, &alen)) == NULL)
    goto binary;
  if (c->kind != WS_DELETED && (b = read_small(l->fds[c->layer], c->path, &blen)) == NULL)
    goto binary;
  la = c->kind == WS_ADDED ? xstrdup("/dev/null") : label("a/", old);
  lb = c->kind == WS_DELETED ? xstrdup("/dev/null") : label("b/", c->path);
  p = ws_unified_diff(a ? a : "", alen, b ? b : "", blen, la, lb);
  if (p != NULL)
    return p;
binary:
  free(la);
  free(lb);
  la = label("a/", old);
  lb = label("b/", c->path);
  if ((c->kind != WS_ADDED && a == NULL) || (c->kind != WS_DELETED && b == NULL))
    big = (c->kind != WS_ADDED && c->old_size > WS_DIFF_MAX_BYTES) ||
          (c->kind != WS_DELETED && c->size > WS_DIFF_MAX_BYTES);
  else
    big = memchr(a ? a : "", '\0', alen) == NULL && memchr(b ? b : "", '\0', blen) == NULL;
  if (big)
    return xfmt("Files %s and %s differ (not shown: over %zu bytes or %d lines)\n", la, lb,
                (size_t)WS_DIFF_MAX_BYTES, WS_DIFF_MAX_LINES);
  return xfmt("Binary files %s and %s differ\n", la, lb);
}

/* ", mode 0644 -> 0755" when c's mode changed, then end */
static void mode_change(FILE *out, const struct ws_change *c, const char *end)
{
  if ((c->old_mode & 07777) != (c->mode & 07777))
    fprintf(out, ", mode %04o -> %04o", c->old_mode & 07777, c->mode & 07777);
  fputs(end, out);
}

static void text_line(FILE *out, const struct ws_change *c)
{
  const char *slash = c->type == WS_T_DIR ? "/" : "";
  cleanup_free char *path = ws_quote_path(c->path);
  cleanup_free char *old = ws_quote_path(c->old_path);

  fprintf(out, "%s%-9s ", c->protect ? "! " : "", ws_kind_name(c->kind));
  switch (c->kind) {
  case WS_ADDED:
    if (c->type == WS_T_DIR)
      fprintf(out, "%s/", path);
    else
      fprintf(out, "%s  (%s, %llu bytes)", path, ws_ftype_name(c->type),
              (unsigned long long)c->size);
    break;
  case WS_MODIFIED:
    if (c->old_type != c->type)
      fprintf(out, "%s%s  (%s -> %s)", path, slash, ws_ftype_name(c->old_type),
              ws_ftype_name(c->type));
    else if (c->content_same)
      fprintf(out, "%s%s  (mode %04o -> %04o)", path, slash, c->old_mode, c->mode);
    else
      fprintf(out, "%s  (%llu -> %llu bytes", path, (unsigned long long)c->old_size,
              (unsigned long long)c->size);
    /* a mode changed with the content (mode-hidden-by-content) */
    if (c->old_type == c->type && !c->content_same)
      mode_change(out, c, ")");
    break;
  case WS_DELETED:
    if (c->type == WS_T_DIR)
      fprintf(out, "%s/  (directory, %llu files, %llu bytes)", path, (unsigned long long)c->n_files,
              (unsigned long long)c->old_size);
    else
      fprintf(out, "%s  (%s, %llu bytes)", path, ws_ftype_name(c->type),
              (unsigned long long)c->old_size);
    break;
  case WS_RENAMED:
    fprintf(out, "%s -> %s  (%llu bytes", old, path, (unsigned long long)c->size);
    mode_change(out, c, ")");
    break;
  }
  if (c->target && c->kind != WS_DELETED) {
    cleanup_free char *t = ws_quote_path(c->target);
    /* always in quotes: a target may hold spaces or brackets */
    fprintf(out, t[0] == '"' ? " -> %s" : " -> \"%s\"", t);
  }
  if (c->type == WS_T_OTHER)
    fprintf(out, "  [special file: never committed]");
  if (c->protect)
    fprintf(out, "  [protected: %s]", c->protect);
  if (c->ignored)
    fprintf(out, "  [new, ignored by git: %s: the host's `git status` will not show it]",
            c->ignored);
  fputc('\n', out);
}

/* Valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF)? */
static bool utf8_valid(const unsigned char *s)
{
  while (*s) {
    unsigned c = *s, n = c < 0x80             ? 0
                         : (c & 0xe0) == 0xc0 ? 1
                         : (c & 0xf0) == 0xe0 ? 2
                         : (c & 0xf8) == 0xf0 ? 3
                                              : 4;
    unsigned cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
    if (n == 4)
      return false;
    for (unsigned i = 1; i <= n; i++) {
      if ((s[i] & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    s += n + 1;
  }
  return true;
}

/* A path in JSON: exact when it is UTF-8 (yajl escapes control characters);
 * else "key" holds the quoted text form and "key_hex" the exact bytes. */
static void gkpath(yajl_gen g, const char *k, const char *path)
{
  cleanup_free char *q = NULL, *hk = NULL, *hex = NULL;

  if (path == NULL)
    return;
  if (utf8_valid((const unsigned char *)path)) {
    gks(g, k, path);
    return;
  }
  q = ws_quote_path(path);
  gks(g, k, q);
  hk = xfmt("%s_hex", k);
  hex = xmalloc(strlen(path) * 2 + 1);
  ws_hex((const unsigned char *)path, strlen(path), hex);
  gks(g, hk, hex);
}

static void json_change(yajl_gen g, const struct ws_layers *l, const struct ws_change *c,
                        bool patch)
{
  yajl_gen_map_open(g);
  gks(g, "kind", ws_kind_name(c->kind));
  gks(g, "type", ws_ftype_name(c->type));
  gkpath(g, "path", c->path);
  gkpath(g, "old_path", c->old_path);
  if (c->kind != WS_DELETED)
    gkpath(g, "target", c->target);
  gks(g, "protected", c->protect);
  gks(g, "ignored", c->ignored);
  if (c->kind != WS_DELETED) {
    gku(g, "size", c->size);
    gkmode(g, "mode", c->mode);
  }
  if (c->kind != WS_ADDED) {
    gks(g, "old_type", ws_ftype_name(c->old_type));
    gku(g, "old_size", c->old_size);
    gkmode(g, "old_mode", c->old_mode);
  }
  if (c->kind == WS_DELETED && c->type == WS_T_DIR)
    gku(g, "files", c->n_files);
  if (c->kind == WS_MODIFIED) {
    gs(g, "content_changed");
    yajl_gen_bool(g, !c->content_same);
  }
  if (patch) {
    cleanup_free char *p = patch_of(l, c);
    gks(g, "patch", p);
  }
  yajl_gen_map_close(g);
}

int ws_show_diff(FILE *out, const struct workspace *w, const struct ws_layers *l,
                 const struct ws_changes *c, bool json, bool patch, struct error *err)
{
  size_t count[4] = {0}, prot = 0, ign = 0;

  if (json) {
    yajl_gen g = yajl_gen_alloc(NULL);
    yajl_gen_map_open(g);
    gks(g, "id", w->id);
    gks(g, "lowerdir", w->lowerdir);
    gks(g, "destination", w->dest);
    gs(g, "changes");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < c->n; i++)
      json_change(g, l, &c->v[i], patch);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    return flush(out, g, err);
  }
  for (size_t i = 0; i < c->n; i++) {
    text_line(out, &c->v[i]);
    count[c->v[i].kind]++;
    prot += c->v[i].protect != NULL;
    ign += c->v[i].ignored != NULL;
  }
  for (size_t i = 0; patch && i < c->n; i++) {
    cleanup_free char *p = patch_of(l, &c->v[i]);
    cleanup_free char *q = p ? ws_quote_text(p) : NULL;
    if (q)
      fprintf(out, "\n%s", q);
  }
  /* a child's host dir ends in the --workspace its parent named
   * (ws-path-escape): quoted as the changes' names are */
  cleanup_free char *qlower = ws_quote_path(w->lowerdir);
  if (c->n == 0)
    fprintf(out, "no changes to %s\n", qlower);
  else
    fprintf(out, "# %zu added, %zu modified, %zu deleted, %zu renamed (host dir %s)\n", count[0],
            count[1], count[2], count[3], qlower);
  if (prot > 0)
    fprintf(out,
            "# %zu protected (marked `!`): commit leaves them out unless named with "
            "--include-protected PATH\n",
            prot);
  if (ign > 0)
    fprintf(out,
            "# %zu new files the host's git ignores (marked `new, ignored by git`): after commit "
            "`git status` and `git diff` do not show them (`git status --ignored` does)\n",
            ign);
  return 0;
}

int ws_show_list(FILE *out, const struct ws_list_row *rows, size_t n, bool json, struct error *err)
{
  if (json) {
    yajl_gen g = yajl_gen_alloc(NULL);
    yajl_gen_array_open(g);
    for (size_t i = 0; i < n; i++) {
      const struct workspace *w = rows[i].w;
      yajl_gen_map_open(g);
      gks(g, "id", w->id);
      gks(g, "lowerdir", w->lowerdir);
      gks(g, "destination", w->dest);
      gks(g, "created", w->created);
      gks(g, "container", rows[i].state);
      gks(g, "root", rows[i].root);
      gku(g, "snapshots", w->n_snaps);
      gs(g, "changes");
      if (rows[i].changes < 0)
        yajl_gen_null(g);
      else
        yajl_gen_integer(g, rows[i].changes);
      gku(g, "upper_bytes", rows[i].upper_bytes);
      gku(g, "disk_bytes", rows[i].disk_bytes);
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    return flush(out, g, err);
  }
  fprintf(out, "%-20s %-9s %-5s %-9s %-13s %-13s %-31s %-32s %s\n", "ID", "CONTAINER", "SNAPS",
          "CHANGES", "UPPER BYTES", "DISK BYTES", "CREATED", "ENGINE ROOT", "HOST DIR -> DEST");
  for (size_t i = 0; i < n; i++) {
    const struct workspace *w = rows[i].w;
    char changes[24] = "?";
    /* a child's paths are what its parent named (ws-path-escape) */
    cleanup_free char *qlower = ws_quote_path(w->lowerdir), *qdest = ws_quote_path(w->dest);
    if (rows[i].changes >= 0)
      snprintf(changes, sizeof changes, "%lld", rows[i].changes);
    fprintf(out, "%-20s %-9s %-5zu %-9s %-13llu %-13llu %-31s %-32s %s -> %s\n", w->id,
            rows[i].state, w->n_snaps, changes, (unsigned long long)rows[i].upper_bytes,
            (unsigned long long)rows[i].disk_bytes, w->created, rows[i].root, qlower, qdest);
  }
  return 0;
}

int ws_show_snapshots(FILE *out, const struct workspace *w, const char *state, bool json,
                      struct error *err)
{
  if (json) {
    yajl_gen g = yajl_gen_alloc(NULL);
    yajl_gen_map_open(g);
    gks(g, "id", w->id);
    gks(g, "container", state);
    gku(g, "upper_bytes", workspace_du(w, "upper"));
    gku(g, "disk_bytes", workspace_du(w, "."));
    gs(g, "layers");
    yajl_gen_array_open(g);
    for (size_t i = 0; w->layers && w->layers[i]; i++)
      gs(g, w->layers[i]);
    yajl_gen_array_close(g);
    gs(g, "snapshots");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < w->n_snaps; i++) {
      cleanup_free char *sub = xfmt("snapshots/%s", w->snaps[i].name);
      yajl_gen_map_open(g);
      gks(g, "name", w->snaps[i].name);
      gks(g, "created", w->snaps[i].created);
      gku(g, "bytes", workspace_du(w, sub));
      yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    return flush(out, g, err);
  }
  cleanup_free char *qlower = ws_quote_path(w->lowerdir), *qdest = ws_quote_path(w->dest);

  fprintf(out, "workspace %s (container %s): %s -> %s\n", w->id, state, qlower, qdest);
  fprintf(out, "%-24s %-31s %s\n", "SNAPSHOT", "CREATED", "BYTES");
  for (size_t i = 0; i < w->n_snaps; i++) {
    cleanup_free char *sub = xfmt("snapshots/%s", w->snaps[i].name);
    fprintf(out, "%-24s %-31s %llu\n", w->snaps[i].name, w->snaps[i].created,
            (unsigned long long)workspace_du(w, sub));
  }
  fprintf(out, "current layers: ");
  for (size_t i = 0; w->layers && w->layers[i]; i++)
    fprintf(out, "%s%s", i ? " " : "", w->layers[i]);
  fprintf(out, "%s\nupper: %llu bytes, disk use: %llu bytes\n",
          w->layers && w->layers[0] ? "" : "(none)", (unsigned long long)workspace_du(w, "upper"),
          (unsigned long long)workspace_du(w, "."));
  return 0;
}

int ws_show_mount_entry(FILE *out, const struct workspace *w, struct error *err)
{
  yajl_gen g = yajl_gen_alloc(NULL);

  yajl_gen_map_open(g);
  gks(g, "destination", w->dest);
  gks(g, "type", "overlay");
  gks(g, "source", "overlay");
  gs(g, "options");
  yajl_gen_array_open(g);
  for (size_t i = 0; w->mount_optv && w->mount_optv[i]; i++)
    gs(g, w->mount_optv[i]);
  yajl_gen_array_close(g);
  yajl_gen_map_close(g);
  return flush(out, g, err);
}
