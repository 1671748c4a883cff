#!/usr/bin/env python3
"""One SQL query over every shard of `ticktrace convert --split`, with Perfetto's
trace_processor_shell: each shard loaded alone (as the UI loads it), the rows of all
in one CSV table on stdout, each after its shard's name. With --sum K: one row for
each value of the first K columns, the others summed over the shards (counts and
totals of slices add up: the shards hold each slice once, and the threads' states
are cut at their edges).

    query_shards.py [--trace-processor PATH] [--sum K] SQL SHARD...

The calls and total time of every name of a huge run:

    ticktrace convert huge.ttr --split 3000000 -o huge.pftrace
    query_shards.py --sum 1 "select name, count(*) as calls, sum(dur) as total_ns
        from slice group by name" huge.[0-9]*.pftrace

(installed with ticktrace as PREFIX/share/ticktrace/query_shards.py).

trace_processor_shell: --trace-processor, else $TICKTRACE_TRACE_PROCESSOR, else
~/.cache/ticktrace/trace_processor_shell, else the one on PATH. Its CSV quotes
nothing: select hex(name) where names may hold commas or quotes. Exit status: 0,
1 when a shard does not load or the query fails there (said, with the shard), 2 usage."""
import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile


def trace_processor(given):
    for path in (given, os.environ.get('TICKTRACE_TRACE_PROCESSOR'),
                 os.path.expanduser('~/.cache/ticktrace/trace_processor_shell'),
                 shutil.which('trace_processor_shell')):
        if path and os.access(path, os.X_OK):
            return path
    return None


def query(tp, sql_file, shard):
    """The rows of the query on one shard: (header, rows); exits on failure."""
    c = subprocess.run([tp, 'query', '-f', sql_file, shard], capture_output=True, text=True)
    rows = list(csv.reader(io.StringIO(c.stdout)))
    if c.returncode != 0 or not rows:
        sys.exit('query_shards.py: %s: trace_processor_shell failed (status %d): %s'
                 % (shard, c.returncode, c.stderr.strip()[-2000:]))
    return rows[0], rows[1:]


def number(text):
    try:
        return int(text)
    except ValueError:
        return float(text) if text not in ('', '[NULL]') else 0


def main():
    ap = argparse.ArgumentParser(description='one SQL query over the shards of convert --split')
    ap.add_argument('--trace-processor', help='trace_processor_shell to use')
    ap.add_argument('--sum', type=int, default=None, metavar='K',
                    help='one row per value of the first K columns, the others summed')
    ap.add_argument('sql')
    ap.add_argument('shards', nargs='+')
    args = ap.parse_args()
    tp = trace_processor(args.trace_processor)
    if not tp:
        sys.exit('query_shards.py: no trace_processor_shell (--trace-processor PATH, '
                 '$TICKTRACE_TRACE_PROCESSOR, or one on PATH)')
    out = csv.writer(sys.stdout, lineterminator='\n')
    totals, header = {}, None
    with tempfile.NamedTemporaryFile('w', suffix='.sql') as sql_file:
        sql_file.write(args.sql.rstrip().rstrip(';') + ';\n')
        sql_file.flush()
        for shard in args.shards:
            header, rows = query(tp, sql_file.name, shard)
            if args.sum is None:
                if shard == args.shards[0]:
                    out.writerow(['shard'] + header)
                out.writerows([shard] + row for row in rows)
                continue
            for row in rows:
                key = tuple(row[:args.sum])
                sums = totals.setdefault(key, [0] * (len(row) - args.sum))
                for i, value in enumerate(row[args.sum:]):
                    sums[i] += number(value)
    if args.sum is not None:
        out.writerow(header)
        out.writerows(list(key) + sums for key, sums in sorted(totals.items()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
