#!/usr/bin/env python3
"""tt_profile_* on Windows (profile.exe, under Wine): the program checks its own
samples; its tt_profile_write file, read by the Linux `ticktrace lines`, says which
mechanism sampled, and names the hot loop's buckets by function (the .exe's COFF
symbols) and by file:line (its DWARF), the loop's line holding most samples.

    profile.py WRAPPER EXE sampler-thread|nt-profile|all-threads

Exit 77 where the mechanism needs real Windows (nt-profile under Wine), or without
Wine or the Linux `ticktrace` (as recorder.py finds it).

sampler-thread also runs `profile.exe asleep` (a thread asleep: few samples, its CPU
time still) beside three `profile.exe load`s, Wine programs sampled as it is: the
sampler fed itself there, in CI, with another test beside it."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402


def asleep(wrapper, exe, d):
    loads = [subprocess.Popen([wrapper, exe, "load", "4000"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, cwd=d) for _ in range(3)]
    try:
        print(run([wrapper, exe, "asleep"], cwd=d).stdout, end="")
        for p in loads:
            if p.wait(timeout=120) != 0:
                fail(f"profile.exe load: exit {p.returncode}\n{p.stderr.read()}")
    finally:
        for p in loads:  # (none left behind: a test ended, or one that failed)
            if p.poll() is None:
                p.kill()
                p.wait()


def main():
    clean_on_term()
    wrapper, exe, mechanism = sys.argv[1:4]
    exe = os.path.abspath(exe)
    ticktrace = tool()
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile.c")
    hot_line = next(i for i, text in enumerate(open(source), 1)
                    if "the line where the time goes" in text)
    with tempfile.TemporaryDirectory(prefix="tt-win-profile-") as d:
        out = os.path.join(d, "profile.txt")
        # (in d: each run's trace, ticktrace-PID.ttr, goes with it)
        if mechanism == "sampler-thread":
            asleep(wrapper, exe, d)
        said = run([wrapper, exe, mechanism, out], cwd=d).stdout
        print(said, end="")
        # (all-threads: the kernel's profile on Windows, the sampler thread under Wine)
        mechanism = said.split("profile: sampled by ")[1].split()[0]
        head = open(out).read().splitlines()[:3]
        if head[0] != "ticktrace profile 1" or head[2] != f"sampler {mechanism}":
            fail(f"{out}: its head is {head}")
        p = run([ticktrace, "lines", out])
        lines = p.stdout
        print(lines, end="")
        # (profile.exe is linked with --build-id: the file lacks the id, not the link)
        if "--build-id" in p.stderr or "keeps no build id" not in p.stderr:
            fail(f"lines: the build id said as the link's lack:\n{p.stderr}")
        if f"sampled by {mechanism}" not in lines.splitlines()[0]:
            fail(f"lines does not say the profile was sampled by {mechanism}")
        rows = [r.split() for r in lines.splitlines()[2:]]
        total = sum(int(r[0]) for r in rows)
        in_loop = sum(int(r[0]) for r in rows if r[-1].startswith("win_hot_loop"))
        on_line = sum(int(r[0]) for r in rows if r[3].endswith(f"profile.c:{hot_line}"))
        if not total or in_loop * 10 < total * 9:
            fail(f"win_hot_loop named in {in_loop} of {total} samples")
        if on_line * 2 <= total:
            fail(f"profile.c:{hot_line} (the hot loop's line) holds {on_line} of {total} samples")
        # the address column is the file's: mingw's addr2line finds the same line
        addr2line = shutil.which("x86_64-w64-mingw32-addr2line")
        if addr2line:
            at = next(r[2] for r in rows if r[3].endswith(f"profile.c:{hot_line}"))
            said = run([addr2line, "-e", exe, at]).stdout.strip()
            if not said.endswith(f"profile.c:{hot_line}"):
                fail(f"addr2line -e {exe} {at}: {said}, not profile.c:{hot_line}")
        print(f"{mechanism}: {on_line} of {total} samples on profile.c:{hot_line}")


if __name__ == "__main__":
    main()
