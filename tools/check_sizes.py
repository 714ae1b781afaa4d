#!/usr/bin/env python3
"""Checks that jitx's sources stay readable: no file over --max-file lines (tables excepted, listed below), no
line of code over --max-line columns (.clang-format's limit; string literals such as HLO text in tests are
exempt), and no function or class body over --max-body lines. Bodies are found by brace matching outside comments, strings and
namespace blocks, so a lambda counts toward the function that holds it. Prints each violation; exits 1 if any."""
import argparse
import os
import re
import sys

# Files that are tables or golden data rather than code (a reason per line).
TABLES = {
    'src/hlo/ir/opcodes.def': 'the opcode X-macro list',
}
# Files whose long lines are generated data, not code.
LONG_LINE_DATA = {
    'tests/random_test.cpp': 'JAX-generated reference draws (tools/gen_random_refs.py), one array per line',
    'tests/random_samplers_refs.h': 'JAX-generated sampler draws (tools/gen_sampler_refs.py), one array per line',
    'tests/stats_refs.h': 'JAX-generated scipy.stats values (tools/gen_stats_refs.py), one case per line',
    'tests/scipy_linalg_refs.h': 'JAX-generated scipy.linalg results (tools/gen_scipy_linalg_refs.py), one array per line',
    'tests/special_refs.h': 'JAX-generated special-function values (tools/gen_special_refs.py), one case per line',
    'tests/optax_refs.h': 'optax-generated trajectories and schedules (tools/gen_optax_refs.py), one case per line',
    'tests/functional_refs.h': 'JAX-generated linspace/histogram/polyfit values (tools/gen_functional_refs.py), one case per line',
}
HEAD = re.compile(r'\b(namespace|extern\s+"C")\b[^;{]*$')


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(')' + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (j + 1 - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def long_bodies(text, limit):
    """(first line, length, header) of each outermost non-namespace brace block longer than limit lines."""
    code = strip_code(text)
    stack = []  # (is_namespace, start line, header)
    found = []
    line = 1
    last_stmt = 0
    for i, c in enumerate(code):
        if c == '\n':
            line += 1
        elif c == '{':
            header = code[last_stmt:i].strip().split('\n')[-1].strip() if i > last_stmt else ''
            full = ' '.join(code[last_stmt:i].split())
            is_ns = bool(HEAD.search(full))
            stack.append((is_ns, line, header or full[-80:]))
            last_stmt = i + 1
        elif c == '}':
            if not stack:
                continue
            is_ns, start, header = stack.pop()
            outer = all(ns for ns, _, _ in stack)
            if not is_ns and outer and line - start + 1 > limit:
                found.append((start, line - start + 1, header))
            last_stmt = i + 1
        elif c == ';':
            last_stmt = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--max-file', type=int, default=800)
    ap.add_argument('--max-body', type=int, default=300)
    ap.add_argument('--max-line', type=int, default=120)
    ap.add_argument('dirs', nargs='*', default=['src', 'include', 'tests', 'benchmarks', 'examples', 'tools', 'fuzz'])
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    errors, nfiles = [], 0
    for top in args.dirs:
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(('.h', '.cpp', '.def', '.py', '.sh')):
                    continue
                path = os.path.join(d, name)
                rel = os.path.relpath(path, root)
                nfiles += 1
                with open(path, errors='replace') as f:
                    text = f.read()
                nlines = text.count('\n')
                if nlines > args.max_file and rel not in TABLES:
                    errors.append(f'{rel}: {nlines} lines (at most {args.max_file}; split it by job)')
                if name.endswith(('.h', '.cpp')):
                    for k, line in enumerate(strip_code(text).split('\n'), 1):
                        if len(line.rstrip()) > args.max_line and rel not in LONG_LINE_DATA:
                            errors.append(f'{rel}:{k}: {len(line.rstrip())} columns (at most {args.max_line})')
                    for start, length, header in long_bodies(text, args.max_body):
                        errors.append(f'{rel}:{start}: a body of {length} lines (at most {args.max_body}): {header}')
    for e in errors:
        print(e)
    if errors:
        print(f'check_sizes: {len(errors)} violation(s) in {nfiles} files')
        return 1
    print(f'check_sizes: {nfiles} files, none over {args.max_file} lines, no line over {args.max_line} columns, '
          f'no function or class over {args.max_body} lines')
    return 0


if __name__ == '__main__':
    sys.exit(main())
