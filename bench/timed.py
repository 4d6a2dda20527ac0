"""timed.py - the wall time of one command, for bench/sandbox.sh and bench/subagents.sh.

The wait blocks in waitpid.  subprocess.run(timeout=...) would poll it instead, sleeping
0.5, 1, 2, 4, 8 ms ... between looks, so that every time came out as 0.5, 1.5, 3.5, 7.5 or
15.5 ms and a little (a run of 7.6 ms read 15.6).  A hang is ended by an alarm instead.
"""
import signal
import subprocess
import time

_child = None


def _on_alarm(sig, frame):
    if _child is not None:
        _child.kill()


signal.signal(signal.SIGALRM, _on_alarm)


def timed(argv, limit=60):
    """Run argv (no stdio); return (milliseconds, exit status)."""
    global _child
    signal.alarm(limit)
    t = time.perf_counter()
    _child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    rc = _child.wait()
    dt = (time.perf_counter() - t) * 1000
    signal.alarm(0)
    _child = None
    return dt, rc
