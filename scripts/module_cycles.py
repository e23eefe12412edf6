#!/usr/bin/env python3
"""Module cycles inside each crate: which top-level modules of a crate refer to each other in a
ring (`crate::a` uses `crate::b`, which uses `crate::a`). Comments and inline test modules are
left out. Prints each ring and its edges; exits 1 when there is one.

    python3 scripts/module_cycles.py crates/*/src src
"""
import os
import re
import sys
from collections import defaultdict
def top_modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.rs'): continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] == 'mod': parts = parts[:-1]
            if parts == ['lib'] or parts == ['main'] or not parts: continue
            mods[path] = parts
    return mods
def analyze(src, depth=1):
    mods = top_modules(src)
    names = {tuple(p[:depth]) for p in mods.values()}
    g = defaultdict(set)
    for path, parts in mods.items():
        me = tuple(parts[:depth])
        text = open(path).read()
        text = re.sub(r'//[^\n]*', '', text)
        text = re.sub(r'#\[cfg\(test\)\]\s*mod tests\s*\{.*', '', text, flags=re.S)
        if 'tests' in parts[-1] or parts[-1].endswith('_tests'): continue
        for m in re.finditer(r'crate::((?:\w+::)*\w+)', text):
            segs = m.group(1).split('::')
            tgt = tuple(segs[:depth])
            if tgt in names and tgt != me: g[me].add(tgt)
        # super:: at depth
        for m in re.finditer(r'super::((?:\w+::)*\w+)', text):
            base = parts[:-1] if not path.endswith('mod.rs') else parts[:-1]
            segs = base + m.group(1).split('::')
            tgt = tuple(segs[:depth])
            if tgt in names and tgt != me: g[me].add(tgt)
    # tarjan
    idx = {}; low = {}; st = []; on = set(); out = []; c = [0]
    def sc(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in g[v]:
            if w not in idx: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(comp)
    sys.setrecursionlimit(10000)
    for v in list(names):
        if v not in idx: sc(v)
    return out, g
found = False
for crate in sys.argv[1:]:
    comps, g = analyze(crate)
    for comp in comps:
        found = True
        print(crate, ' <-> '.join('::'.join(x) for x in comp))
        for a in comp:
            print('   ', '::'.join(a), '->', sorted('::'.join(b) for b in g[a] if b in comp))
sys.exit(1 if found else 0)
