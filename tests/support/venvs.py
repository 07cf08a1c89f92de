"""Virtual environments for tests whose packages cannot share mcpsim's (another `mcp`, a trainer
with its own pins): built once per requirement set under a cache directory outside the repository
(MCPSIM_TEST_VENVS, default ~/.cache/mcpsim-test-venvs), reused by later runs and by CI on this
machine. A venv is complete only once its marker file exists; a lock file serialises builders."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
CACHE = Path(os.environ.get("MCPSIM_TEST_VENVS", Path.home() / ".cache" / "mcpsim-test-venvs"))
MARKER = ".mcpsim-complete"
INSTALL_TIMEOUT = 1800  # seconds; a cold pip cache on a loaded machine is slow


def _key(requirements: list[str]) -> str:
    text = json.dumps([sys.version_info[:2], sorted(requirements)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pip(python: Path, *args: str) -> None:
    result = subprocess.run(
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def cached_venv(name: str, requirements: list[str], *, with_client: bool = True) -> Path:
    """The python of a venv holding `requirements` (and the light client from clients/python,
    reinstalled from the working tree every time, so the test runs the current code). Built on
    first use; a venv whose build failed is rebuilt. Skips the test (with pip's reason) when
    PyPI cannot be reached."""
    folder = CACHE / f"{name}-{_key(requirements)}"
    python = folder / "bin" / "python"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / MARKER).exists():
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
            try:
                _pip(python, "--upgrade", "pip", "setuptools>=68", "wheel")
                # the real install, as a user would do it: pip resolves the client's own dependencies
                _pip(python, *([str(CLIENT)] if with_client else []), *requirements)
            except RuntimeError as exc:
                if "Could not find a version" in str(exc) or "NewConnectionError" in str(exc):
                    pytest.skip(f"packages for {name} could not be installed: {str(exc)[-500:]}")
                raise
            (folder / MARKER).write_text("\n".join(requirements))
        installed = folder / ".mcpsim-client-source"
        if with_client and (not installed.exists() or installed.read_text() != _client_source()):
            # the working tree's client, not the one the cached venv was built with; setuptools
            # builds in clients/python/build, which would keep files since deleted from the source
            with open(CACHE / "client-build.lock", "w") as building:  # one build folder for all venvs
                fcntl.flock(building, fcntl.LOCK_EX)
                shutil.rmtree(CLIENT / "build", ignore_errors=True)
                _pip(python, "--no-deps", "--no-build-isolation", "--force-reinstall", str(CLIENT))
            installed.write_text(_client_source())
    return python


def _client_source() -> str:
    """A digest of the light client's source, to reinstall it only when it changed."""
    digest = hashlib.sha256()
    for path in sorted(CLIENT.rglob("*")):
        if path.is_file() and not {"build", "__pycache__"} & set(path.parts) and ".egg-info" not in str(path):
            digest.update(str(path.relative_to(CLIENT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_in(
    python: Path, program: Path | str, *args: str, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `program` (a .py script, run by the venv's python, or the name of one of the venv's
    commands) outside mcpsim's environment (no PYTHONPATH, no MCPSIM_*), the venv's bin first on
    PATH, plus `env`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "MCPSIM_"))}
    base["PATH"] = f"{python.parent}{os.pathsep}{base.get('PATH', '')}"
    argv = [str(python), str(program)] if str(program).endswith(".py") else [str(python.parent / str(program))]
    return subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=base | (env or {}),
        cwd=Path(__file__).parent,
    )
