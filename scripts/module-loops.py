#!/usr/bin/env python3
"""Lists the dependency loops between sibling modules of the library, and
the top-level imports that run against CONTRIBUTING.md's layer diagram.

Usage: scripts/module-loops.py [SRC] [--with-tests] [-v]

The modules of the workspace's other crates (`crates/*/src`) join SRC's
tree as the top crate re-exports them: core's, lab's and results' at the
top under their own names, any other crate's under its name (`crates/wire` is
`wire`, `crates/report` is `report`).

Each library file's references to other modules (`use` trees, and inline
`crate::`, `super::` and `self::` paths; comments left out) are resolved to
the deepest module that exists; a reference from module P to module Q is an
edge between the children of their common ancestor (`report::fits ->
report::rows`, or `runner -> report` for `crate::report::format` used in
`runner::trial`). Every strongly connected component (Tarjan) of two or more
siblings is printed as a loop, with its edges; `-v` adds up to three
references behind each edge. The binary (`main.rs`, `cli/`) is left out, and
so is test code (`#[cfg(test)] mod tests` blocks, and files declared
`#[cfg(test)] mod x;` or for tests and a `test-support` feature alone)
unless `--with-tests` is given.

The direction check reads the diagram under "## Layers" in CONTRIBUTING.md
(next to SRC): a top-level module may import only modules drawn on a line
below its own; peers on one line (`server/ │ load/ │ profile/`) import
each other neither way; the modules under the `leaves` rule import no
other module but the exceptions the text names (`analysis` → `rng`); a
top-level module the diagram does not draw is an error too. Exits 1 when
there is a loop or an edge against the diagram.
"""
import os
import re
import sys

ARGS = [a for a in sys.argv[1:] if not a.startswith('-')]
SRC = ARGS[0] if ARGS else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src')
WITH_TESTS = '--with-tests' in sys.argv
VERBOSE = '-v' in sys.argv


def module_of(path, src=SRC):
    """`src/runner/trial.rs` -> ('runner', 'trial'); `mod.rs` names its directory."""
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ('mod', 'lib'):
        parts = parts[:-1]
    return tuple(parts)


def source_roots():
    """(src, mount) for SRC, then for each workspace crate beside it
    (`crates/NAME/src`): `crates/core`, `crates/lab` and `crates/results` are
    mounted at the
    top (the top crate re-exports each of their modules under its own
    name), any other crate at
    the module of its name (`crates/wire` is `wire`, as `pub use
    scalelab_wire as wire`)."""
    crates = os.path.join(os.path.dirname(os.path.abspath(SRC)), 'crates')
    names = sorted(os.listdir(crates)) if os.path.isdir(crates) else []
    extra = [(os.path.join(crates, c, 'src'), () if c in AT_THE_TOP else (c,)) for c in names]
    return [(SRC, ())] + [(r, m) for r, m in extra if os.path.isdir(r)]


MOUNTS = {}  # module -> the mount of the crate its file is in
AT_THE_TOP = ('core', 'lab', 'results')  # crates whose modules the top crate re-exports by name


def library_files():
    files = {}
    for src, mount in source_roots():
        for root, _, names in os.walk(src):
            for n in names:
                path = os.path.join(root, n)
                rel = os.path.relpath(path, src)
                module = mount + module_of(path, src)
                if src != SRC and module == ():
                    continue  # core's, lab's or results' lib.rs: its modules are the top crate's
                if n.endswith('.rs') and rel != 'main.rs' and not rel.startswith('cli' + os.sep):
                    files[module] = path
                    MOUNTS[module] = mount
    return files


def test_modules(files):
    """Modules declared `#[cfg(test)] mod name;`, or compiled for tests
    and a crate's `test-support` feature alone (`#[cfg(any(test, feature =
    "test-support"))]`: fixtures lent to another crate's tests)."""
    out = set()
    decl = re.compile(r'#\[cfg\((?:test|any\(test,\s*feature\s*=\s*"test-support"\))\)\]'
                      r'\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*;')
    for module, path in files.items():
        for m in decl.finditer(open(path).read()):
            out.add(module + (m.group(1),))
    return out


def expand(tree):
    """Expands a use tree `a::{b, c::{d}}` into its paths."""
    tree = tree.strip()
    i = tree.find('{')
    if i < 0:
        return [tree.split(' as ')[0].strip()]
    prefix, body = tree[:i], tree[i + 1:tree.rfind('}')]
    parts, depth, cur = [], 0, ''
    for ch in body:
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
            continue
        depth += (ch == '{') - (ch == '}')
        cur += ch
    parts.append(cur)
    return [p for part in parts if part.strip() for p in expand(prefix + part.strip())]


def resolve(here, path, modules):
    """The deepest existing module a `crate::`/`super::`/`self::` path names."""
    segs = [s for s in path.split('::') if s]
    if segs and segs[0] in ('scalelab_' + c for c in AT_THE_TOP):
        segs[0] = 'crate'  # core's, lab's and results' modules are re-exported at the top
    elif segs and segs[0].startswith('scalelab_'):
        segs[0:1] = ['crate', segs[0][len('scalelab_'):]]  # scalelab_wire::pg is wire::pg
    if not segs or segs[0] not in ('crate', 'super', 'self'):
        return None
    base = ()
    if segs[0] == 'crate':
        segs = segs[1:]
        mount = MOUNTS.get(here, ())
        if mount and mount + tuple(segs[:1]) in modules:
            base = mount  # `crate::pg` inside crates/wire is `wire::pg`
    else:
        base = here
        while segs and segs[0] in ('super', 'self'):
            base = base[:-1] if segs[0] == 'super' else base
            segs = segs[1:]
    full = base + tuple(segs)
    for k in range(len(full), -1, -1):
        if full[:k] in modules:
            return full[:k]
    return None


def sibling_edges(files):
    modules = set(files)
    tests = set() if WITH_TESTS else test_modules(files)
    edges, evidence = {}, {}
    for here, path in sorted(files.items()):
        if any(here[:k] in tests for k in range(len(here) + 1)):
            continue
        text = open(path).read()
        if not WITH_TESTS:
            m = re.search(r'#\[cfg\(test\)\]\s*mod tests\b', text)
            text = text[:m.start()] if m else text
        text = re.sub(r'//[^\n]*', '', text)
        refs = [p for m in re.finditer(r'\buse\s+([^;]+);', text) for p in expand(m.group(1))]
        refs += re.findall(r'\b(?:crate|super|self|scalelab_[a-z]+)(?:::[A-Za-z_][A-Za-z0-9_]*)+', text)
        for ref in refs:
            ref = re.sub(r'\s', '', ref)
            there = resolve(here, ref, modules)
            if there is None or there == here:
                continue
            k = 0
            while k < min(len(here), len(there)) and here[k] == there[k]:
                k += 1
            if k < len(here) and k < len(there):
                a, b = here[:k + 1], there[:k + 1]
                edges.setdefault(a, set()).add(b)
                evidence.setdefault((a, b), set()).add(f'{os.path.relpath(path, os.path.dirname(SRC))}: {ref}')
    return edges, evidence


def loops(edges):
    """Strongly connected components of two or more modules (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def layers(path):
    """CONTRIBUTING's diagram: {module: (line, is_leaf)} and the leaves'
    allowed imports {(a, b)}."""
    text = open(path).read()
    block = text[text.index('## Layers'):]
    block = block[block.index('```') + 3:]
    block = block[:block.index('```')]
    rank, leaf = {}, False
    for i, line in enumerate(block.splitlines()):
        if '───' in line:
            leaf = 'leaves' in line
            continue
        if not line.strip() or line.startswith('   ' * 4):
            continue
        names = re.split(r'\s{2,}', line.strip())[0]
        if '.rs' in names:
            continue  # the binary (main.rs / cli/), not the library
        for name in re.split(r'[│,]', names):
            name = name.strip().rstrip('/')
            if name:
                rank[name] = (i, leaf)
    # "leave import no other module, except `a` → `b` and `c` → `d`)"
    clause = re.search(r'except ((?:`\w+` → `\w+`(?:,? and |, )?)+)', text)
    allowed = set(re.findall(r'`(\w+)` → `(\w+)`', clause.group(1))) if clause else set()
    return rank, allowed


def against_layers(edges, rank, allowed):
    """Top-level edges that do not point down the diagram, with why."""
    out = []
    tops = {m for e in edges for m in [e] + list(edges[e]) if len(m) == 1}
    for m in sorted(tops):
        if m[0] not in rank:
            out.append((m, None, f'{m[0]} is not in the diagram'))
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if len(a) != 1 or a[0] not in rank or b[0] not in rank:
                continue
            (ra, leaf), (rb, _) = rank[a[0]], rank[b[0]]
            if leaf and (a[0], b[0]) not in allowed:
                out.append((a, b, 'a leaf imports no other module'))
            elif not leaf and rb == ra:
                out.append((a, b, 'peers on one line do not import each other'))
            elif not leaf and rb < ra:
                out.append((a, b, f'{b[0]} is drawn above {a[0]}'))
    return out


def main():
    files = library_files()
    edges, evidence = sibling_edges(files)
    found = loops(edges)
    contributing = os.path.join(os.path.dirname(os.path.abspath(SRC)), 'CONTRIBUTING.md')
    wrong = against_layers(edges, *layers(contributing))
    name = lambda m: '::'.join(m)
    print(f"{len(files)} library files, {sum(len(s) for s in edges.values())} sibling edges"
          + (" (tests included)" if WITH_TESTS else " (test code left out)"))
    for comp in found:
        print('loop:', ' <-> '.join(name(m) for m in comp))
        for a in comp:
            for b in sorted(edges.get(a, ())):
                if b in comp:
                    why = '; '.join(sorted(evidence[(a, b)])[:3]) if VERBOSE else ''
                    print(f'    {name(a)} -> {name(b)}' + (f'  ({why})' if why else ''))
    if not found:
        print('no loops')
    for a, b, why in wrong:
        if b is None:
            print(f'against the layers: {why}')
            continue
        detail = '; '.join(sorted(evidence[(a, b)])[:3]) if VERBOSE else ''
        print(f'against the layers: {name(a)} -> {name(b)}: {why}' + (f'  ({detail})' if detail else ''))
    if not wrong:
        print('every top-level import points down the layers of CONTRIBUTING.md')
    return 1 if found or wrong else 0


if __name__ == '__main__':
    sys.exit(main())
