/* stub.c - the sealed exec trampoline (CVE-2019-5736).
 *
 * The container process is never started from the agentrt binary itself:
 * process_exec() copies this tiny static program into a sealed memfd and
 * execveat()s it with argv = [resolved_path, args...]; the stub then does
 * execve(argv[0], argv + 1, envp).  From the first execveat on, the process's
 * /proc/<pid>/exe is the sealed memfd (read-only, cannot grow or shrink) and
 * then the container binary: never the host's agentrt, so nothing inside the
 * container can open the runtime binary for writing.
 *
 * Guard: the stub only runs when started through an fd (AT_EXECFN is
 * "/dev/fd/N").  Started any other way - e.g. as the interpreter of a
 * `#!/proc/self/exe` script while it briefly is /proc/<pid>/exe - it exits
 * 127 instead of exec'ing in a loop.
 *
 * No libc: built with -static -nostdlib -ffreestanding; _start is inline asm
 * for x86_64 and aarch64.  Any failure writes one line to fd 2 and exits 127.
 */
#define AT_NULL 0
#define AT_EXECFN 31

#if defined(__x86_64__)
#define NR_write 1
#define NR_execve 59
#define NR_exit_group 231

__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call stub_main\n"
        "  hlt\n");

static long sys3(long n, long a, long b, long c)
{
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
#define NR_write 64
#define NR_execve 221
#define NR_exit_group 94

__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  and sp, x0, #-16\n"
        "  bl stub_main\n"
        "  brk #0\n");

static long sys3(long n, long a, long b, long c)
{
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
  return x0;
}
#else
#error "agentrt stub: unsupported architecture"
#endif

static unsigned long slen(const char *s)
{
  unsigned long n = 0;
  while (s[n])
    n++;
  return n;
}

static void put(const char *s)
{
  sys3(NR_write, 2, (long)s, (long)slen(s));
}

static const char *errno_text(long e)
{
  switch (e) {
  case 2:
    return "no such file or directory";
  case 7:
    return "argument list too long";
  case 8:
    return "exec format error";
  case 12:
    return "cannot allocate memory";
  case 13:
    return "permission denied";
  case 20:
    return "not a directory";
  case 26:
    return "text file busy";
  case 40:
    return "too many levels of symbolic links";
  default:
    return "exec failed";
  }
}

/* "agentrt-stub: " names us, except on the program's exec failure, which
 * reads as runc's ("exec /x: no such file or directory"): it is the
 * container's own error, on its stderr. */
static __attribute__((noreturn)) void die(const char *what, const char *arg, const char *why)
{
  if (what[0] != 'e')
    put("agentrt-stub: ");
  put(what);
  if (arg) {
    put(" ");
    put(arg);
  }
  put(": ");
  put(why);
  put("\n");
  for (;;)
    sys3(NR_exit_group, 127, 0, 0);
}

static int started_through_fd(char **envp)
{
  static const char prefix[] = "/dev/fd/";
  unsigned long *aux;
  const char *fn = 0;

  while (*envp)
    envp++;
  for (aux = (unsigned long *)(envp + 1); aux[0] != AT_NULL; aux += 2)
    if (aux[0] == AT_EXECFN)
      fn = (const char *)aux[1];
  if (fn == 0)
    return 0;
  for (unsigned long i = 0; i < sizeof prefix - 1; i++)
    if (fn[i] != prefix[i])
      return 0;
  return 1;
}

__attribute__((noreturn, used)) void stub_main(long *sp)
{
  long argc = sp[0];
  char **argv = (char **)(sp + 1);
  char **envp = argv + argc + 1;
  long r;

  if (argc < 2)
    die("usage:", 0, "expected <path> <argv0> [args...]");
  if (!started_through_fd(envp))
    die("refusing to run as", argv[0], "not started by agentrt");
  r = sys3(NR_execve, (long)argv[0], (long)(argv + 1), (long)envp);
  die("exec", argv[0], errno_text(-r));
}
