#!/usr/bin/env python3
"""Every TICKTRACE_* variable that the code reads is described in the ENVIRONMENT
section of an installed man page, and every one described there is read.

  check_environment.py SOURCE_ROOT PAGE.roff...

The code is what src/, tools/ and include/ pass to getenv by name, or by the name
src/common/record_protocol.h gives it (TT_ENV_OUT); a variable is
described when it is a term (a line of its own) of a page's ENVIRONMENT section."""
import pathlib
import re
import sys

READ = re.compile(r'\b(?:secure_)?getenv\s*\(\s*(?:"(TICKTRACE\w*)"|(TT_ENV_\w+))')
# record's protocol names its variables once (TT_ENV_NAME "TICKTRACE_...")
PROTOCOL = pathlib.Path('src/common/record_protocol.h')
DEFINE = re.compile(r'^#define\s+(TT_ENV_\w+)\s+"(\w+)"', re.M)
SOURCES = ('.c', '.h', '.cc', '.cpp', '.asm')


def read_by_code(root):
    macros = dict(DEFINE.findall((root / PROTOCOL).read_text(encoding='utf-8')))
    found = {}
    for folder in ('src', 'tools', 'include'):
        for path in sorted((root / folder).rglob('*')):
            if path.suffix in SOURCES and path.is_file():
                for literal, macro in READ.findall(path.read_text(encoding='utf-8', errors='replace')):
                    name = literal or macros.get(macro, '')
                    if name.startswith('TICKTRACE'):
                        found.setdefault(name, path.relative_to(root))
    return found


def described(page):
    """The terms of the page's ENVIRONMENT section, roff's font changes taken out."""
    text = re.sub(r'\\f[BIRP]|\\&', '', pathlib.Path(page).read_text(encoding='utf-8'))
    section = re.search(r'^\.SH "?ENVIRONMENT"?\n(.*?)(?=^\.SH |\Z)', text, re.M | re.S)
    if not section:
        return set()
    return {m.group(1) for m in re.finditer(r'^(TICKTRACE\w*)\s*$', section.group(1), re.M)}


def main():
    root, pages = pathlib.Path(sys.argv[1]), sys.argv[2:]
    code = read_by_code(root)
    if not code:
        sys.exit(f'man_environment: no getenv("TICKTRACE...") found under {root}: the check '
                 'reads nothing')
    docs = {}
    for page in pages:
        for name in described(page):
            docs.setdefault(name, pathlib.Path(page).name)
    missing = sorted(set(code) - set(docs))
    stale = sorted(set(docs) - set(code))
    for name in missing:
        print(f'man_environment: {name} (read in {code[name]}) is in no ENVIRONMENT section '
              f'of {", ".join(pathlib.Path(p).name for p in pages)}', file=sys.stderr)
    for name in stale:
        print(f'man_environment: {docs[name]} describes {name}, which no code reads',
              file=sys.stderr)
    if missing or stale:
        sys.exit(1)
    print(f'man_environment: {len(code)} variables, each described: {" ".join(sorted(code))}')


if __name__ == '__main__':
    main()
