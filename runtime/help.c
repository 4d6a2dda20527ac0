/* help.c - the usage text; keep it true to main.c and the verbs. */
#include "help.h"

static const char usage[] =
    "Usage: agentrt [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "agentrt is an OCI container runtime (runtime spec 1.2) that gives AI-agent\n"
    "containers safe defaults. It is a drop-in for runc and crun.\n"
    "\n"
    "Global options:\n"
    "  --root DIR            state directory (default /run/agentrt, or\n"
    "                        $XDG_RUNTIME_DIR/agentrt when not real root)\n"
    "  --log FILE            append log records to FILE\n"
    "  --log-format FORMAT   text (default) or json (lines with level, msg, time)\n"
    "  --debug               log debug messages\n"
    "  --systemd-cgroup      cgroupsPath is slice:prefix:name (systemd naming)\n"
    "  --profile NAME|PATH   profile to apply (default $AGENTRT_PROFILE, else agent)\n"
    "  --version, -v         print the version\n"
    "  --help, -h            print this help\n"
    "\n"
    "Commands:\n"
    "  create    create a container (stops before running the process)\n"
    "  start     run the process of a created container\n"
    "  run       create and start a container (waits unless --detach)\n"
    "  state     print the OCI state of a container\n"
    "  kill      send a signal (default SIGTERM) to the container's init\n"
    "  delete    delete a container (--force kills a running one)\n"
    "  exec      run a new process in a running container\n"
    "  ps        list the processes of a container\n"
    "  list      list containers\n"
    "  pause     freeze every process of a container\n"
    "  resume    thaw a paused container\n"
    "  update    change a container's resource limits\n"
    "  events    print resource statistics and OOM events\n"
    "  spec      write a default config.json\n"
    "  features  print the features this build supports (JSON)\n"
    "  explain   list what the profile changed in a container's config, and why\n"
    "  profile   show the effective profile (show [NAME]) or validate one (check FILE)\n"
    "  audit     show (--follow, --summary), verify or --purge a container's audit trail\n"
    "\n"
    "Run `agentrt COMMAND --help` for the options of a command.\n"
    "See agentrt(1) for details.\n";

void print_help(FILE *f)
{
  fputs(usage, f);
}
