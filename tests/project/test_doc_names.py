"""Every module path (`mcpsim/serve/_app.py`) and dotted name (`mcpsim.serve.ServeConfig`) the docs
mention exists, so a move or a rename that forgets the prose fails here instead of misleading the
next reader. The prose may name private modules (docs/security.md says where each defence lives);
it may not name ones that are gone."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"])
# `mcpsim/…` paths and `mcpsim.…` names not inside a longer word, path or address (`mcpsim_worlds.x`,
# `clients/python/mcpsim_client/`, `https://mcpsim.dev/…` are other things).
PATH = re.compile(r"(?<![\w/.-])mcpsim(?:/[\w.-]+)+/?")
# A module named from its package (`engine/_store.py`), optionally with a name in it (`serve/_mcp.py:
# lean_schema`); `tests/…` and `benchmarks/…` modules too.
PACKAGES = sorted(p.name for p in (ROOT / "mcpsim").iterdir() if (p / "__init__.py").exists())
SHORT = re.compile(rf"(?<![\w/.-])((?:{'|'.join(PACKAGES)}|tests|benchmarks)/[\w/]+\.py)(?::? (\w+)\b)?")
DOTTED = re.compile(r"(?<![\w/.-])mcpsim(?:\.\w+)+")
# A code block that binds a variable `mcpsim` (a trainer adapter: `mcpsim.reward`) names no module.
BINDS_MCPSIM = re.compile(r"^```[^\n]*\n(?:(?!^```).)*^\s*mcpsim\s*=(?:(?!^```).)*^```", re.M | re.S)
# Entry-point groups (`mcpsim.worlds`) are names too, declared in pyproject.toml.
GROUPS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("entry-points", {}))


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _has(owner: object, attribute: str) -> bool:
    """An attribute of a module or class, or a field of a pydantic model or dataclass (pydantic's
    fields and a dataclass's fields without a default are not class attributes)."""
    if hasattr(owner, attribute):
        return True
    fields = getattr(owner, "model_fields", None) or getattr(owner, "__dataclass_fields__", None) or {}
    if attribute in fields:
        return True
    return isinstance(owner, type) and dataclasses.is_dataclass(owner) and attribute in owner.__annotations__


def dotted_name_exists(name: str) -> bool:
    """`mcpsim.a.b.C.d`: the longest importable module prefix, then attributes from there; a class
    or function named in a private module must be defined there. A module itself is found without
    importing it (`mcpsim.__main__` runs the CLI when imported)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if not _module_exists(module):
            continue
        if cut == len(parts):
            return True
        owner: object = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not _has(owner, attribute):
                return False
            owner = getattr(owner, attribute, None)
        defined_in = getattr(owner, "__module__", None)
        private = any(p.startswith("_") for p in parts[1:cut])
        # a private module is named as where a class or function lives, not where it is imported
        return not (private and cut == len(parts) - 1 and str(defined_in).startswith("mcpsim") and defined_in != module)
    return False


def path_exists(path: str, root: Path = ROOT) -> bool:
    return (root / path.rstrip("/.")).exists()


def _short_path_stale(path: str, name: str, root: Path) -> str | None:
    """`path` (from its package, or from the root for tests and benchmarks) if it is missing, or
    `path: name` if `name` is not defined in it (a lower-case word after a bare path is prose)."""
    found = root / path if path.startswith(("tests/", "benchmarks/")) else root / "mcpsim" / path
    if not found.exists():
        return path
    if (
        name
        and (name[0].isupper() or "_" in name)
        and not re.search(rf"^\s*(?:class |def |async def )?{name}\b", found.read_text(), re.M)
    ):
        return f"{path}: {name}"
    return None


def stale_names(text: str, root: Path = ROOT) -> list[str]:
    """The paths and dotted names in `text` that name nothing in the tree."""
    found = [p for p in PATH.findall(text) if not path_exists(p, root)]
    found += [stale for path, name in SHORT.findall(text) if (stale := _short_path_stale(path, name, root))]
    names = DOTTED.findall(BINDS_MCPSIM.sub("", text))
    found += [n for n in names if n not in GROUPS and not dotted_name_exists(n)]
    return sorted(set(found))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_docs_name_only_modules_and_names_that_exist(page: Path) -> None:
    assert stale_names(page.read_text()) == []


def test_a_stale_name_is_caught() -> None:
    text = (
        "The gate is `mcpsim.serve._session_gate._SessionGate` (it was `mcpsim.serve._app._SessionGate`), "
        "in mcpsim/serve/_session_gate.py (not mcpsim/serve/_gate.py); `mcpsim.twins.TwinSpec.tools` "
        "is a field, `mcpsim.twins.TwinSpec.nothing` is not; see https://mcpsim.dev/schemas and "
        "`mcpsim_worlds.retail`; run `python -m mcpsim.twins schema` or `python -m mcpsim.twins._gone`; "
        "worlds register in the `mcpsim.worlds` group; `serve/_mcp.py: lean_schema`, `serve/_mcp.py: "
        "fat_schema`, `serve/mcp.py`, `tests/project/test_doc_names.py`, `tests/gone.py`.\n"
        "```python\nmcpsim = Adapter()\nreward = mcpsim.reward\n```\n```python\nmcpsim.reward\n```\n"
    )
    assert stale_names(text) == [
        "mcpsim.reward",
        "mcpsim.serve._app._SessionGate",
        "mcpsim.twins.TwinSpec.nothing",
        "mcpsim.twins._gone",
        "mcpsim/serve/_gate.py",
        "serve/_mcp.py: fat_schema",
        "serve/mcp.py",
        "tests/gone.py",
    ]
