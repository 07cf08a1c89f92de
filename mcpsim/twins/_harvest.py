"""The harvest: real MCP servers from npm and PyPI, each installed into a throwaway environment
(`npm install --prefix DIR`, or a venv of its own), started once in a sandbox
(`mcpsim.twins._probe`) and recorded: its `initialize` answer (name, version) and its tools as it
lists them. Every outcome, listed or failed (at which stage, and why), is written as one JSON file
per server beside an index; a server already done is skipped, and the harvest says so.

    python -m mcpsim.twins harvest benchmarks/harvest/servers.json --out benchmarks/harvest/results

The list (JSON) names each server: `package`, `registry` (`npm`, `pypi`, or `command` for one
already installed), an optional `version` pin, the `bin` to run (default: the package's only
command), `args`, `env` (dummy credentials the server asks for) and `install_env`.
`{workdir}` in `args` and `env` is the server's scratch directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcpsim.twins._probe import ProbeLimits, ProbeResult, network_isolation, probe_server

INSTALL_TIMEOUT_S = 600
OUTPUT_CHARS = 1500  # the tail of an installer's output kept as a failure's reason
DEFAULT_LIMITS = ProbeLimits()
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "NO_COLOR": "1", "CI": "1"}


class HarvestEntry(BaseModel):
    """One server of the harvest's list."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    package: str = Field(pattern=r"^(@[a-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*$")
    registry: Literal["npm", "pypi", "command"]
    version: str | None = Field(default=None, pattern=r"^[\w.+-]+$")
    bin: str | None = Field(default=None, description="the command to run (npm bin, console script)")
    command: list[str] | None = Field(default=None, description="registry `command`: the command line")
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="dummy credentials and settings")
    install_env: dict[str, str] = Field(default_factory=dict)
    note: str = ""

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", f"{self.registry}-{self.package}".lower()).strip("-")


class HarvestList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: list[HarvestEntry]


def _tail(text: str) -> str:
    return text.strip()[-OUTPUT_CHARS:]


def _run(argv: list[str], *, env: dict[str, str], cwd: Path) -> str | None:
    """Run an installer step; the reason it failed, or None."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{Path(argv[0]).name} took more than {INSTALL_TIMEOUT_S}s"
    except OSError as exc:
        return f"cannot run {argv[0]}: {exc.strerror}"
    if done.returncode != 0:
        return f"{Path(argv[0]).name} exited {done.returncode}: {_tail(done.stderr or done.stdout)}"
    return None


def _npm_install(entry: HarvestEntry, env_dir: Path, env: dict[str, str]) -> tuple[list[str], str] | str:
    """(the command that runs the server, its installed version), or why it cannot be installed.
    Install scripts do not run (a package's postinstall is untrusted code with the network)."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    spec = f"{entry.package}@{entry.version}" if entry.version else entry.package
    quiet = ["--loglevel=error", "--no-audit", "--no-fund"]
    argv = [npm, "install", *quiet, "--ignore-scripts", "--prefix", str(env_dir), spec]
    if (problem := _run(argv, env=env, cwd=env_dir)) is not None:
        return problem
    manifest = json.loads((env_dir / "node_modules" / entry.package / "package.json").read_text(encoding="utf-8"))
    bins = manifest.get("bin")
    if isinstance(bins, str):
        bins = {entry.package.rsplit("/", 1)[-1]: bins}
    if not isinstance(bins, dict) or not bins:
        return "the package has no command (no `bin` in its package.json)"
    name = entry.bin or (next(iter(bins)) if len(bins) == 1 else None)
    if name is None or name not in bins:
        return f"give `bin`: the package has the commands {sorted(bins)}"
    return [str(env_dir / "node_modules" / ".bin" / name)], str(manifest.get("version", ""))


def _pypi_install(entry: HarvestEntry, env_dir: Path, env: dict[str, str]) -> tuple[list[str], str] | str:
    venv = env_dir / "venv"
    if (problem := _run([sys.executable, "-m", "venv", str(venv)], env=env, cwd=env_dir)) is not None:
        return problem
    spec = f"{entry.package}=={entry.version}" if entry.version else entry.package
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", spec]
    if (problem := _run(pip, env=env, cwd=env_dir)) is not None:
        return problem
    script = venv / "bin" / (entry.bin or entry.package)
    if not script.exists():
        return f"no command {script.name} in the venv: give `bin`"
    show = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import importlib.metadata as m; print(m.version({entry.package!r}))"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return [str(script)], show.stdout.strip()


def _fill(text: str, workdir: Path) -> str:
    return text.replace("{workdir}", str(workdir))


def harvest_one(entry: HarvestEntry, work: Path, *, limits: ProbeLimits, isolate: list[str]) -> dict[str, Any]:
    """Install, probe and describe one server (the JSON written for it)."""
    env_dir, workdir = work / "env", work / "scratch"
    env_dir.mkdir(parents=True)
    workdir.mkdir()
    # the installers run with this machine's settings (registry, certificates, caches): the
    # registries are their network; the server itself runs sandboxed, with `env` alone
    install_env = {**os.environ, **entry.install_env}
    record: dict[str, Any] = {"package": entry.package, "registry": entry.registry, "asked_version": entry.version}
    installed: tuple[list[str], str] | str
    if entry.registry == "npm":
        installed = _npm_install(entry, env_dir, install_env)
    elif entry.registry == "pypi":
        installed = _pypi_install(entry, env_dir, install_env)
    else:
        command = list(entry.command or [])  # found on this PATH: the server's own has system folders only
        found = shutil.which(command[0]) if command else None
        installed = ([found or command[0], *command[1:]], entry.version or "") if command else "no `command` given"
    if isinstance(installed, str):
        return record | {"outcome": "failed", "stage": "install", "reason": installed}
    command, version = installed
    record["version"] = version
    env = {**BASE_ENV, "HOME": str(workdir), "TMPDIR": str(workdir)} | {
        k: _fill(v, workdir) for k, v in entry.env.items()
    }
    probe = probe_server(
        [*command, *(_fill(a, workdir) for a in entry.args)], env=env, cwd=workdir, limits=limits, isolate=isolate
    )
    return record | _described(probe)


def _described(probe: ProbeResult) -> dict[str, Any]:
    found: dict[str, Any] = {
        "server_info": probe.server_info,
        "protocol_version": (probe.initialize or {}).get("protocolVersion"),
        "network_isolated": probe.isolated,
    }
    if probe.failure is not None:
        stage, _, reason = probe.failure.partition(": ")
        return found | {"outcome": "failed", "stage": stage, "reason": reason, "stderr": probe.stderr}
    return found | {
        "outcome": "listed",
        "initialize": probe.initialize,
        "tool_count": len(probe.tools),
        "tools": probe.tools,
    }


def _index(out: Path) -> None:
    rows = []
    for path in sorted(out.glob("*.json")):
        if path.name == "index.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        row = {k: data.get(k) for k in ("package", "registry", "version", "outcome", "tool_count", "stage", "reason")}
        lines = [line.strip() for line in str(data.get("stderr") or "").splitlines() if line.strip()]
        row["last_stderr_line"] = lines[-1][:300] if lines and data.get("outcome") != "listed" else None
        rows.append({"file": path.name} | {k: v for k, v in row.items() if v is not None})
    listed = [r for r in rows if r["outcome"] == "listed"]
    summary = {
        "servers": len(rows),
        "listed": len(listed),
        "failed": len(rows) - len(listed),
        "tools": sum(r.get("tool_count", 0) for r in listed),
        "results": rows,
    }
    (out / "index.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def harvest(
    entries: list[HarvestEntry],
    out: Path,
    *,
    retry_failed: bool = False,
    limits: ProbeLimits = DEFAULT_LIMITS,
    say: Callable[[str], None] = print,
) -> dict[str, int]:
    """Harvest each server not yet done into `out` (one `SLUG.json` each, and `index.json`).
    A server with a result is skipped (a failed one is tried again with `retry_failed`)."""
    out.mkdir(parents=True, exist_ok=True)
    isolate = network_isolation()
    if not isolate:
        say("warning: no network namespace on this machine: servers run with the machine's network")
    counts = {"harvested": 0, "skipped": 0}
    for entry in entries:
        path = out / f"{entry.slug}.json"
        if path.exists():
            done = json.loads(path.read_text(encoding="utf-8"))
            if done.get("outcome") == "listed" or not retry_failed:
                say(f"skipped {entry.package}: already {done.get('outcome')} ({path.name})")
                counts["skipped"] += 1
                continue
        with tempfile.TemporaryDirectory(prefix=f"harvest-{entry.slug[:40]}-") as scratch:
            record = harvest_one(entry, Path(scratch), limits=limits, isolate=isolate)
        for key in ("reason", "stderr"):  # the scratch directory's name changes from run to run
            if isinstance(record.get(key), str):
                record[key] = record[key].replace(scratch, "{work}")
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(path)
        _index(out)
        counts["harvested"] += 1
        found = f"{record.get('tool_count')} tools" if record["outcome"] == "listed" else record.get("reason", "")
        version = f" {record['version']}" if record.get("version") else ""
        say(f"{record['outcome']} {entry.package}{version}: {str(found)[:200]}")
    _index(out)
    return counts


def load_list(path: Path) -> list[HarvestEntry]:
    return HarvestList.model_validate_json(path.read_text(encoding="utf-8")).servers
