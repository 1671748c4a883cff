#!/usr/bin/env python3
"""The prefix installs install_prefix.sh and install_record.sh take, built once for the
tree as it is and shared (each built its own before: the library compiled twice).

  prefix_fixture.py BUILD_ROOT SOURCE_ROOT

prints the directory that holds them, each installed with --prefix as a new user does:
  lib/   the library alone (-Dtools=false -Dbench=false -Dtests=false): meson setup from
         nothing, ninja, meson install;
  full/  with the tools: the same build directory configured again (-Dtools=true,
         --prefix=full), which compiles the tools and the detour library and not the
         library again, then installed; the build directory removed after, so nothing
         installed can lean on it.
They are built again when a file the build read (meson's build files, every target's
sources and the headers ninja saw them include, the files installed as they are) or
the compiler or meson changed: inputs.json holds each one's hash, written last. Tests
run in parallel: the first to come builds while the others wait on a lock. A build
that fails is said, its logs on stderr, and leaves nothing; the next test tries again."""
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys

build_root, source_root = (os.path.realpath(p) for p in sys.argv[1:3])
fixture = os.path.join(build_root, 'tests', 'install', 'prefixes')
inputs_file = os.path.join(fixture, 'inputs.json')
# The environment of a sanitizer build or of a test is not a user's build's.
env = {k: v for k, v in os.environ.items()
       if k not in ('CFLAGS', 'LDFLAGS', 'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LD_LIBRARY_PATH',
                    'LD_PRELOAD', 'TICKTRACE_DETOUR_LIB', 'TICKTRACE_OUT')}


def run(args, log):
    with open(os.path.join(fixture, log), 'a') as out:
        if subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, env=env).returncode == 0:
            return
    sys.stderr.write(open(os.path.join(fixture, log)).read())
    sys.exit('prefix_fixture.py: %s failed (log above)' % ' '.join(args[:2]))


def tools():
    """What else the build's result hangs on: meson's and the compiler's versions."""
    cc = env.get('CC', 'cc')
    out = subprocess.run(cc.split() + ['--version'], capture_output=True, text=True, env=env).stdout
    meson = subprocess.run(['meson', '--version'], capture_output=True, text=True).stdout
    return {'CC': cc, 'CC --version': out.split('\n')[0], 'meson': meson.strip()}


def digest(path):
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def inputs_of(build):
    """The source tree's files BUILD read, by meson's and ninja's account."""
    def intro(what):
        return json.loads(subprocess.run(['meson', 'introspect', build, what], check=True,
                                         capture_output=True, text=True).stdout)
    def ninja(*tool):
        return subprocess.run(['ninja', '-C', build, '-t'] + list(tool), check=True,
                              capture_output=True, text=True).stdout.splitlines()
    files = set(intro('--buildsystem-files')) | set(intro('--installed'))
    files.update(ninja('inputs', 'all'))  # sources, scripts and their files
    files.update(line.strip() for line in ninja('deps') if line.startswith(' '))  # headers
    files = {os.path.normpath(os.path.join(build, f)) for f in files}
    return sorted(f for f in files if f.startswith(source_root + os.sep)
                  and not f.startswith(build_root + os.sep))


def current():
    try:
        saved = json.load(open(inputs_file))
    except (OSError, ValueError):
        return False
    return saved['tools'] == tools() and all(digest(f) == h for f, h in saved['files'].items())


def build():
    shutil.rmtree(fixture, ignore_errors=True)
    os.makedirs(fixture)
    try:
        build_in()
    except BaseException:  # failed, or killed (SIGTERM from meson test's timeout)
        shutil.rmtree(fixture, ignore_errors=True)
        raise


def killed(signum, frame):
    sys.exit('prefix_fixture.py: killed by signal %d' % signum)


def build_in():
    b = os.path.join(fixture, 'build')
    run(['meson', 'setup', b, source_root, '--prefix=' + os.path.join(fixture, 'lib'),
         '-Dtools=false', '-Dbench=false', '-Dtests=false'], 'setup.log')
    run(['ninja', '-C', b], 'build.log')
    run(['meson', 'install', '-C', b, '--quiet'], 'install.log')
    run(['meson', 'configure', b, '--prefix=' + os.path.join(fixture, 'full'), '-Dtools=true'],
        'setup.log')
    run(['ninja', '-C', b], 'build.log')
    run(['meson', 'install', '-C', b, '--quiet'], 'install.log')
    files = {f: digest(f) for f in inputs_of(b)}
    shutil.rmtree(b)
    with open(inputs_file + '.new', 'w') as f:
        json.dump({'tools': tools(), 'files': files}, f, indent=0)
    os.rename(inputs_file + '.new', inputs_file)


for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, killed)
os.makedirs(os.path.dirname(fixture), exist_ok=True)
with open(fixture + '.lock', 'w') as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not current():
        build()
print(fixture)
