/* tty.c - see tty.h */
#include "cli/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_tio;
static bool tio_saved;

/* A caller's closed stdin or stdout is the lowest free fd: an fd of ours
 * there (the signalfd, the pty master) would be read as the caller's input
 * or written as its output (tty-relay-stdin-closed).  Moved above 2, the
 * std fd stays closed; nothing is done for an fd already above. */
static int above_stdio(int fd)
{
  int moved;

  if (fd > 2)
    return fd;
  moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return fd;
  close(fd);
  return moved;
}

int fwd_signals_block(struct error *err)
{
  sigset_t set;
  int fd;

  sigfillset(&set);
  /* never forward the ones that are about our own faults */
  sigdelset(&set, SIGSEGV);
  sigdelset(&set, SIGBUS);
  sigdelset(&set, SIGILL);
  sigdelset(&set, SIGFPE);
  sigdelset(&set, SIGABRT);
  sigdelset(&set, SIGTRAP);
  sigdelset(&set, SIGSYS);
  if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
    return error_errno(err, "block signals");
  fd = signalfd(-1, &set, SFD_CLOEXEC);
  if (fd < 0)
    return error_errno(err, "signalfd");
  return above_stdio(fd);
}

static void copy_winsize(int from, int to)
{
  struct winsize ws;
  if (ioctl(from, TIOCGWINSZ, &ws) == 0)
    ioctl(to, TIOCSWINSZ, &ws);
}

static void raw_mode(int master)
{
  struct termios tio;

  if (!isatty(0))
    return;
  if (tcgetattr(0, &saved_tio) < 0)
    return;
  tio_saved = true;
  tio = saved_tio;
  cfmakeraw(&tio);
  tio.c_oflag = saved_tio.c_oflag; /* keep output post-processing */
  tcsetattr(0, TCSANOW, &tio);
  copy_winsize(0, master);
}

static void restore_mode(void)
{
  if (tio_saved)
    tcsetattr(0, TCSANOW, &saved_tio);
  tio_saved = false;
}

void tty_save(struct tty_saved *s)
{
  for (int fd = 0; fd < 3; fd++) {
    s->is_tty[fd] =
        isatty(fd) && tcgetattr(fd, &s->tio[fd]) == 0 && (s->flags[fd] = fcntl(fd, F_GETFL)) >= 0;
  }
}

void tty_restore(const struct tty_saved *s)
{
  for (int fd = 0; fd < 3; fd++) {
    if (!s->is_tty[fd])
      continue;
    /* a terminal of the caller's: nothing to say if it has gone (hung up) */
    (void)tcsetattr(fd, TCSANOW, &s->tio[fd]);
    (void)fcntl(fd, F_SETFL, s->flags[fd]);
  }
}

enum pump_result { PUMP_OK, PUMP_SRC_END, PUMP_DST_GONE };

static enum pump_result pump(int from, int to)
{
  char buf[8192];
  ssize_t n = read(from, buf, sizeof buf);

  if (n <= 0)
    return n < 0 && (errno == EINTR || errno == EAGAIN) ? PUMP_OK : PUMP_SRC_END;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buf + off, (size_t)(n - off));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return PUMP_DST_GONE;
    }
    off += w;
  }
  return PUMP_OK;
}

static int exit_code(int status)
{
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* The caller's output is gone (closed, full, its reader left): hang the pty
 * up, as a terminal that goes away does.  Left open and unread, the
 * program blocked writing to it and we waited for the program for ever
 * (tty-relay-stdout-gone); now its writes fail and it runs to its end. */
static void hang_up(int *master)
{
  close(*master);
  *master = -1;
}

int fwd_wait(pid_t pid, int sigfd, int *master, struct error *err)
{
  bool in_open, master_open;
  int status = 0;
  bool done = false;

  if (*master >= 0)
    *master = above_stdio(*master);
  in_open = master_open = *master >= 0;
  if (*master >= 0)
    raw_mode(*master);
  while (!done || master_open) {
    struct pollfd p[3] = {
        {sigfd, POLLIN, 0}, {master_open ? *master : -1, POLLIN, 0}, {in_open ? 0 : -1, POLLIN, 0}};
    int r = poll(p, 3, done ? 100 : -1);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      restore_mode();
      return error_errno(err, "poll");
    }
    if (r == 0 && done)
      break; /* nothing more from the pty after the process ended */
    if (p[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      if (read(sigfd, &si, sizeof si) == sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
          pid_t w;
          int st;
          /* other children (the monitor) are reaped too; only the
           * init's status is the container's */
          while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == pid) {
              status = st;
              done = true;
            }
        } else if (si.ssi_signo == SIGWINCH) {
          if (*master >= 0)
            copy_winsize(0, *master);
        } else if (!done) {
          kill(pid, (int)si.ssi_signo);
        }
      }
    }
    if (master_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      enum pump_result pr = pump(*master, 1);
      if (pr == PUMP_DST_GONE) {
        hang_up(master);
        in_open = false;
      }
      master_open = pr == PUMP_OK;
    }
    /* a closed stdin (POLLNVAL) is no input; the pty stays */
    if (in_open && (p[2].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
      in_open = !(p[2].revents & POLLNVAL) && pump(0, *master) == PUMP_OK;
  }
  restore_mode();
  return exit_code(status);
}
