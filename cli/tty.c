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

/* The caller's stdin ended (a file, /dev/null, a pipe whose writer left, a
 * closed fd): the program reading the pty is told so as a terminal's user
 * tells it, with the EOF character, twice after a partial line (the first
 * only ends the line).  Nothing was said before and `cat` waited for input
 * for ever (tty-relay-stdin-eof).  A pty the program made raw gets nothing:
 * there the character is data.  Returns how many bytes it put in buf. */
static size_t eof_chars(int master, bool mid_line, char *buf)
{
  struct termios tio;

  if (tcgetattr(master, &tio) < 0 || !(tio.c_lflag & ICANON))
    return 0;
  buf[0] = buf[1] = (char)tio.c_cc[VEOF];
  return mid_line ? 2 : 1;
}

/* The caller's input goes to the pty without blocking (the master is
 * O_NONBLOCK, what is not taken yet waits in in.buf and stdin is not read
 * meanwhile): a blocking write filled the pty's input while the program
 * filled its output, which we no longer read, and both waited for ever
 * (tty-relay-stdin-eof: 40,000 lines through `cat`). */
struct relay_in {
  char buf[8192];
  size_t off, len;
  char last; /* the last byte read: '\n' at the start */
  bool open;
};

static void relay_in_read(struct relay_in *in, int master, short revents)
{
  ssize_t n = -1;

  if (!(revents & POLLNVAL)) /* a closed stdin is no input */
    n = read(0, in->buf, sizeof in->buf);
  if (n < 0 && !(revents & POLLNVAL) && (errno == EINTR || errno == EAGAIN))
    return;
  in->off = 0;
  if (n > 0) {
    in->len = (size_t)n;
    in->last = in->buf[n - 1];
    return;
  }
  in->open = false;
  in->len = eof_chars(master, in->last != '\n', in->buf);
}

static void relay_in_write(struct relay_in *in, int master)
{
  ssize_t w = write(master, in->buf + in->off, in->len - in->off);

  if (w > 0)
    in->off += (size_t)w;
  else if (w < 0 && errno != EINTR && errno != EAGAIN)
    in->open = false, in->off = in->len = 0; /* the pty is gone */
}

int fwd_wait(pid_t pid, int sigfd, int *master, struct error *err)
{
  struct relay_in in = {.last = '\n'};
  bool master_open;
  int status = 0;
  bool done = false;

  if (*master >= 0) {
    *master = above_stdio(*master);
    fcntl(*master, F_SETFL, fcntl(*master, F_GETFL) | O_NONBLOCK);
  }
  in.open = master_open = *master >= 0;
  if (*master >= 0)
    raw_mode(*master);
  while (!done || master_open) {
    bool pending = master_open && in.off < in.len;
    struct pollfd p[3] = {{sigfd, POLLIN, 0},
                          {master_open ? *master : -1, POLLIN | (pending ? POLLOUT : 0), 0},
                          {in.open && !pending ? 0 : -1, POLLIN, 0}};
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
        in.open = false;
      }
      master_open = pr == PUMP_OK;
    }
    if (master_open && pending && (p[1].revents & POLLOUT))
      relay_in_write(&in, *master);
    if (in.open && !pending && (p[2].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
      relay_in_read(&in, *master, p[2].revents);
  }
  restore_mode();
  return exit_code(status);
}
