#!/usr/bin/env python3
"""Whether two .pftrace files of the same raw files hold the same trace, however each
is encoded: a manual check for a change of the Perfetto encoding (issue 33: delta
timestamps, interning, what an event need not say), beside tests/convert/same_output.sh
(which compares the other outputs byte for byte: run it with --skip pftrace).

    same_perfetto.py OLD.pftrace NEW.pftrace [SCHEMA.proto]

Both are decoded with protoc and the project's schema (tools/perfetto_trace.proto by
default) and loaded as trace_processor loads them, by check-perfetto.py's loader:
the same slices (thread, name, start, duration, depth), arguments, arrows, counters,
thread names, thread states and import errors. Exit 0 the same, 1 a difference, 77
no protoc."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no caches in the source tree
sys.path.insert(0, HERE)
check = __import__('check-perfetto')


def load(protoc, schema, path):
    with open(path, 'rb') as f:
        out = subprocess.run([protoc, '--decode=perfetto.protos.Trace', '-I',
                              os.path.dirname(schema), schema], stdin=f, capture_output=True)
    if out.returncode != 0 or out.stderr:
        sys.exit(f'{path}: protoc: {out.stderr.decode()}')
    packets = check.parse_text_format(out.stdout.decode('utf-8')).get('packet', [])
    imp, counters, threads, states = check.load_protobuf(packets)
    slices, arrows = imp.summary()
    return {'slices': slices, 'args': imp.args, 'arrows': arrows, 'counters': sorted(counters),
            'thread names': threads, 'thread states': states, 'errors': imp.errors}


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    schema = sys.argv[3] if len(sys.argv) == 4 else os.path.join(HERE, '..', '..', 'tools',
                                                                  'perfetto_trace.proto')
    protoc = shutil.which('protoc')
    if not protoc:
        print('skip: protoc is not installed (Debian: protobuf-compiler)')
        return 77
    old, new = (load(protoc, schema, p) for p in sys.argv[1:3])
    differ = [what for what in old if old[what] != new[what]]
    for what in differ:
        print(f'FAIL {what} differ')
    if differ:
        return 1
    print(f'same: {sum(old["slices"].values())} slices and instants, {len(old["counters"])} '
          f'counter samples, {sum(old["arrows"].values())} arrows, {len(old["thread names"])} threads')
    return 0


if __name__ == '__main__':
    sys.exit(main())
