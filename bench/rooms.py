#!/usr/bin/env python3
# The rooms of the tree (issue #56), checked in CI: every crate's files without import circles, at most four source
# files over 800 lines (each saying why in its module doc: a `//!` line with "800 lines"), and the CLI's command
# modules under 300 lines each.
#
# Import circles: a file's imports are the modules of its own crate it names after `crate::` or `super::` (brace
# groups expanded, comment lines and the test module left out); a circle is a strongly connected set of two files or
# more.
#
# Floors (issue #68): a file that names an item of its crate's root (`crate::Profile`, where `Profile` is defined or
# re-exported by lib.rs) imports back up a floor, into the hub, rather than from the file that defines it; and a
# lib.rs that defines items beside its re-exports gives each of them two homes. Both are counted for every crate; no
# lib.rs may define anything, and in the crates of FLOORED (each one done) no file imports back up a floor either.
#
# Usage: bench/rooms.py   (from anywhere; reads crates/*/src). Prints what it found; exits 1 when a rule is broken.
import os, re, sys
def expand(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (names only; `self` keeps the prefix)."""
    out, depth, start, head = [], 0, 0, None
    tree = tree.strip()
    brace = tree.find('{')
    if brace < 0:
        return [tree.split(' as ')[0].strip().rstrip(':')]
    head = tree[:brace].rstrip(':').strip()
    inner = tree[brace + 1:tree.rfind('}')]
    for i, ch in enumerate(inner + ','):
        if ch == '{': depth += 1
        elif ch == '}': depth -= 1
        elif ch == ',' and depth == 0:
            part = inner[start:i].strip()
            start = i + 1
            if not part: continue
            for sub in expand(part):
                out.append(head if sub == 'self' else (head + '::' + sub if head else sub))
    return out
def brace_group(rest):
    """The text of `rest` up to the brace that closes its first `{`."""
    depth = 0
    for i, ch in enumerate(rest):
        if ch == '{': depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0: return rest[:i + 1]
    return rest
def paths_after(text, base):
    """Every path written after `base` (`crate::` or `super::`), brace groups expanded."""
    paths = []
    for match in re.finditer(re.escape(base), text):
        if match.start() > 0 and (text[match.start() - 1].isalnum() or text[match.start() - 1] == '_'):
            continue
        rest = text[match.end():]
        m = re.match(r'(?:[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)?(?:::)?\{?', rest)
        if m and m.group(0).endswith('{'):
            paths.extend(expand(brace_group(rest)))
        elif m and m.group(0):
            paths.append(m.group(0).rstrip(':'))
    return paths
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
    up = {m: 0 for m in mods}
    for m, text in files.items():
        # The test module is left out (it may use anything of its crate).
        text = text.split('#[cfg(test)]\nmod tests')[0]
        # Comments (doc links such as [`super::x`]) are not imports.
        text = '\n'.join(line for line in text.split('\n') if not line.lstrip().startswith('//'))
        parent = '::'.join(m.split('::')[:-1])
        for base, prefix in (('crate::', ''), ('super::', parent)):
            for path in paths_after(text, base):
                parts = [p for p in ([prefix] if prefix else []) + path.split('::') if p]
                for k in range(len(parts), 0, -1):
                    cand = '::'.join(parts[:k])
                    if cand in mods and cand != m:
                        g[m].add(cand); break
                else:
                    if m and parts and parts[0] not in mods and parts[0] not in ('self', '*'):
                        up[m] += 1
    return g, up
def root_definitions(src):
    """The items lib.rs defines itself (outside its test module), when it also re-exports others."""
    path = os.path.join(src, 'lib.rs')
    if not os.path.exists(path): return []
    text = open(path).read().split('#[cfg(test)]')[0]
    if not re.search(r'^pub use ', text, re.M): return []
    return re.findall(r'^(?:pub(?:\([\w:]+\))? )?(?:enum|struct|fn|const|static|trait|type|union) (\w+)', text, re.M)
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
FLOORED = {'envbench-htap', 'envbench-oltp', 'envbench-tpch'}
broken = []
total = 0
floors = []
for crate in sorted(os.listdir('crates')):
    src = os.path.join('crates', crate, 'src')
    if not os.path.isdir(src): continue
    graph, up = crate_graph(src)
    for c in sccs(graph):
        total += 1
        print('circle:', crate, len(c), c)
    ups, defined = sum(up.values()), root_definitions(src)
    floors.append((crate, ups, defined))
    if defined:
        broken.append('%s: lib.rs defines %s' % (crate, ', '.join(defined)))
    if crate in FLOORED and ups:
        broken.append('%s: %d imports back up a floor' % (crate, ups))
print('import circles:', total)
if total:
    broken.append('%d import circles' % total)
for crate, ups, defined in floors:
    if ups or defined:
        print('floors: %s: %d imports back up a floor%s%s' % (crate, ups, '; lib.rs defines ' if defined else '',
                                                          ', '.join(defined)))

MAX_LARGE, LARGE = 4, 800
large = []
for root, _, names in os.walk('crates'):
    if '/src' not in root + '/': continue
    for n in sorted(names):
        if n.endswith('.rs'):
            p = os.path.join(root, n)
            text = open(p).read()
            lines = text.count('\n')
            if lines > LARGE:
                reason = any(l.startswith('//!') and '800 lines' in l for l in text.split('\n'))
                large.append((lines, p, reason))
for lines, p, reason in sorted(large, reverse=True):
    print('over %d lines: %s (%d)%s' % (LARGE, p, lines, '' if reason else ' -- its module doc gives no reason'))
print('files over %d lines: %d (at most %d)' % (LARGE, len(large), MAX_LARGE))
if len(large) > MAX_LARGE:
    broken.append('%d files over %d lines' % (len(large), LARGE))
if any(not reason for _, _, reason in large):
    broken.append('a file over %d lines without a reason in its module doc' % LARGE)

commands = os.path.join('crates', 'envbench', 'src', 'commands')
for n in sorted(os.listdir(commands)):
    lines = open(os.path.join(commands, n)).read().count('\n')
    if lines >= 300:
        print('command module over 300 lines: %s (%d)' % (n, lines))
        broken.append('commands/%s has %d lines' % (n, lines))
if broken:
    print('broken:', '; '.join(broken))
sys.exit(1 if broken else 0)
