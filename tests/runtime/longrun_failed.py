#!/usr/bin/env python3
"""A long-run test whose case fails exits with the count of failed cases, its failure
said, under the sanitizers too: not killed by SIGABRT, which LeakSanitizer's check at
exit (abort_on_error=1, the CI's) made of what the failed case's assertion left
allocated, its report in place of the failure (CI's ASan run of longrun_killed).

  longrun_failed.py TEST_LONGRUN_KILLED TT_LONGRUN_PROG TT_LONGRUN_PROG_STATIC"""
import os
import subprocess
import sys

test, prog, static = sys.argv[1:4]
CASE = 'test_stream_killed_keeps_a_clean_prefix'
# The command that reads the program's file fails: the case reads a running program's
# file and fails (after its child is killed).
env = dict(os.environ, TT_TEST_TOOL='/bin/false', TT_TEST_ONLY=CASE)
env.setdefault('ASAN_OPTIONS', 'detect_leaks=1:abort_on_error=1')
p = subprocess.run([test, prog, static], env=env, capture_output=True, text=True, timeout=240)
if p.returncode != 1 or '[  FAILED  ] ' + CASE not in p.stdout:
    sys.exit('FAIL: %s with a failing case: status %d (1: one case failed), stdout:\n%s\nstderr:\n%s'
             % (os.path.basename(test), p.returncode, p.stdout[-2000:], p.stderr[-3000:]))
print('a failed case: status 1, its failure said')
