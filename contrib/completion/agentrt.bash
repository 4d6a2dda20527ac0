# bash completion for agentrt
_agentrt() {
  local cur prev words cword
  _init_completion || return
  local cmds="create start run state kill delete exec ps list pause resume update events spec features explain profile audit egress workspace purge data sandbox doctor"
  local globals="--root --data-dir --log --log-format --debug --systemd-cgroup --profile --version --help"
  local i cmd=""
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      --root|--data-dir|--log|--log-format|--profile) ((i++)) ;;
      -*) ;;
      *) cmd="${words[i]}"; break ;;
    esac
  done
  if [[ -z "$cmd" ]]; then
    case "$prev" in
      --root|--data-dir|--log) _filedir -d; return ;;
      --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W "$cmds $globals" -- "$cur"))
    return
  fi
  local opts=""
  case "$cmd" in
    create) opts="--bundle --config --pid-file --console-socket --no-pivot --no-new-keyring --preserve-fds" ;;
    run) opts="--bundle --config --pid-file --console-socket --detach --keep --no-pivot --no-new-keyring --preserve-fds" ;;
    kill) opts="--all" ;;
    delete) opts="--force" ;;
    exec) opts="--process --detach --pid-file --tty --console-socket --env --cwd --user --cap --no-new-privs --preserve-fds --additional-gids --ignore-paused --cgroup" ;;
    ps|list) opts="--format" ;;
    update) opts="--resources --memory --memory-swap --memory-reservation --cpu-shares --cpu-period --cpu-quota --cpuset-cpus --cpuset-mems --pids-limit --blkio-weight" ;;
    events) opts="--stats --interval" ;;
    spec) opts="--bundle --rootless" ;;
    purge) opts="--older-than --dry-run" ;;
    data) COMPREPLY=($(compgen -W "path migrate --dry-run" -- "$cur")); return ;;
  esac
  case "$prev" in
    --bundle|-b|--pid-file|--console-socket|--process|-p|--resources) _filedir; return ;;
    --format) COMPREPLY=($(compgen -W "table json" -- "$cur")); return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  else
    local root=/run/agentrt
    COMPREPLY=($(compgen -W "$(ls "$root" 2>/dev/null)" -- "$cur"))
  fi
}
complete -F _agentrt agentrt
