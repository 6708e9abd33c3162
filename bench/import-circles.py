#!/usr/bin/env python3
# File-level import circles in each crate (issue #56: the target is none). A file's imports are the modules of its own
# crate it names (`crate::x::...`, `super::x`), its test module left out; a circle is a strongly connected set of two
# files or more. Prints each circle and the count; exits 1 when there is one.
#
# Usage: bench/import-circles.py   (from anywhere; reads crates/*/src)
import os, re, sys
def crate_graph(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith('.rs'):
                p = os.path.join(root, n)
                rel = os.path.relpath(p, src)[:-3]
                mod = rel.replace('/mod', '').replace(os.sep, '::')
                if mod in ('lib', 'main'): mod = ''
                files[mod] = open(p).read()
    mods = set(files)
    g = {m: set() for m in mods}
    for m, text in files.items():
        # strip test modules roughly
        text = text.split('#[cfg(test)]\nmod tests')[0]
        for ref in re.findall(r'crate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)', text):
            parts = ref.split('::')
            for k in range(len(parts), 0, -1):
                cand = '::'.join(parts[:k])
                if cand in mods and cand != m:
                    g[m].add(cand); break
        for ref in re.findall(r'super::([a-z_][a-z0-9_]*)', text):
            parent = '::'.join(m.split('::')[:-1])
            cand = (parent + '::' + ref) if parent else ref
            if cand in mods and cand != m: g[m].add(cand)
    return g
def sccs(g):
    index = {}; low = {}; st = []; on = set(); out = []; i = [0]
    sys.setrecursionlimit(10000)
    def strong(v):
        index[v] = low[v] = i[0]; i[0] += 1; st.append(v); on.add(v)
        for w in g[v]:
            if w not in index: strong(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in g:
        if v not in index: strong(v)
    return out
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
total = 0
for crate in sorted(os.listdir('crates')):
    src = os.path.join('crates', crate, 'src')
    if not os.path.isdir(src): continue
    for c in sccs(crate_graph(src)):
        total += 1
        print(crate, len(c), c)
print('circles:', total)
sys.exit(1 if total else 0)
