"""The shape of the package: no import cycles, the pipeline imports downward only."""

from __future__ import annotations

import ast
import pathlib

import fastcopy

ROOT = pathlib.Path(fastcopy.__file__).parent


def _module(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict:
    """module -> set of fastcopy modules it imports (anywhere in the file, lazy imports included)."""
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                cands = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                cands = [a.name for a in node.names]
            else:
                continue
            for c in cands:
                if c in modules and c != name:
                    deps.add(c)
        graph[name] = deps
    return graph


def test_no_import_cycles():
    graph = import_graph()
    state = {}
    stack = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if d == m.rpartition(".")[0] or m.startswith(d + ".") and d == "fastcopy":
                continue  # a submodule's own package (its __init__ re-exports) is not a cycle in practice
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_pipeline_imports_downward():
    """dma/ (steps -> lower -> run) imports neither the ops, the API nor the CLI; kernels import no fastcopy
    module above them; planners never import the runner."""
    graph = import_graph()
    for m, deps in graph.items():
        if m.startswith("fastcopy.dma"):
            bad = [d for d in deps if d.startswith(("fastcopy.ops", "fastcopy.api", "fastcopy.cli", "fastcopy.golden",
                                                    "fastcopy.formats"))]
            assert not bad, f"{m} imports {bad}"
        if m.startswith("fastcopy.kernels"):
            assert all(d.startswith("fastcopy.kernels") for d in deps), f"{m} imports {deps}"
        if m.startswith("fastcopy.ops"):
            assert "fastcopy.dma.run" not in deps, f"planner module {m} imports the runner"
    assert "fastcopy.dma.run" not in graph["fastcopy.dma.steps"] | graph["fastcopy.dma.lower"]


def _run(code: str, **env) -> str:
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, **env})
    return out.stdout.strip()


def test_import_does_not_load_numba():
    assert _run("import sys, fastcopy; print('numba' in sys.modules)") == "False"


def test_small_first_calls_run_without_numba_and_large_ones_load_it():
    code = """
import sys, numpy as np, fastcopy as fc
pipe = fc.TPipe()
x = pipe.alloc(fc.TPosition.VECIN, "half", 4096)
src = fc.GlobalTensor(np.arange(4096, dtype=np.float16))
fc.DataCopy(x, src, 4096)
fc.to_nz(np.ones((20, 40), np.float16))
small = 'numba' in sys.modules
assert np.array_equal(x.numpy(), np.arange(4096, dtype=np.float16)) and x.defined().all()
fc.to_nz(np.ones((512, 512), np.float32))
print(small, 'numba' in sys.modules)
"""
    assert _run(code, FASTCOPY_KERNELS="") == "False True"
