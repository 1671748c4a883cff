#!/usr/bin/env python3
"""ticktrace.exe under Wine against the Linux `ticktrace`, on the same files: a Windows
run of markup (recorder.exe: scopes, counters, flows, thread names), a Windows run of
-finstrument-functions (instrumented.exe, its functions named from its COFF symbols),
and a Linux run of -finstrument-functions (the Linux build's
ticktrace-demo-instrumented, whose ELF symbols ticktrace.exe does not read: it names
them by offset and says so).

- convert to JSON: the same events (kind, time, duration, process, thread, arguments),
  the same names where ticktrace.exe names them (all of a Windows run's); a run with
  no functions byte for byte, and to .pftrace (compressed too) byte for byte;
- info, report, spikes: the same text (names as above);
- a damaged file: the same error (file, offset, problem), exit 1, no output file and no
  temporary file left; an existing output refused without --force, replaced with it;
- record and open: not in ticktrace.exe, said, exit 2.

- a C++ run's functions: named with their parameters once ("ns::twice(int)"), both tools;

    tool.py WRAPPER TICKTRACE.EXE RECORDER.EXE INSTRUMENTED.EXE LIBTICKTRACE.DLL INSTRUMENTED_CPP.EXE

The Linux `ticktrace` as recorder.py finds it ($TT_TEST_TOOL), and its build's
bench/ticktrace-demo-instrumented; without them, or Wine, exit 77."""
import json
import os
import re
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from recorder import clean_on_term, run, tool, wine_path  # noqa: E402
import subprocess  # noqa: E402


def fail(message):
    print(f"tool: {message}", file=sys.stderr)
    sys.exit(1)

# A function ticktrace.exe could not name: PROGRAM+0xOFFSET (its ELF file is not read).
BY_OFFSET = re.compile(r"[^ ]+\+0x[0-9a-f]+(\(\))?$")


def events(path):
    e = json.load(open(path))
    return e["traceEvents"] if isinstance(e, dict) else e


def same_name(win, lin, what):
    """ticktrace.exe's name is Linux's, or (a Linux run's function) one by offset."""
    if win != lin and not BY_OFFSET.match(win):
        fail(f"{what}: ticktrace.exe names {win!r} where ticktrace names {lin!r}")
    return win == lin


def compare_json(win_json, lin_json, what, all_named):
    w, lin = events(win_json), events(lin_json)
    if len(w) != len(lin):
        fail(f"{what}: {len(w)} JSON events from ticktrace.exe, {len(lin)} from ticktrace")
    named = 0
    for a, b in zip(w, lin):
        a, b = dict(a), dict(b)
        wn, ln = a.pop("name", ""), b.pop("name", "")
        named += same_name(wn, ln, what)
        # (a function's file:line: from DWARF, which ticktrace.exe does not read)
        for side in (a, b):
            for k in ("file", "line"):
                side.get("args", {}).pop(k, None)
        if a != b:
            fail(f"{what}: ticktrace.exe's event {a} is ticktrace's {b}")
    if all_named and named != len(w):
        fail(f"{what}: {len(w) - named} of {len(w)} events named otherwise by ticktrace.exe")
    return named


def compare_text(win_out, lin_out, what):
    """The same lines, but for functions' file:line (DWARF, which ticktrace.exe does not
    read)."""
    def tokens(line):
        # ("~": a median near what recording a call costs, which each command measures
        # as it runs: near it either way)
        return [x for x in line.split() if x != "~"]
    w, lin = ([x for x in out.splitlines() if "measured now" not in x] for out in (win_out, lin_out))
    if len(w) != len(lin):
        fail(f"{what}: {len(w)} lines from ticktrace.exe, {len(lin)} from ticktrace:\n{win_out}\n{lin_out}")
    for a, b in zip(w, lin):
        wa, lb = tokens(a), tokens(b)
        if len(lb) == len(wa) + 1 and re.match(r".+:\d+$", lb[-1]):
            lb.pop()
        if wa != lb:
            fail(f"{what}: ticktrace.exe printed\n  {a}\nwhere ticktrace printed\n  {b}")


def damaged_record(linux, d, data):
    """A copy of the run with one record's kind made unknown (238), where the Linux
    ticktrace finds it as it decodes: a record of 16 bytes whose last (its kind) is a
    known one, taken from the end of the file back."""
    for at in range(len(data) - 16, len(data) // 2, -8):
        if data[at + 15] not in (1, 2):  # (a scope's begin or end)
            continue
        damaged = bytearray(data)
        damaged[at + 15] = 238
        open(os.path.join(d, "damaged.ttr"), "wb").write(damaged)
        p = run_status([linux, "convert", "damaged.ttr", "-o", "-"], cwd=d)
        if p.returncode == 1 and "unknown record kind 238" in p.stderr:
            return "damaged.ttr"
    fail("no record found to damage in markup.ttr")


def run_status(cmd, **kw):
    # (errors="replace": a path misread is said, not a traceback)
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=300, **kw)
    if p.returncode == 77:
        print(p.stderr, end="", file=sys.stderr)
        sys.exit(77)
    return p


def main():
    clean_on_term()
    wrapper, exe, recorder, instrumented, dll, instrumented_cpp = (os.path.abspath(a) for a in sys.argv[1:7])
    linux = tool()
    bench = os.path.join(os.path.dirname(linux), "..", "bench")
    linux_demos = [os.path.abspath(os.path.join(bench, n)) for n in ("ticktrace-demo", "ticktrace-demo-instrumented")]
    for demo in linux_demos:
        if not os.access(demo, os.X_OK):
            print(f"tool: no Linux program at {demo} (the Linux build's bench): not run", file=sys.stderr)
            sys.exit(77)
    os.environ["WINEPATH"] = wine_path(os.path.dirname(dll))
    with tempfile.TemporaryDirectory(prefix="tt-win-tool-") as d:
        def win(*args, **kw):
            return run_status([wrapper, exe, *args], cwd=d, **kw)

        def lin(*args):
            return run_status([linux, *args], cwd=d)

        env = dict(os.environ, TICKTRACE_OUT="markup.ttr")
        run([wrapper, recorder, "--at-exit", "4"], env=env, cwd=d)
        env["TICKTRACE_OUT"] = "functions.ttr"
        run([wrapper, instrumented], env=env, cwd=d)
        for ttr, demo in zip(("linux.ttr", "elf.ttr"), linux_demos):
            # (the demo writes demo.ttr itself, and its exit no trace: TICKTRACE_OUT=/dev/null)
            env.pop("TICKTRACE_OUT", None)
            run([demo], env=env, cwd=d)
            if os.path.exists(os.path.join(d, "demo.ttr")):
                os.rename(os.path.join(d, "demo.ttr"), os.path.join(d, ttr))
        # each run: the system it ran on, and whether its functions' names are in ELF files
        runs = {"markup.ttr": ("windows", False), "functions.ttr": ("windows", False),
                "linux.ttr": ("linux", False), "elf.ttr": ("linux", True)}
        for ttr, (system, elf) in runs.items():
            if not os.path.exists(os.path.join(d, ttr)):
                fail(f"the {system} run wrote no {ttr}")
            stem = ttr[:-4]
            for side, cmd in (("w", win), ("l", lin)):
                for out in (f"{side}-{stem}.json", f"{side}-{stem}.pftrace"):
                    p = cmd("convert", ttr, "-o", out)
                    if p.returncode != 0:
                        fail(f"{side} convert {ttr} -o {out}: exit {p.returncode}\n{p.stderr}")
                    if side == "w" and elf and "ticktrace.exe does not read" not in p.stderr:
                        fail(f"ticktrace.exe named a Linux run's functions by offset without a word:\n{p.stderr}")
            named = compare_json(os.path.join(d, f"w-{stem}.json"), os.path.join(d, f"l-{stem}.json"),
                                 ttr, not elf)
            if ttr == "functions.ttr" and named == 0:
                fail(f"{ttr}: no event named")
            if elf:
                continue  # (its profile pools what has one name: not the same without names)
            if ttr in ("markup.ttr", "linux.ttr"):
                for ext in ("json", "pftrace"):
                    if open(os.path.join(d, f"w-{stem}.{ext}"), "rb").read() != \
                            open(os.path.join(d, f"l-{stem}.{ext}"), "rb").read():
                        fail(f"{ttr}: ticktrace.exe's .{ext} is not ticktrace's")
                # to standard output (a pipe): the same bytes, none translated
                piped = subprocess.run([wrapper, exe, "convert", ttr, "-F", "perfetto", "-o", "-"], cwd=d,
                                       capture_output=True, timeout=300).stdout
                if piped != open(os.path.join(d, f"l-{stem}.pftrace"), "rb").read():
                    fail(f"{ttr}: ticktrace.exe's .pftrace on standard output is not ticktrace's "
                         f"({len(piped)} bytes)")
                for side, cmd in (("w", win), ("l", lin)):
                    cmd("convert", ttr, "--compress", "-o", f"{side}-{stem}-packed.pftrace")
                if open(os.path.join(d, f"w-{stem}-packed.pftrace"), "rb").read() != \
                        open(os.path.join(d, f"l-{stem}-packed.pftrace"), "rb").read():
                    fail(f"{ttr}: ticktrace.exe's compressed .pftrace (libdeflate) is not ticktrace's")
            for what in (["info"], ["report"], ["spikes", "--threshold", "1us"]):
                w, lo = win(what[0], ttr, *what[1:]), lin(what[0], ttr, *what[1:])
                if w.returncode != 0 or lo.returncode != 0:
                    fail(f"{what[0]} {ttr}: exit {w.returncode} (ticktrace.exe), {lo.returncode}\n{w.stderr}{lo.stderr}")
                compare_text(w.stdout, lo.stdout, f"{what[0]} {ttr}")

        # Paths beyond the ANSI code page (the command line taken as UTF-16, files opened
        # by their UTF-8 name): a file in one, converted beside it, and a program's own
        # .exe named from a folder so named (its functions named from its symbols).
        odd = os.path.join(d, "dir ü 日本")
        os.mkdir(odd)
        os.link(os.path.join(d, "markup.ttr"), os.path.join(odd, "rün 日本.ttr"))
        w = win("convert", "dir ü 日本/rün 日本.ttr", "-o", "dir ü 日本/ü.json")
        lin("convert", "dir ü 日本/rün 日本.ttr", "-o", "dir ü 日本/l.json")
        if w.returncode != 0 or open(os.path.join(odd, "ü.json"), "rb").read() != \
                open(os.path.join(odd, "l.json"), "rb").read():
            fail(f"a path in UTF-8: exit {w.returncode}\n{w.stderr}")
        program = os.path.join(odd, "日本.exe")
        os.link(instrumented, program)
        run([wrapper, program], env=dict(env, TICKTRACE_OUT="日本.ttr"), cwd=odd)
        w, lo = win("info", "dir ü 日本/日本.ttr"), lin("info", "dir ü 日本/日本.ttr")
        if w.returncode != 0 or "+0x" in w.stdout:
            fail(f"a program in a UTF-8 folder: exit {w.returncode}, not named:\n{w.stdout}{w.stderr}")
        compare_text(w.stdout, lo.stdout, "info 日本.ttr")
        # Folders so named read too (each was opened by its ANSI name: diff said "cannot
        # read the directory", a killed command's temporary stayed): diff's runs, and
        # the temporary file a killed convert left beside its output.
        w, lo = win("diff", "dir ü 日本", "dir ü 日本/"), lin("diff", "dir ü 日本", "dir ü 日本/")
        if w.returncode != 0:
            fail(f"diff of a folder in UTF-8: exit {w.returncode}\n{w.stderr}")
        compare_text(w.stdout, lo.stdout, "diff of a folder in UTF-8")
        stale = os.path.join(odd, ".ü.json.999999.AbC123")
        open(stale, "w").close()
        w = win("convert", "dir ü 日本/rün 日本.ttr", "-o", "dir ü 日本/ü.json", "--force")
        if w.returncode != 0 or os.path.exists(stale):
            fail(f"a killed convert's temporary in a UTF-8 folder: exit {w.returncode}, "
                 f"{'left' if os.path.exists(stale) else 'removed'}\n{w.stderr}")

        # --split to a path in Windows' separators: the shards in its folder, numbered
        # before the name's extension (none, and none warned of: the folder's dot is not
        # one), a killed split's temporary there removed and an earlier split's shard
        # (--force), as Linux's with '/' (before, ticktrace.exe took ".y\\out" for the
        # extension, "sp\\x.0001.y\\out" for a shard, and looked for an earlier split in
        # the current folder).
        for folder in ("sp", "lsp"):
            os.makedirs(os.path.join(d, folder, "x.y"))
            for name in ("out.0099", ".out.0001.999999.AbC123"):
                open(os.path.join(d, folder, "x.y", name), "w").close()
        w = win("convert", "linux.ttr", "--split", "5000", "--force", "-o", "sp\\x.y\\out")
        lo = lin("convert", "linux.ttr", "--split", "5000", "--force", "-o", "lsp/x.y/out")
        shards = [sorted(os.listdir(os.path.join(d, folder, "x.y"))) for folder in ("sp", "lsp")]
        if w.returncode != 0 or lo.returncode != 0 or shards[0] != shards[1] or len(shards[1]) < 2 or \
                any(not re.fullmatch(r"out\.\d{4}", n) or n == "out.0099" for n in shards[1]) or \
                "removed 1 shard of an earlier split" not in w.stderr or "written as JSON" in w.stderr:
            fail(f"--split to sp\\x.y\\out: exit {w.returncode} ({lo.returncode} on Linux), "
                 f"{shards[0]} ({shards[1]} on Linux)\n{w.stderr}{lo.stderr}")
        for name in shards[1]:
            if open(os.path.join(d, "sp", "x.y", name), "rb").read() != \
                    open(os.path.join(d, "lsp", "x.y", name), "rb").read():
                fail(f"--split to sp\\x.y\\out: ticktrace.exe's {name} is not ticktrace's")

        # A program moved after its run (its Z: path gone): named from --debug-dir by
        # both tools, which looked only where the run said it was.
        os.mkdir(os.path.join(d, "built"))
        os.link(instrumented, os.path.join(d, "built", "moved.exe"))
        run([wrapper, os.path.join(d, "built", "moved.exe")], env=dict(env, TICKTRACE_OUT="moved.ttr"), cwd=d)
        os.rename(os.path.join(d, "built"), os.path.join(d, "shipped"))
        for side, info in (("ticktrace.exe", win), ("ticktrace", lin)):
            p = info("info", "moved.ttr", "--debug-dir", "shipped")
            if p.returncode != 0 or "+0x" in p.stdout or "middle" not in p.stdout:
                fail(f"{side}: a moved program not named from --debug-dir: exit {p.returncode}\n{p.stdout}{p.stderr}")

        # Bad input: the same error, exit 1, nothing written.
        data = open(os.path.join(d, "markup.ttr"), "rb").read()
        open(os.path.join(d, "cut.ttr"), "wb").write(data[:len(data) // 2])
        before = set(os.listdir(d))
        w, lo = win("convert", "cut.ttr", "-o", "cut-w.json"), lin("convert", "cut.ttr", "-o", "cut-l.json")
        if w.returncode != 1 or lo.returncode != 1:
            fail(f"a cut file: exit {w.returncode} (ticktrace.exe), {lo.returncode}, not 1")
        errors = [line for line in w.stderr.splitlines() if "error" in line]
        if not errors or "cut.ttr: offset" not in errors[0] or errors != \
                [line for line in lo.stderr.splitlines() if "error" in line]:
            fail(f"a cut file: ticktrace.exe said\n{w.stderr}where ticktrace said\n{lo.stderr}")
        if set(os.listdir(d)) != before:
            fail(f"a cut file left {sorted(set(os.listdir(d)) - before)}")

        # A record damaged (an unknown kind), found as the output is being written: the
        # same error at its offset, and the temporary output removed.
        bad = damaged_record(linux, d, data)
        before = set(os.listdir(d))
        # (outputs of their own: each command removes a temporary file of the output it
        # writes whose process is gone)
        w, lo = win("convert", bad, "-o", "bad-w.pftrace"), lin("convert", bad, "-o", "bad-l.pftrace")
        errors = [line for line in w.stderr.splitlines() if "error" in line]
        if w.returncode != 1 or not errors or errors != [line for line in lo.stderr.splitlines() if "error" in line]:
            fail(f"a damaged record: exit {w.returncode}; ticktrace.exe said\n{w.stderr}where ticktrace said\n{lo.stderr}")
        if set(os.listdir(d)) != before:
            fail(f"a damaged record left {sorted(set(os.listdir(d)) - before)}")

        # An existing output: kept without --force, replaced with it.
        open(os.path.join(d, "kept.json"), "w").write("mine\n")
        w = win("convert", "markup.ttr", "-o", "kept.json")
        if w.returncode != 1 or "exists (use --force" not in w.stderr or \
                open(os.path.join(d, "kept.json")).read() != "mine\n":
            fail(f"an existing output: exit {w.returncode}, {w.stderr!r}, now {open(os.path.join(d, 'kept.json')).read()[:40]!r}")
        w = win("convert", "markup.ttr", "-o", "kept.json", "--force")
        if w.returncode != 0 or open(os.path.join(d, "kept.json"), "rb").read() != \
                open(os.path.join(d, "w-markup.json"), "rb").read():
            fail(f"--force: exit {w.returncode}, the output not replaced by the trace\n{w.stderr}")
        leftover = [n for n in os.listdir(d) if n.startswith(".")]
        if leftover:
            fail(f"temporary files left: {leftover}")

        # A C++ run: its names' parameter lists printed once, by both tools.
        run([wrapper, instrumented_cpp], env=dict(env, TICKTRACE_OUT="cpp.ttr"), cwd=d)
        w, lo = win("info", "cpp.ttr"), lin("info", "cpp.ttr")
        for out in (w.stdout, lo.stdout):
            if "ns::twice(int) " not in out or "(int)()" in out:
                fail(f"a C++ run's names, not 'ns::twice(int)' once:\n{out}")
        compare_text(w.stdout, lo.stdout, "info cpp.ttr")

        # A path beyond MAX_PATH (260): written and read as on Linux ("\\?\" before it).
        deep = os.path.join(*["d" * 100] * 3)
        os.makedirs(os.path.join(d, deep))
        w = win("convert", "markup.ttr", "-o", os.path.join(d, deep, "w.json"))
        lin("convert", "markup.ttr", "-o", os.path.join(deep, "l.json"))
        if w.returncode != 0 or open(os.path.join(d, deep, "w.json"), "rb").read() != \
                open(os.path.join(d, deep, "l.json"), "rb").read():
            fail(f"a path beyond MAX_PATH: exit {w.returncode}\n{w.stderr}")

        # Directories: one given as a trace is "not a regular file", and "db/" is the
        # directory db (diff's runs), as on Linux (Windows' open said "Permission denied",
        # its stat failed on the slash).
        for side in ("da", "db"):
            os.mkdir(os.path.join(d, side))
            os.link(os.path.join(d, "markup.ttr"), os.path.join(d, side, "markup.ttr"))
        for what in (["convert", "da", "-o", "da.json"], ["report", "da"], ["diff", "da", "db/"]):
            w, lo = win(*what), lin(*what)
            if w.returncode != lo.returncode or w.stdout != lo.stdout or \
                    [x for x in w.stderr.splitlines() if "error" in x] != \
                    [x for x in lo.stderr.splitlines() if "error" in x]:
                fail(f"{' '.join(what)}: exit {w.returncode}, {lo.returncode} on Linux:\n{w.stdout}{w.stderr}\n{lo.stdout}{lo.stderr}")

        # Ctrl+C (SIGINT, which Wine makes one): exit 130, as on Linux, not 0. The
        # command's first bytes read (it is running), then the pipe left full.
        p = subprocess.Popen([wrapper, exe, "convert", "linux.ttr", "-o", "-"], cwd=d,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdout.read(4096)
        p.send_signal(signal.SIGINT)
        if p.wait(timeout=60) != 130:
            fail(f"Ctrl+C: exit {p.returncode}, not 130")
        p.stdout.close()

        # A pipe its reader closed (`ticktrace.exe info x.ttr | head`): the command ends
        # there, nothing said, exit 141, as Linux's at SIGPIPE (Windows' C runtime said
        # "Invalid argument", exit 1). Closed while it writes, and before it starts: each
        # way it writes (its stream, standard output, a text output).
        p = subprocess.Popen([wrapper, exe, "convert", "linux.ttr", "-o", "-"], cwd=d,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.read(100)
        p.stdout.close()
        # (what the input itself warns of, such as switches a loaded machine lost, aside)
        said = "".join(line for line in p.stderr.read().decode(errors="replace").splitlines(True)
                       if not line.startswith("ticktrace: warning: linux.ttr: "))
        if p.wait(timeout=60) != 141 or said:
            fail(f"a pipe closed while convert wrote: exit {p.returncode}, {said!r}")
        for what in (["info", "markup.ttr"], ["report", "markup.ttr"], ["convert", "markup.ttr", "-o", "-"]):
            reader, writer = os.pipe()
            os.close(reader)
            p = subprocess.run([wrapper, exe, *what], cwd=d, stdout=writer, stderr=subprocess.PIPE,
                               text=True, errors="replace", timeout=300)
            os.close(writer)
            if p.returncode != 141 or p.stderr:
                fail(f"{' '.join(what)} into a closed pipe: exit {p.returncode}, {p.stderr!r}")

        # A count's value refused as Linux refuses it (Windows' long is 32 bits: "-3" was
        # 2^32 - 3 and taken).
        for depth in ("-3", "4294967297", "18446744073709551615"):
            w = win("spikes", "markup.ttr", "--threshold", "1ns", "--depth", depth)
            if w.returncode != 2 or "--depth is a number of scopes, 1 or more" not in w.stderr:
                fail(f"--depth {depth}: exit {w.returncode}, {w.stderr!r}")

        # Option errors said as glibc's getopt says them (mingw's named the .exe's path).
        for what in (["flame", "markup.ttr", "--folded"], ["spikes", "markup.ttr", "--threshold"],
                     ["info", "-z", "markup.ttr"], ["report", "markup.ttr", "--json=3"]):
            w, lo = win(*what), lin(*what)
            if w.returncode != 2 or w.stderr.splitlines()[:1] != lo.stderr.splitlines()[:1]:
                fail(f"{' '.join(what)}: exit {w.returncode}, ticktrace.exe said\n{w.stderr}where ticktrace said\n{lo.stderr}")
        # --help: the commands that are Linux's alone said so.
        w = win("--help")
        if [x.split()[0] for x in w.stdout.splitlines() if "(Linux only)" in x] != ["open", "record"]:
            fail(f"--help names not open and record as Linux's alone:\n{w.stdout}")

        for cmd in ("record", "open"):
            w = win(cmd, "markup.ttr")
            if w.returncode != 2 or f"ticktrace {cmd}: not in ticktrace.exe" not in w.stderr:
                fail(f"{cmd}: exit {w.returncode}, {w.stderr!r}")


if __name__ == "__main__":
    main()
