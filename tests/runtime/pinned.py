"""A mode of sched_causes_prog whose threads it pins to CPU 0 and whose switches the
checks read: run, or the test skipped (exit 77) where neither can be had here."""
import os
import subprocess
import sys


def run(prog, mode, out):
    """PROG MODE recording into `out`: its run (stdout: the kernel's figures), or exit 77
    where it cannot pin its threads or perf_event_open is refused."""
    p = subprocess.run([prog, mode], env=dict(os.environ, TICKTRACE_OUT=out),
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        if "sched_setaffinity" in p.stderr:
            print("SKIP: cannot pin threads to CPU 0 here: " + p.stderr.strip())
            sys.exit(77)
        sys.exit("%s %s failed (%d): %s" % (prog, mode, p.returncode, p.stderr))
    if "no thread states" in p.stderr:
        print("SKIP: perf_event_open refused here: no switches to check: " + p.stderr.strip())
        sys.exit(77)
    return p
