#!/usr/bin/python3
"""Prints the include cycles among the C++ and CUDA files under the given folders and exits 1 when
there is one, 0 when there is none.

A unit is a file together with its header: foo.cpp and foo.hpp (wherever they sit under one
ROOT) are one unit "foo", so foo.cpp including bar.hpp while bar.cpp includes foo.hpp is a cycle
even though no header includes itself. With --by folder a unit is a folder instead (its path from
the repository root, cut to --depth parts), to check that no two folders include each other.
Only quoted includes that name a file under the given roots count.

usage: include-cycles.py [--by unit|folder] [--depth N] ROOT [ROOT ...]
example: include-cycles.py libprofiler
"""
import argparse
import collections
import os
import re
import sys

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".c", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def source_files(roots):
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.normpath(os.path.join(folder, name))


def resolve(include, including_file, files_by_name):
    """The file an include names: beside the including file first, else any file whose path ends
    with the include's path (an include directory); None when it is outside the roots."""
    beside = os.path.normpath(os.path.join(os.path.dirname(including_file), include))
    candidates = files_by_name.get(os.path.basename(include), [])
    if beside in candidates:
        return beside
    matches = [path for path in candidates if path.endswith(os.sep + os.path.normpath(include))]
    return matches[0] if matches else None


def unit_of(path, roots, by, depth):
    if by == "folder":
        return os.sep.join(os.path.dirname(path).split(os.sep)[:depth])
    root = next(root for root in roots if path.startswith(os.path.normpath(root) + os.sep))
    return os.path.join(os.path.normpath(root), os.path.splitext(os.path.basename(path))[0])


def include_graph(roots, by, depth):
    """unit -> {included unit: (including file, include text)} for one witness of each edge."""
    files = list(source_files(roots))
    files_by_name = collections.defaultdict(list)
    for path in files:
        files_by_name[os.path.basename(path)].append(path)
    graph = collections.defaultdict(dict)
    for path in files:
        source = unit_of(path, roots, by, depth)
        graph[source]
        with open(path, encoding="utf-8", errors="replace") as text:
            for include in INCLUDE.findall(text.read()):
                target_file = resolve(include, path, files_by_name)
                if target_file is None:
                    continue
                target = unit_of(target_file, roots, by, depth)
                if target != source:
                    graph[source].setdefault(target, (path, include))
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the graph's strongly connected components."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def shortest_cycle(graph, component):
    """A shortest path from the component's first unit back to itself, inside the component."""
    start, members = component[0], set(component)
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if successor in members and successor not in previous:
                previous[successor] = node
                queue.append(successor)
    return [start]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+", metavar="ROOT")
    parser.add_argument("--by", choices=("unit", "folder"), default="unit")
    parser.add_argument("--depth", type=int, default=2, help="folder path parts kept with --by folder")
    options = parser.parse_args()
    for root in options.roots:
        if not os.path.isdir(root):
            sys.exit(f"include-cycles.py: {root} is not a folder")
    graph = include_graph(options.roots, options.by, options.depth)
    cycles = [component for component in strongly_connected(graph) if len(component) > 1]
    for component in cycles:
        path = shortest_cycle(graph, component)
        print(f"cycle among {len(component)} {options.by}s: {' -> '.join(path)}")
        for source, target in zip(path, path[1:]):
            including_file, include = graph[source][target]
            print(f"  {including_file} includes \"{include}\"")
    units = len(graph)
    print(f"{units} {options.by}s, {len(cycles)} include cycle{'s' if len(cycles) != 1 else ''}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
