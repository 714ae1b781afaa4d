#!/usr/bin/env python3
"""Checks jitx's layering: every #include in src/ and include/ goes to the file's own layer or a lower one
(tools/layers.txt lists the layers, bottom first), and no two files include each other, directly or through
others. Prints each violation with file and line; exits 1 if there is any, 0 otherwise."""
import argparse
import fnmatch
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_layers(path):
    """[(rank, name, [patterns])]: siblings on one line share a rank but not a name."""
    layers = []
    rank = 0
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split('#', 1)[0].strip()
            if not line:
                continue
            m = re.match(r'layer\s+([^:]+):\s*(.*)$', line)
            if not m:
                sys.exit(f'{path}:{lineno}: expected "layer <name>: <paths>", got: {line}')
            names = [n.strip() for n in m.group(1).split('|')]
            groups = [g.split() for g in m.group(2).split('|')]
            if len(names) != len(groups) or not all(groups):
                sys.exit(f'{path}:{lineno}: {len(names)} layer names but {len(groups)} groups of paths')
            for name, pats in zip(names, groups):
                layers.append((rank, name, pats))
            rank += 1
    return layers


def layer_of(relpath, layers):
    """The most specific pattern wins (longest), so include/jitx/array.h can sit below include/jitx."""
    best = None
    for rank, name, pats in layers:
        for p in pats:
            hit = relpath == p or relpath.startswith(p.rstrip('/') + '/') or fnmatch.fnmatch(relpath, p)
            if hit and (best is None or len(p) > best[0]):
                best = (len(p), rank, name)
    return None if best is None else (best[1], best[2])


def resolve(target, src, files):
    """The repository file an include names: src/<t>, include/<t>, or relative to the including file."""
    for cand in ('src/' + target, 'include/' + target, os.path.join(os.path.dirname(src), target)):
        cand = os.path.normpath(cand)
        if cand in files:
            return cand
    return None


def find_cycles(graph):
    """Strongly connected components of more than one file (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    v = stack.pop()
                    on_stack.discard(v)
                    comp.append(v)
                    if v == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--layers', default=None, help='the layer list (default: tools/layers.txt)')
    ap.add_argument('--graph', action='store_true', help='also print the include counts between layers')
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    layers = read_layers(args.layers or os.path.join(root, 'tools', 'layers.txt'))

    files = {}
    for top in ('src', 'include'):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(('.h', '.cpp', '.def', '.inc')):
                    rel = os.path.relpath(os.path.join(d, n), root)
                    files[rel] = os.path.join(d, n)

    errors = []
    graph = {f: set() for f in files}
    edges = {}
    for rel in sorted(files):
        mine = layer_of(rel, layers)
        if mine is None:
            errors.append(f'{rel}: belongs to no layer of tools/layers.txt (add its folder to a layer)')
            continue
        with open(files[rel], errors='replace') as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(m.group(2), rel, files)
                if target is None:
                    continue  # a system or third-party header
                graph[rel].add(target)
                theirs = layer_of(target, layers)
                if theirs is None:
                    continue  # reported for the target itself
                edges[(mine[1], theirs[1])] = edges.get((mine[1], theirs[1]), 0) + 1
                if theirs[0] > mine[0]:
                    errors.append(f'{rel}:{lineno}: includes {target}: layer {mine[1]} may not include the higher '
                                  f'layer {theirs[1]}')
                elif theirs[0] == mine[0] and theirs[1] != mine[1]:
                    errors.append(f'{rel}:{lineno}: includes {target}: sibling layers {mine[1]} and {theirs[1]} '
                                  'may not include each other')
    for comp in find_cycles(graph):
        errors.append('include cycle between files: ' + ' <-> '.join(comp))

    if args.graph:
        for (a, b), n in sorted(edges.items()):
            if a != b:
                print(f'  {a:22s} -> {b:22s} {n}')
    for e in errors:
        print(e)
    nfiles, nincludes = len(files), sum(len(v) for v in graph.values())
    if errors:
        print(f'check_layers: {len(errors)} violation(s) in {nfiles} files')
        return 1
    print(f'check_layers: {nfiles} files, {nincludes} includes, {len({l[1] for l in layers})} layers: '
          'no upward include, no include cycle')
    return 0


if __name__ == '__main__':
    sys.exit(main())
