"""The tree's rules: imports go one way and private modules stay inside their package
(import-linter's contracts in pyproject.toml), every package is found by a plain install, and the
public API is what `__all__` says."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import mcpsim

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is a test dependency (pip install -e '.[test]')"
    return found


def test_imports_follow_the_layers() -> None:
    out = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout


def test_a_layer_violation_is_caught(tmp_path: Path) -> None:
    """The contract can fail: in a copy of the tree, a world module that imports the server is
    reported (the copy, so that concurrent test runs never see the probe)."""
    shutil.copytree(ROOT / "mcpsim", tmp_path / "mcpsim", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "mcpsim" / "world" / "_layer_probe.py").write_text("import mcpsim.serve._app  # breaks the layering\n")
    out = subprocess.run(
        [_tool("lint-imports"), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "", "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode != 0
    assert "mcpsim.world._layer_probe -> mcpsim.serve._app" in out.stdout, out.stdout[-3000:]


def test_public_api_is_importable() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in mcpsim.__all__:
            assert getattr(mcpsim, name) is not None, name


def test_every_package_is_discovered() -> None:
    """setup.py finds packages, so a new subpackage cannot miss a plain install (the wheel test in
    test_deployment.py installs one and runs it)."""
    from setuptools import find_namespace_packages

    source = {
        p.parent.relative_to(ROOT).as_posix().replace("/", ".")
        for p in (ROOT / "mcpsim").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    found = set(find_namespace_packages(str(ROOT), include=["mcpsim", "mcpsim.*"], exclude=["*.__pycache__"]))
    assert source <= found, source - found
