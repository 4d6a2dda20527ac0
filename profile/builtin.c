/* builtin.c - the built-in profiles `agent` (the default), `agent-strict` and `oci`.
 *
 * `agent` is also the base of every operator profile that does not say
 * "extends": "oci" (or "none"), so a profile file only lists what it changes.
 * `oci` turns everything off: agentrt then behaves as a plain OCI runtime.
 * `agent-strict` is contrib/profiles/agent-strict.json, embedded at build time
 * (mk/profiles.mk): `agent` with less room and ptrace denied (THREAT-MODEL.md).
 *
 * Field reference (struct agent_profile in profile.h):
 *   rootfs.readonly            root.readonly forced true
 *   workspace.path/mode/size   auto = overlay over an engine's bind, else tmpfs
 *   workspace.volatile         overlay "volatile": no syncs of the upper layer (faster start and
 *                              exit; a host crash may lose changes still waiting for review)
 *   workspace.protected        files tools run or load by themselves (runs of path
 *                              components, `*` globs allowed): overlay mode leaves changes
 *                              to them out of commit, bind mode binds them read-only (not
 *                              the globs)
 *   scratch[]                  size-limited nosuid,nodev tmpfs mounts ("$HOME" = user's home)
 *   capabilities.ceiling       may be kept; anything requested beyond ceiling+trim is refused
 *   capabilities.trim          dropped quietly (in Docker's default set, not in the ceiling)
 *   seccomp.deny               stacked deny-list filter (plus clone namespace flags, TIOCSTI,
 *                              AF_VSOCK sockets);
 *                              `agent` allows ptrace inside the container, `agent-strict` not
 *   env.defaults/pathAppend    NAME=VALUE set when the engine did not, PATH entries added;
 *                              "$HOME" is the process's writable home (skipped without one)
 *   namespaces.required        must not be the host's: missing network/pid/ipc is refused,
 *                              the others are added; joinable may be joined by path
 *   devices.restrict           only null zero full random urandom tty console ptmx
 *   maskedPaths/readonlyPaths  added to the engine's
 *   mounts.*                   engine sockets refused; other host binds read-only
 *   resources.*                default when unset, ceiling (refusal) above max
 *   egress/audit               carried to the runtime (netfilter/, audit)
 *   sandbox.home/homeDeny      `agentrt sandbox`: the home's files bound read-only (no
 *                              credentials: the deny list of home.c wins over them)
 *   annotations.allowLoosen    what run.agentrt.* may loosen, and how far
 */
#include "profile/profile.h"

#include "common/util.h"

static const char agent_json[] =
    "{\n"
    "  \"name\": \"agent\",\n"
    "  \"description\": \"agent sandbox: read-only root, reviewed workspace, no extra privileges, "
    "egress denied\",\n"
    "  \"extends\": \"none\",\n"
    "  \"rootfs\": {\"readonly\": true},\n"
    "  \"workspace\": {\n"
    "    \"path\": \"/workspace\", \"mode\": \"auto\", \"size\": \"1g\",\n"
    "    \"protected\": [\".envrc\", \".env\", \".env.*\", \".direnv/\", \".rvmrc\", "
    "\".rbenv-vars\",\n"
    "      \".autoenv.zsh\", \".autoenv_leave.zsh\",\n"
    "      \".vscode/\", \".idea/\", \".zed/\", \".devcontainer/\", \".mcp.json\", \".claude/\", "
    "\".cursor/\",\n"
    "      \".windsurf/\", \".gemini/\", \".codex/\", \".continue/\", \".roo/\", "
    "\".aider.conf.yml\",\n"
    "      \".exrc\", \".lvimrc\", \".vimrc\", \".nvimrc\", \".nvim.lua\", \".gdbinit\", "
    "\".lldbinit\", \".pdbrc\",\n"
    "      \".gitattributes\", \".mailmap\", \".lfsconfig\", \".pre-commit-config.yaml\", "
    "\".husky/\", \".hg/\", \".jj/\",\n"
    "      \".npmrc\", \".yarnrc\", \".yarnrc.yml\", \".yarn/releases/\", \".yarn/plugins/\",\n"
    "      \".pnpmfile.cjs\", \"bunfig.toml\", \".cargo/\", \"rust-toolchain\", "
    "\"rust-toolchain.toml\",\n"
    "      \"pyvenv.cfg\", \"site-packages/*.pth\", \"dist-packages/*.pth\", "
    "\"sitecustomize.py\",\n"
    "      \"usercustomize.py\", \"__pycache__/\", \"*.pyc\", \"pip.conf\",\n"
    "      \".mvn/\", \".bazelrc\", \".bazeliskrc\", \".bazelversion\", \".tool-versions\",\n"
    "      \".mise.toml\", \".mise.local.toml\", \"mise.toml\", \"mise.local.toml\", \".mise/\",\n"
    "      \".config/mise.toml\", \".config/mise/\", \"lefthook*\", \".lefthook*\",\n"
    "      \".lintstagedrc*\", \"lint-staged.config.*\", \".githooks/\", \".gitconfig\", "
    "\".sl/\",\n"
    "      \".pijul/\", \".devcontainer.json\", \".amazonq/\", \".kiro/\", \"opencode.json\",\n"
    "      \".opencode/\", \".helix/\", \".lazy.lua\", \".Rprofile\", \".irbrc\", \".pryrc\",\n"
    "      \".dir-locals.el\", \".dir-locals-2.el\", \".ropeproject/\",\n"
    "      \".bashrc\", \".bash_profile\", \".bash_login\", \".bash_logout\", \".profile\", "
    "\".zshrc\",\n"
    "      \".zshenv\", \".zprofile\", \".zlogin\", \".zlogout\"],\n"
    "    \"retention\": {\"maxSize\": \"10g\", \"maxAge\": \"30d\"}\n"
    "  },\n"
    "  \"scratch\": [\n"
    "    {\"path\": \"/tmp\", \"size\": \"512m\", \"mode\": \"1777\"},\n"
    "    {\"path\": \"/var/tmp\", \"size\": \"256m\", \"mode\": \"1777\"},\n"
    "    {\"path\": \"$HOME\", \"size\": \"256m\", \"mode\": \"700\"},\n"
    "    {\"path\": \"/dev/shm\", \"size\": \"64m\", \"mode\": \"1777\", \"noexec\": true}\n"
    "  ],\n"
    "  \"capabilities\": {\n"
    "    \"enforce\": true,\n"
    "    \"ceiling\": [\"CHOWN\", \"DAC_OVERRIDE\", \"FSETID\", \"FOWNER\", \"SETGID\", "
    "\"SETUID\",\n"
    "                \"NET_BIND_SERVICE\", \"KILL\", \"SETPCAP\"],\n"
    "    \"trim\": [\"NET_RAW\", \"MKNOD\", \"SETFCAP\", \"SYS_CHROOT\", \"AUDIT_WRITE\"]\n"
    "  },\n"
    "  \"noNewPrivileges\": true,\n"
    "  \"env\": {\n"
    "    \"defaults\": [\"HOME=$HOME\", \"NPM_CONFIG_PREFIX=$HOME/.npm-global\",\n"
    "      \"PYTHONUSERBASE=$HOME/.local\",\n"
    "      \"GOPATH=$HOME/go\", \"GOCACHE=$HOME/.cache/go-build\", \"CARGO_HOME=$HOME/.cargo\",\n"
    "      \"GIT_CONFIG_COUNT=1\", \"GIT_CONFIG_KEY_0=safe.directory\", "
    "\"GIT_CONFIG_VALUE_0=*\"],\n"
    "    \"pathAppend\": [\"$HOME/.local/bin\", \"$HOME/.npm-global/bin\", \"$HOME/go/bin\",\n"
    "      \"$HOME/.cargo/bin\"]\n"
    "  },\n"
    "  \"seccomp\": {\n"
    "    \"enabled\": true, \"errno\": 1,\n"
    "    \"denyCloneNamespaces\": true, \"denyTiocsti\": true, \"denyVsock\": true,\n"
    "    \"denyRecvErr\": true,\n"
    "    \"deny\": [\"unshare\", \"setns\",\n"
    "      \"mount\", \"umount2\", \"fsopen\", \"fsconfig\", \"fsmount\", \"fspick\", "
    "\"move_mount\",\n"
    "      \"open_tree\", \"open_tree_attr\", \"pivot_root\", \"mount_setattr\",\n"
    "      \"bpf\", \"perf_event_open\", \"keyctl\", \"add_key\", \"request_key\",\n"
    "      \"userfaultfd\",\n"
    "      \"io_uring_setup\", \"io_uring_enter\", \"io_uring_register\",\n"
    "      \"init_module\", \"finit_module\", \"delete_module\", \"kexec_load\", "
    "\"kexec_file_load\",\n"
    "      \"open_by_handle_at\", \"clock_settime\", \"clock_adjtime\", \"settimeofday\", "
    "\"adjtimex\",\n"
    "      \"reboot\", \"swapon\", \"swapoff\", \"acct\", \"syslog\"]\n"
    "  },\n"
    "  \"namespaces\": {\n"
    "    \"required\": [\"pid\", \"network\", \"mount\", \"ipc\", \"uts\", \"cgroup\"],\n"
    "    \"joinable\": [\"pid\", \"network\", \"ipc\", \"uts\"]\n"
    "  },\n"
    "  \"devices\": {\"restrict\": true},\n"
    "  \"maskedPaths\": [\"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\",\n"
    "    \"/proc/latency_stats\", \"/proc/timer_list\", \"/proc/timer_stats\", "
    "\"/proc/sched_debug\",\n"
    "    \"/proc/scsi\", \"/sys/firmware\", \"/sys/devices/virtual/powercap\",\n"
    "    \"/proc/kpageflags\", \"/proc/kpagecount\", \"/proc/kpagecgroup\", "
    "\"/proc/vmallocinfo\"],\n"
    "  \"readonlyPaths\": [\"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", "
    "\"/proc/sysrq-trigger\"],\n"
    "  \"mounts\": {\n"
    "    \"denySockets\": [\"/run/docker.sock\", \"/var/run/docker.sock\",\n"
    "      \"/run/containerd/containerd.sock\", \"/var/run/containerd/containerd.sock\",\n"
    "      \"/run/containerd/containerd.sock.ttrpc\", \"/run/podman/podman.sock\",\n"
    "      \"/var/run/podman/podman.sock\", \"/run/crio/crio.sock\", \"/var/run/crio/crio.sock\",\n"
    "      \"/run/buildkit/buildkitd.sock\", \"/run/dockershim.sock\", "
    "\"/run/cri-dockerd.sock\"],\n"
    "    \"denySocketNames\": [\"docker.sock\", \"containerd.sock\", "
    "\"containerd.sock.ttrpc\",\n"
    "      \"podman.sock\", \"crio.sock\", \"buildkitd.sock\", \"dockershim.sock\", "
    "\"cri-dockerd.sock\"],\n"
    "    \"hardenBinds\": true, \"readonlyBinds\": true,\n"
    "    \"writableBinds\": [\"/etc/hosts\", \"/etc/hostname\", \"/etc/resolv.conf\",\n"
    "      \"/dev/termination-log\", \"/dev/shm\"]\n"
    "  },\n"
    "  \"resources\": {\n"
    "    \"memory\": {\"default\": \"2g\", \"max\": \"16g\"},\n"
    "    \"pids\": {\"default\": 1024, \"max\": 32768},\n"
    "    \"cpus\": {\"default\": 2, \"max\": 16}\n"
    "  },\n"
    "  \"egress\": {\"default\": \"deny\", \"allow\": [], \"dns\": {\"upstream\": []}},\n"
    "  \"ingress\": {\"default\": \"deny\", \"allow\": []},\n"
    "  \"audit\": {\"enabled\": true, \"maxSize\": \"100m\", \"maxAge\": \"30d\"},\n"
    "  \"sandbox\": {\"home\": [\".gitconfig\", \".config/git\", \".gitignore_global\", "
    "\".editorconfig\",\n"
    "    \".inputrc\"], \"homeDeny\": []},\n"
    "  \"subagents\": {\"enabled\": true, \"maxChildren\": 8, \"maxDepth\": 2},\n"
    "  \"annotations\": {\n"
    "    \"apply\": true,\n"
    "    \"allowLoosen\": {\n"
    "      \"memory\": \"8g\", \"pids\": 4096, \"cpus\": 4, \"workspaceSize\": \"4g\",\n"
    "      \"workspaceModes\": [\"overlay\", \"bind\"],\n"
    "      \"ingressAllow\": [\"*/tcp\"],\n"
    "      \"egressAllow\": [\"pypi.org\", \"files.pythonhosted.org\", \"registry.npmjs.org\",\n"
    "        \"github.com\", \"*.github.com\", \"*.githubusercontent.com\", "
    "\"proxy.golang.org\",\n"
    "        \"sum.golang.org\", \"crates.io\", \"static.crates.io\", \"index.crates.io\",\n"
    "        \"deb.debian.org\", \"security.debian.org\"]\n"
    "    }\n"
    "  }\n"
    "}\n";

/* contrib/profiles/agent-strict.json, embedded by mk/profiles.mk */
extern const char agentrt_agent_strict_json[];

static const char oci_json[] = "{\n"
                               "  \"name\": \"oci\",\n"
                               "  \"description\": \"plain OCI runtime: the engine's config as "
                               "is, run.agentrt.* annotations ignored\",\n"
                               "  \"extends\": \"none\"\n"
                               "}\n";

const char *profile_builtin_json(const char *name)
{
  if (streq(name, "agent"))
    return agent_json;
  if (streq(name, "oci"))
    return oci_json;
  if (streq(name, "agent-strict"))
    return agentrt_agent_strict_json;
  return NULL;
}
