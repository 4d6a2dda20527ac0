/* integration/cri/pause.c - the pod sandbox's process for the CRI tests (the
 * role of Kubernetes' pause image): it holds the pod's namespaces, reaps the
 * zombies of the pid namespace it may lead, and exits 0 on SIGTERM/SIGINT.
 * Built static by integration/cri/lib.bash into a one-file image. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig)
{
  (void)sig;
  _exit(0);
}

static void on_chld(int sig)
{
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0)
    ;
}

int main(void)
{
  struct sigaction sa = {0};
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);
  for (;;)
    pause();
}
