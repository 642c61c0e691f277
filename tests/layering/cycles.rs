//! Import cycles between the files of a crate.

use std::collections::{BTreeMap, BTreeSet};

use super::tree::Crate;

/// File -> the files of its own top-level module it names, leaving out its own ancestors.
/// (Between top-level modules, the layers already rule out any cycle.)
fn file_graph(c: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = c
        .file_module
        .keys()
        .map(|f| (f.clone(), BTreeSet::new()))
        .collect();
    for r in &c.refs {
        let Some(abs) = c.resolve(&r.scope, &r.segs) else {
            continue;
        };
        let from = &c.file_module[&r.file];
        let to = c.file_of(&abs);
        if to == r.file || from.first() != abs.first() || from.starts_with(&c.file_module[to]) {
            continue;
        }
        g.get_mut(&r.file).unwrap().insert(to.to_string());
    }
    g
}

/// The shortest import cycle through each file that is in one, each cycle once (written from
/// its first file in sort order): a set of files knotted together by one stray import shows
/// that import's cycle, not only the longest way round.
pub(crate) fn import_cycles(c: &Crate) -> Vec<String> {
    let g = file_graph(c);
    let mut cycles = BTreeSet::new();
    for scc in strongly_connected(&g) {
        if scc.len() < 2 {
            continue;
        }
        for start in &scc {
            let mut cycle = shortest_cycle(&g, &scc, start);
            let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap();
            cycle.rotate_left(first);
            cycle.push(cycle[0]);
            cycles.insert(cycle.join(" -> "));
        }
    }
    cycles
        .into_iter()
        .map(|c| format!("import cycle: {c}"))
        .collect()
}

/// Breadth-first from `start`, inside its strongly connected set, until an edge leads back to
/// it: the files of the shortest cycle through `start`, from `start`.
fn shortest_cycle<'a>(
    g: &'a BTreeMap<String, BTreeSet<String>>,
    scc: &BTreeSet<String>,
    start: &'a String,
) -> Vec<&'a str> {
    let mut parent: BTreeMap<&String, &String> = BTreeMap::new();
    let mut frontier = vec![start];
    let mut back = None;
    'search: while !frontier.is_empty() {
        let mut next = Vec::new();
        for n in frontier {
            for m in &g[n] {
                if m == start {
                    back = Some(n);
                    break 'search;
                }
                if scc.contains(m) && !parent.contains_key(m) {
                    parent.insert(m, n);
                    next.push(m);
                }
            }
        }
        frontier = next;
    }
    let mut path = Vec::new();
    let mut n = back.expect("a strongly connected set has a cycle through each file");
    while n != start {
        path.push(n.as_str());
        n = parent[n];
    }
    path.push(start.as_str());
    path.reverse();
    path
}

/// Tarjan's strongly connected components, each as a sorted set.
fn strongly_connected(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let g = s.g;
        for w in &g[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                connect(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = BTreeSet::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                scc.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            s.out.push(scc);
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            connect(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}
