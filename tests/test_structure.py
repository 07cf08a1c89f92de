"""The tree's shape, checked so it needs no hand care: no import cycle anywhere (packages' own
modules included), the size limits of docs/architecture.md, and the public surface of `mcpsim`
within its budget, named only through packages' `__init__`."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE_LINES, CLASS_LINES, FUNCTION_LINES = 600, 300, 80
PUBLIC_BUDGET = 300


def _sources() -> list[Path]:
    return sorted(p for p in (ROOT / "mcpsim").rglob("*.py") if "__pycache__" not in p.parts)


def oversized(paths: list[Path]) -> list[str]:
    """Every module, class and function over its limit, as 'path:name lines'."""
    found = []
    for path in paths:
        text = path.read_text()
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        if len(text.splitlines()) > MODULE_LINES:
            found.append(f"{rel} {len(text.splitlines())} lines (module limit {MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                limit = CLASS_LINES if isinstance(node, ast.ClassDef) else FUNCTION_LINES
                if lines > limit:
                    found.append(f"{rel}:{node.name} {lines} lines (limit {limit})")
    return found


def test_no_module_class_or_function_over_its_limit() -> None:
    assert oversized(_sources()) == []


def test_the_size_check_can_fail(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES + 1))
    big.write_text(f"def long():\n{body}\n")
    assert oversized([big]) == [f"big.py:long {FUNCTION_LINES + 2} lines (limit {FUNCTION_LINES})"]


def import_cycles(package: str) -> list[list[str]]:
    """Strongly connected sets of modules, counting TYPE_CHECKING and function-level imports, and
    counting an import of `a.b.c` as an import of the packages `a.b` and `a` too (their
    `__init__` runs first), except the importer's own ancestors."""
    graph = grimp.build_graph(package, include_external_packages=False, exclude_type_checking_imports=False)

    def ancestors(module: str) -> list[str]:
        parts = module.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts))]

    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        own = set(ancestors(module))
        targets = set()
        for imported in graph.find_modules_directly_imported_by(module):
            targets.add(imported)
            targets.update(a for a in ancestors(imported) if a not in own and a != module)
        edges[module] = targets
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(start: str) -> None:  # iterative Tarjan: deep packages never hit the recursion limit
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
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
                if len(component) > 1:
                    cycles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycle_anywhere() -> None:
    assert import_cycles("mcpsim") == []


def test_the_cycle_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "cyclepkg"
    (pkg / "inner").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "inner" / "__init__.py").write_text("from cyclepkg.inner import a\n")
    (pkg / "inner" / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyclepkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyclepkg.inner import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("cyclepkg") == [["cyclepkg.b", "cyclepkg.inner", "cyclepkg.inner.a"]]


def public_names() -> dict[str, list[str]]:
    """Each package's `__all__`, and the top level's."""
    names = {"mcpsim": list(importlib.import_module("mcpsim").__all__)}
    for init in sorted((ROOT / "mcpsim").glob("*/__init__.py")):
        module = importlib.import_module(f"mcpsim.{init.parent.name}")
        names[module.__name__] = list(getattr(module, "__all__", []))
    return names


def test_the_public_surface_is_within_its_budget() -> None:
    names = public_names()
    total = sum(len(v) for v in names.values())
    assert total <= PUBLIC_BUDGET, {k: len(v) for k, v in names.items()}
    for package, exported in names.items():
        module = importlib.import_module(package)
        missing = [n for n in exported if not hasattr(module, n)]
        assert not missing, (package, missing)


PRIVATE_IMPORT = re.compile(r"\bmcpsim\.\w+\._\w+|from mcpsim\.\w+ import [^\n]*\b_[a-z]\w*")


@pytest.mark.parametrize("folder", ["worlds", "benchmarks", "clients", "examples", "servers", "docs", "tools"])
def test_outside_the_package_only_public_names_are_used(folder: str) -> None:
    """Worlds, clients, benchmarks, examples and docs import what packages' `__init__` export;
    private modules (`_name`) are the packages' own business (tests may reach into them)."""
    hits = []
    for path in sorted((ROOT / folder).rglob("*")):
        if path.suffix not in {".py", ".md"} or "__pycache__" in path.parts or "results" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "import" in line and PRIVATE_IMPORT.search(line) and "__main__" not in line:
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert hits == []
