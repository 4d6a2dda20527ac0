/* audit_cli.c - lifecycle records from CLI verbs (see audit_cli.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>

#include "audit/audit.h"
#include "audit/jbuf.h"
#include "common/log.h"
#include "common/util.h"
#include "container/audit_cli.h"
#include "os/fsutil.h"

void audit_cli_event(const char *root, const char *id, const char *kind, const char *fields)
{
  cleanup_free char *marker = xfmt("%s/%s/audit", root, id);
  cleanup_free char *trail = NULL;
  struct error err = {0};
  size_t len = 0;

  if (read_file_at(AT_FDCWD, marker, 4096, &trail, &len, &err) < 0) {
    if (err.code != ENOENT && err.code != ENOTDIR)
      log_warning("audit `%s`: %s", id, err.msg);
    return; /* no trail for this container */
  }
  if (audit_append_event(trail, id, kind, fields, &err) < 0)
    log_warning("audit `%s`: record %s: %s", id, kind, err.msg);
}

void audit_cli_exec(const char *root, const char *id, char *const *argv, pid_t pid, bool tty,
                    bool detach)
{
  struct jbuf b = {0};

  jb_key_strv(&b, "argv", argv, argv ? strv_len(argv) : 0);
  if (pid > 0)
    jb_key_i64(&b, "pid", pid);
  jb_key_bool(&b, "tty", tty);
  jb_key_bool(&b, "detach", detach);
  audit_cli_event(root, id, "exec", jb_str(&b));
  jb_free(&b);
}

void audit_cli_kill(const char *root, const char *id, int sig, bool all)
{
  struct jbuf b = {0};
  const char *name = sigabbrev_np(sig);

  jb_key_i64(&b, "signal", sig);
  if (name)
    jb_key_str(&b, "name", name);
  jb_key_bool(&b, "all", all);
  audit_cli_event(root, id, "kill", jb_str(&b));
  jb_free(&b);
}
