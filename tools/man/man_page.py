#!/usr/bin/env python3
"""Writes ticktrace's man pages as scdoc source (scdoc turns them into roff).

  man_page.py cli PROSE TICKTRACE            ticktrace(1), from the command's own --help
  man_page.py api PROSE HEADER [HEADER ...]  ticktrace(3), from the public headers' comments
  man_page.py format PROSE HEADER            ticktrace-format(5), from the raw format's header

What can be is taken from what the build already holds, so the pages cannot drift
from the command or the headers: each subcommand's --help; a comment directly above a
public macro, function, struct or enum documents it; the top comment of each header
is its section's introduction; the format header is shown whole. PROSE (scdoc, in
this folder) holds what they cannot say: its `# SECTION`s follow the generated ones,
and for ticktrace(1) its `# COMMANDS` holds a `## ticktrace NAME` of prose for each
subcommand, placed under that subcommand's --help."""
import re
import subprocess
import sys


def escape(text):
    """Prose for scdoc: its markup characters taken literally."""
    return re.sub(r'([\\*_`])', r'\\\1', text)


def literal(text):
    """Text for a scdoc literal block: scdoc reads a backslash there as an escape too."""
    return text.replace('\\', '\\\\')


def paragraphs(lines):
    """Comment lines to scdoc: prose joined into paragraphs, indented lines (code
    examples) as literal blocks."""
    out, code = [], False
    for line in lines:
        is_code = line.startswith('  ') or (code and line.strip() and line.startswith(' '))
        if is_code != code:
            out.append('```' if is_code else '```\n')
            code = is_code
        if code:
            out.append(line)
        elif not line:
            out.append('')
        elif out and out[-1] and not out[-1].startswith('```'):
            out[-1] += ' ' + escape(line)  # one line a paragraph: no line starts a list
        else:
            out.append(re.sub(r'^([-+#])', r'\\\1', escape(line)))
    if code:
        out.append('```')
    return '\n'.join(out).strip() + '\n'


def prose_sections(path):
    """A prose file's top-level sections, in order: [(title, text)]."""
    sections = []
    for line in open(path, encoding='utf-8').read().split('\n'):
        m = re.match(r'^# (.+)$', line)
        if m:
            sections.append((m.group(1), []))
        elif sections:
            sections[-1][1].append(line)
        elif line.strip():
            sys.exit(f'{path}: text before the first "# SECTION": {line}')
    return [(title, '\n'.join(lines).strip() + '\n') for title, lines in sections]


def command_prose(text, path, commands):
    """`## ticktrace NAME` parts of a COMMANDS section: {NAME: text}; a NAME that the
    command does not have is an error, so that the prose cannot outlive a command."""
    parts = {}
    for m in re.finditer(r'^## ticktrace ([a-z]+)\n(.*?)(?=^## |\Z)', text, re.M | re.S):
        if m.group(1) not in commands:
            sys.exit(f'{path}: "## ticktrace {m.group(1)}": ticktrace has no such command')
        parts[m.group(1)] = m.group(2).strip() + '\n'
    return parts


def page_end(sections):
    """The prose sections after the generated ones."""
    page = []
    for title, text in sections:
        page += [f'# {title}', '', text]
    return page


def cli(prose, tool):
    def run(*args):
        return subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout

    usage = run('help')
    commands = re.findall(r'^  ([a-z]+)  +(.*)$', usage, re.M)
    version = run('--version').split()[-1]
    page = [f'ticktrace(1) "ticktrace {version}"', '', '# NAME', '',
            'ticktrace - convert, inspect and report on ticktrace recordings', '',
            '# SYNOPSIS', '', '*ticktrace* _command_ [_options_] [_files_]', '',
            '*ticktrace* --version', '', '# DESCRIPTION', '',
            'A program linked with libticktrace (see *ticktrace*(3)) writes its events to a '
            'raw file (.ttr) at exit. *ticktrace* turns raw files into traces that Perfetto '
            '(https://ui.perfetto.dev) and chrome://tracing open, and into reports.', '',
            '# COMMANDS', '']
    sections = prose_sections(prose)
    intro = [text for title, text in sections if title == 'COMMANDS']
    rest = [(title, text) for title, text in sections if title != 'COMMANDS']
    details = command_prose(intro[0] if intro else '', prose, [name for name, _ in commands])
    for name, what in commands:
        if name == 'help':
            continue
        page += [f'## ticktrace {name}', '', escape(what[0].upper() + what[1:]) + '.', '', '```',
                 literal(run(name, '--help').rstrip('\n')), '```', '', details.get(name, '')]
    return '\n'.join(page + page_end(rest))


# Public names: one underscore after the prefix (tt__ and TT__ are not API).
PUBLIC = re.compile(r'^(?:#define\s+(TT_(?!_)\w+)|(?:TT_API|TT__PROFILE_API)\s.*?\b(tt_(?!_)\w+)\s*\(|'
                    r'(?:struct|enum)\s+(tt_(?!_)\w+)\s*\{)')


def comment_blocks(text):
    """(comment lines, declaration lines) for each comment followed by code, in order;
    the disabled build's part (#else /* TT_DISABLE) repeats names and is skipped."""
    lines = text.split('\n')
    i, blocks, skipping = 0, [], False
    while i < len(lines):
        line = lines[i]
        if line.startswith('#else /* TT_DISABLE'):
            skipping = True
        elif line.startswith('#endif /* TT_DISABLE'):
            skipping = False
        if not skipping and line.startswith('/*'):
            comment = []
            while True:
                raw = lines[i]
                end = '*/' in raw
                body = re.sub(r'^\s*/?\*+ ?', '', raw.split('*/')[0]).rstrip()
                comment.append(body)
                i += 1
                if end:
                    break
            decl = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith('/*'):
                decl.append(lines[i])
                i += 1
            blocks.append((comment, decl))
            continue
        if not skipping and PUBLIC.match(line) and line.rstrip().endswith('{'):
            decl = []  # a struct or enum with no comment above: its members say enough
            while not decl or not decl[-1].startswith('}'):
                decl.append(lines[i])
                i += 1
            blocks.append(([], decl))
            continue
        i += 1
    return blocks


def declarations(decl):
    """The public declarations among the lines: a macro's name and parameters, a
    function's prototype, a struct or enum whole."""
    shown, i = [], 0
    while i < len(decl):
        m = PUBLIC.match(decl[i])
        if not m:
            i += 1
            continue
        if m.group(1):
            shown.append(re.match(r'#define\s+(\w+(?:\([^)]*\))?)', decl[i]).group(1))
            i += 1
        elif m.group(2):
            proto = decl[i]
            while not proto.rstrip().endswith(';'):
                i += 1
                proto += ' ' + decl[i].strip()
            shown.append(re.sub(r'^(TT_API|TT__PROFILE_API)\s+', '', re.sub(r'\s+', ' ', proto)))
            i += 1
        else:
            body = []
            while True:
                body.append(decl[i])
                i += 1
                if body[-1].startswith('}'):
                    break
            shown.append('\n'.join(body))
    return shown


def api(prose, headers):
    page = ['ticktrace(3) "ticktrace" "ticktrace C API"', '', '# NAME', '',
            'ticktrace - an in-process event recorder at the cost of one RDTSC per event', '',
            '# SYNOPSIS', '', '*#include <ticktrace.h>*', '',
            'Link with *-lticktrace* (*pkg-config --cflags --libs ticktrace*).', '']
    titles = ['DESCRIPTION', 'SELF-PROFILING']
    for n, path in enumerate(headers):
        blocks = comment_blocks(open(path, encoding='utf-8').read())
        intro, _ = blocks[0]
        page += [f'# {titles[min(n, 1)]}', '', paragraphs(intro)]
        if n == 0:
            page += ['# MACROS AND FUNCTIONS', '']
        for comment, decl in blocks[1:]:
            shown = list(dict.fromkeys(declarations(decl)))  # C and C++ define some alike
            if not shown or any('Not API' in c for c in comment):
                continue
            page += ['```', '\n'.join(shown), '```', '', paragraphs(comment)]
    return '\n'.join(page + page_end(prose_sections(prose)))


def file_format(prose, header):
    """The raw format's header whole, as literal blocks under its own `---- part ----`
    markers, after its top comment: every layout, constant and comment as the runtime
    and the tools compile them."""
    text = open(header, encoding='utf-8').read()
    top, _, body = text.partition('*/\n')
    intro = [re.sub(r'^\s*/?\*+ ?', '', line).rstrip() for line in top.split('\n')]
    page = ['ticktrace-format(5) "ticktrace" "ticktrace raw file format"', '', '# NAME', '',
            'ticktrace-format - the raw file (.ttr) that the runtime writes and the tools read',
            '', '# SYNOPSIS', '', '*#include <ticktrace/format.h>*', '', '# DESCRIPTION', '',
            paragraphs(intro)]
    parts = re.split(r'^/\* -+ (.+?) -+ \*/\n', body, flags=re.M)
    for title, code in zip([None] + parts[1::2], parts[0::2]):
        code = '\n'.join(line for line in code.split('\n')
                         if not re.match(r'#(ifndef|define|endif) TICKTRACE_FORMAT_H', line)).strip()
        if title:
            page += [f'# {title.upper()}', '']
        if code:
            page += ['```', literal(code.replace('\t', '    ')), '```', '']
    return '\n'.join(page + page_end(prose_sections(prose)))


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'cli':
        sys.stdout.write(cli(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) >= 4 and sys.argv[1] == 'api':
        sys.stdout.write(api(sys.argv[2], sys.argv[3:]))
    elif len(sys.argv) == 4 and sys.argv[1] == 'format':
        sys.stdout.write(file_format(sys.argv[2], sys.argv[3]))
    else:
        sys.exit('usage: man_page.py cli PROSE TICKTRACE | api PROSE HEADER [HEADER ...] | '
                 'format PROSE HEADER')
