# libc-trace.py - gdb script for contrib/hot-text.sh: which of the C library's
# functions a static agentrt enters (peak RSS: bench/README.md).
#
#   HOT_SYMS=FILE HOT_OUT=FILE [HOT_FOLLOW=child] gdb -q -batch -x libc-trace.py --args agentrt ...
#
# HOT_SYMS holds "offset name" lines (nm of the binary, libc.a's functions
# only).  Each gets a one-shot breakpoint once the program is loaded; the
# names of those hit are written to HOT_OUT, one per line.  HOT_FOLLOW=child
# follows the first child the runtime forks (the container init, or the
# monitor under the agent profile) instead, until it execs or exits.
import os

import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set detach-on-fork on")
gdb.execute("set follow-fork-mode " + os.environ.get("HOT_FOLLOW", "parent"))
gdb.execute("catch exec")
gdb.execute("starti")

exe = gdb.selected_inferior().progspace.filename
base = None
for line in gdb.execute("info proc mappings", to_string=True).splitlines():
    f = line.split()
    if len(f) >= 5 and f[0].startswith("0x") and f[-1] == exe:
        base = int(f[0], 16) - int(f[3], 16)
        break
if base is None:
    raise gdb.GdbError("libc-trace: no mapping of " + exe)

names = {}
with open(os.environ["HOT_SYMS"]) as syms:
    for line in syms:
        off, name = line.split()
        addr = base + int(off, 16)
        if addr not in names:
            names[addr] = name
            gdb.Breakpoint("*%#x" % addr, internal=True, temporary=True).silent = True

hit = set()


def on_stop(event):
    try:
        pc = int(gdb.parse_and_eval("$pc"))
    except gdb.error:
        return
    if pc in names:
        hit.add(names[pc])


gdb.events.stop.connect(on_stop)
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    inf = gdb.selected_inferior()
    if inf.pid == 0 or inf.progspace.filename != exe:
        break  # exited, or exec'd the container's program
with open(os.environ["HOT_OUT"], "w") as out:
    for name in sorted(hit):
        out.write(name + "\n")
if gdb.selected_inferior().pid != 0:
    gdb.execute("delete")
    gdb.execute("detach")
