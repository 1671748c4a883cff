#!/usr/bin/env python3
"""A Windows program rebuilt after its run is not taken for the one that ran: PROG.exe
(instrumented.exe, linked without --build-id, so with no CodeView record) runs under
Wine, then another build (OTHER.exe) takes its place; the Linux `ticktrace` must say
the file is not the one the program ran, from the header's stamp the run kept
(format.h's tt_module_info), and name its functions by offset, never after the other
build's. The same run's file with its modules' build ids taken out (as a file written
before the stamp) is named, with a word that nothing could be compared.

    rebuilt.py WRAPPER PROG.exe OTHER.exe

The Linux `ticktrace` as recorder.py finds it; without it, or Wine, exit 77."""
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, fail, run, tool  # noqa: E402

SECTION_MODULES = 3
NAMES = ("main", "middle", "leaf")


def without_build_ids(raw):
    """The raw file with every MODULES entry's build id left out."""
    header_size = struct.unpack_from("<I", raw, 12)[0]
    out, at = bytearray(raw[:header_size]), header_size
    while at + 16 <= len(raw):
        kind, reserved, size = struct.unpack_from("<IIQ", raw, at)
        body = raw[at + 16:at + 16 + size]
        if kind == SECTION_MODULES:
            count, = struct.unpack_from("<Q", body, 0)
            new, pos = bytearray(body[:8]), 8
            for _ in range(count):
                start, end, offset, path_len, id_len = struct.unpack_from("<QQQII", body, pos)
                new += struct.pack("<QQQII", start, end, offset, path_len, 0)
                new += body[pos + 32:pos + 32 + path_len]
                pos += 32 + path_len + id_len
            body = bytes(new)
        out += struct.pack("<IIQ", kind, reserved, len(body)) + body + b"\0" * (-len(body) % 16)
        at += 16 + size + (-size % 16)
    return bytes(out)


def report(ticktrace, ttr):
    p = run([ticktrace, "report", ttr])
    rows = {line.split()[0] for line in p.stdout.splitlines()[2:] if line.split()}
    return rows, p.stderr


def main():
    clean_on_term()
    wrapper, prog, other = sys.argv[1:4]
    ticktrace = tool()
    with tempfile.TemporaryDirectory(prefix="tt-win-rebuilt-") as d:
        exe = os.path.join(d, "prog.exe")
        shutil.copy(prog, exe)
        run([wrapper, exe], env=dict(os.environ, TICKTRACE_OUT="run.ttr"), cwd=d)
        ttr = os.path.join(d, "run.ttr")
        rows, said = report(ticktrace, ttr)
        if not set(NAMES) <= rows or "prog.exe: " in said:
            fail(f"the program that ran: {sorted(rows)}, said:\n{said}")

        stripped = os.path.join(d, "no-ids.ttr")
        with open(ttr, "rb") as f, open(stripped, "wb") as g:
            g.write(without_build_ids(f.read()))
        rows, said = report(ticktrace, stripped)
        if not set(NAMES) <= rows or "prog.exe: the run recorded no build id of it" not in said:
            fail(f"a run that kept no build id: named {sorted(rows)}, said:\n{said}")

        os.unlink(exe)
        shutil.copy(other, exe)
        rows, said = report(ticktrace, ttr)
        if "prog.exe: not the file the program ran" not in said or rows & set(NAMES):
            fail(f"another build in its place: named {sorted(rows)}, said:\n{said}")
        print("a rebuilt .exe said and named by offset; a run without build ids said")


if __name__ == "__main__":
    main()
