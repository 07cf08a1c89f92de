"""Twins of three real third-party MCP servers, measured: each server runs behind `mcpsim record`
while a scripted client session drives it; a twin is inferred from the server and seeded from the
first session's recording; the twin is checked (tools mirrored, input schemas equal, answers valid
against the real output schemas) and replayed against both sessions (fidelity on the recording
that seeded it, and on a held-out session it never saw); tasks are generated for the twin (on the
recorded data, and on synthetic data without recordings) and validated by `mcpsim check`'s audit.

    python -m benchmarks.twins            # writes benchmarks/results/twins.json, prints the table
    python -m benchmarks.twins --check    # fails if docs/twins.md's table is not the results'

The servers (pinned in .ci/run): @modelcontextprotocol/server-memory and server-filesystem from
npm (under .ci/node, or MCPSIM_NODE_BIN), mcp-server-git from PyPI in a venv of its own (under
.ci/venvs/mcp-server-git, or MCPSIM_GIT_SERVER)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "twins.json"
DOC = ROOT / "docs" / "twins.md"
NODE_BIN = Path(os.environ.get("MCPSIM_NODE_BIN", ROOT / ".ci" / "node" / "node_modules" / ".bin"))
GIT_SERVER = Path(
    os.environ.get("MCPSIM_GIT_SERVER", ROOT / ".ci" / "venvs" / "mcp-server-git" / "bin" / "mcp-server-git")
)
PINS = {
    "memory": "@modelcontextprotocol/server-memory@2026.8.31",
    "filesystem": "@modelcontextprotocol/server-filesystem@2026.8.31",
    "git": "mcp-server-git==2026.10.19",
}
TASKS = 10  # tasks asked of each twin
PRIVATE = ("spec", "work", "check", "reports", "inferred", "task_reports")  # measured, not written to the results
MARK_BEGIN, MARK_END = "<!-- twins:figures begin -->", "<!-- twins:figures end -->"

Steps = list[tuple[str, dict[str, Any]]]


@dataclass
class Server:
    """A real server: its command line, how to prepare its state, and two client sessions."""

    name: str
    binary: Path
    args: Callable[[Path], list[str]]
    env: Callable[[Path], dict[str, str]]
    prepare: Callable[[Path], None]
    sessions: Callable[[Path], tuple[Steps, Steps]]

    @property
    def installed(self) -> bool:
        return self.binary.exists()


# -- memory (a knowledge graph) ---------------------------------------------------------------


def _memory_sessions(_: Path) -> tuple[Steps, Steps]:
    ada, engine, babbage = "Ada Lovelace", "Analytical Engine", "Charles Babbage"
    first: Steps = [
        (
            "create_entities",
            {
                "entities": [
                    {"name": ada, "entityType": "person", "observations": ["wrote the first program"]},
                    {"name": engine, "entityType": "machine", "observations": ["designed in 1837"]},
                    {"name": babbage, "entityType": "person", "observations": []},
                ]
            },
        ),
        (
            "create_relations",
            {
                "relations": [
                    {"from": ada, "to": engine, "relationType": "programmed"},
                    {"from": babbage, "to": engine, "relationType": "designed"},
                ]
            },
        ),
        (
            "add_observations",
            {"observations": [{"entityName": ada, "contents": ["born 1815", "wrote the first program"]}]},
        ),
        ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["unknown"]}]}),
        ("read_graph", {}),
        ("search_nodes", {"query": "engine"}),
        ("open_nodes", {"names": [ada, "Nobody"]}),
        ("create_entities", {"entities": [{"name": ada, "entityType": "person", "observations": []}]}),
        ("delete_observations", {"deletions": [{"entityName": ada, "observations": ["born 1815"]}]}),
        ("delete_relations", {"relations": [{"from": babbage, "to": engine, "relationType": "designed"}]}),
        ("delete_entities", {"entityNames": [babbage]}),
        ("read_graph", {}),
    ]
    grace, cobol = "Grace Hopper", "COBOL"
    held_out: Steps = [
        ("create_entities", {"entities": [{"name": grace, "entityType": "person", "observations": ["admiral"]}]}),
        ("create_entities", {"entities": [{"name": cobol, "entityType": "language", "observations": []}]}),
        ("create_relations", {"relations": [{"from": grace, "to": cobol, "relationType": "designed"}]}),
        ("add_observations", {"observations": [{"entityName": cobol, "contents": ["business language"]}]}),
        ("search_nodes", {"query": "hopper"}),
        ("open_nodes", {"names": [cobol]}),
        ("delete_entities", {"entityNames": [cobol]}),
        ("read_graph", {}),
    ]
    return first, held_out


# -- filesystem -------------------------------------------------------------------------------


def _fs_prepare(root: Path) -> None:
    (root / "docs").mkdir(parents=True)
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / "docs" / "readme.md").write_text("# Readme\nhello\n")


def _fs_sessions(root: Path) -> tuple[Steps, Steps]:
    r = str(root)
    first: Steps = [
        ("list_allowed_directories", {}),
        ("list_directory", {"path": r}),
        ("read_text_file", {"path": f"{r}/notes.txt"}),
        ("read_text_file", {"path": f"{r}/missing.txt"}),
        ("write_file", {"path": f"{r}/todo.txt", "content": "buy milk\n"}),
        ("read_text_file", {"path": f"{r}/todo.txt"}),
        ("edit_file", {"path": f"{r}/todo.txt", "edits": [{"oldText": "milk", "newText": "bread"}]}),
        ("read_text_file", {"path": f"{r}/todo.txt"}),
        ("create_directory", {"path": f"{r}/archive"}),
        ("move_file", {"source": f"{r}/todo.txt", "destination": f"{r}/archive/todo.txt"}),
        ("read_text_file", {"path": f"{r}/archive/todo.txt"}),
        ("search_files", {"path": r, "pattern": "todo"}),
        ("read_multiple_files", {"paths": [f"{r}/notes.txt", f"{r}/docs/readme.md"]}),
        ("directory_tree", {"path": r}),
    ]
    held_out: Steps = [
        ("read_text_file", {"path": f"{r}/docs/readme.md"}),
        ("write_file", {"path": f"{r}/plan.txt", "content": "step one\n"}),
        ("read_text_file", {"path": f"{r}/plan.txt"}),
        ("move_file", {"source": f"{r}/plan.txt", "destination": f"{r}/docs/plan.txt"}),
        ("read_text_file", {"path": f"{r}/plan.txt"}),
        ("read_text_file", {"path": f"{r}/docs/plan.txt"}),
        ("edit_file", {"path": f"{r}/notes.txt", "edits": [{"oldText": "first", "newText": "1st"}]}),
        ("read_text_file", {"path": f"{r}/notes.txt"}),
        ("list_directory", {"path": f"{r}/docs"}),
    ]
    return first, held_out


# -- git --------------------------------------------------------------------------------------

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Twin Test",
    "GIT_AUTHOR_EMAIL": "twin@example.com",
    "GIT_COMMITTER_NAME": "Twin Test",
    "GIT_COMMITTER_EMAIL": "twin@example.com",
    "GIT_AUTHOR_DATE": "2026-05-15T09:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-05-15T09:00:00+00:00",
}


def _git_prepare(repo: Path) -> None:
    repo.mkdir(parents=True)
    env = {**os.environ, **GIT_ENV}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "readme.md").write_text("# Project\n")
    git("add", "readme.md")
    git("commit", "-q", "-m", "Start the project")
    (repo / "app.py").write_text("print('hello')\n")
    git("add", "app.py")
    git("commit", "-q", "-m", "Say hello")
    (repo / "notes.txt").write_text("to do\n")  # untracked
    (repo / "readme.md").write_text("# Project\nA twin test.\n")  # changed, unstaged


def _git_sessions(repo: Path) -> tuple[Steps, Steps]:
    r = str(repo)
    first: Steps = [
        ("git_status", {"repo_path": r}),
        ("git_log", {"repo_path": r}),
        ("git_branch", {"repo_path": r, "branch_type": "local"}),
        ("git_diff_unstaged", {"repo_path": r}),
        ("git_show", {"repo_path": r, "revision": "HEAD"}),
        ("git_show", {"repo_path": r, "revision": "no-such-revision"}),
        ("git_create_branch", {"repo_path": r, "branch_name": "feature"}),
        ("git_checkout", {"repo_path": r, "branch_name": "feature"}),
        ("git_add", {"repo_path": r, "files": ["notes.txt"]}),
        ("git_diff_staged", {"repo_path": r}),
        ("git_status", {"repo_path": r}),
        ("git_reset", {"repo_path": r}),
        ("git_branch", {"repo_path": r, "branch_type": "local"}),
    ]
    held_out: Steps = [
        ("git_log", {"repo_path": r, "max_count": 1}),
        ("git_status", {"repo_path": r}),
        ("git_create_branch", {"repo_path": r, "branch_name": "fix"}),
        ("git_branch", {"repo_path": r, "branch_type": "local"}),
        ("git_diff", {"repo_path": r, "target": "HEAD~1"}),
        ("git_show", {"repo_path": r, "revision": "HEAD~1"}),
    ]
    return first, held_out


SERVERS = {
    "memory": Server(
        "memory",
        NODE_BIN / "mcp-server-memory",
        args=lambda _: [],
        env=lambda work: {"MEMORY_FILE_PATH": str(work / "memory.jsonl")},
        prepare=lambda _: None,
        sessions=_memory_sessions,
    ),
    "filesystem": Server(
        "filesystem",
        NODE_BIN / "mcp-server-filesystem",
        args=lambda work: [str(work)],
        env=lambda _: {},
        prepare=_fs_prepare,
        sessions=_fs_sessions,
    ),
    "git": Server(
        "git",
        GIT_SERVER,
        args=lambda _: [],
        env=lambda _: dict(GIT_ENV),
        prepare=_git_prepare,
        sessions=_git_sessions,
    ),
}


# -- driving, recording, measuring ------------------------------------------------------------


def mcpsim_command() -> list[str]:
    return [sys.executable, "-m", "mcpsim"]


async def drive(command: list[str], env: dict[str, str], steps: Steps, *, limit_s: float = 120) -> list[Any]:
    """Run a client session: the SDK's client over stdio, one call per step, answers kept."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env={**env, "PATH": os.environ["PATH"]})
    answers = []
    with anyio.fail_after(limit_s):
        async with Client(params, read_timeout_seconds=limit_s) as client:
            await client.list_tools()
            for tool, args in steps:
                answers.append(await client.call_tool(tool, args))
    return answers


def state_dir(work: Path, server: Server) -> Path:
    """The server's data, at a fixed path under `work` so both sessions name the same files."""
    return work / f"{server.name}-data"


async def record_session(server: Server, work: Path, steps: Steps, out: Path) -> list[Any]:
    """A fresh copy of the server's starting state, one recorded client session through
    `mcpsim record`."""
    data = state_dir(work, server)
    shutil.rmtree(data, ignore_errors=True)
    (work / "memory.jsonl").unlink(missing_ok=True)
    server.prepare(data)
    data.mkdir(parents=True, exist_ok=True)
    real = [str(server.binary), *server.args(data)]
    command = [*mcpsim_command(), "record", "--out", str(out), "--", *real]
    return await drive(command, server.env(work), steps)


async def measure(server: Server, work: Path) -> dict[str, Any]:
    """Record two sessions, build the twin from the server and the first recording, and check it."""
    from mcpsim.twins import check_twin, infer_twin, read_surface, validate_twin_tasks
    from mcpsim.twins.recordings import fidelity, learn, load_recording

    first, held_out = server.sessions(state_dir(work, server))
    await record_session(server, work, first, work / "first")
    await record_session(server, work, held_out, work / "held-out")
    data = state_dir(work, server)
    shutil.rmtree(data, ignore_errors=True)
    server.prepare(data)
    data.mkdir(parents=True, exist_ok=True)
    surface = await read_surface([str(server.binary), *server.args(data)], env=server.env(work))
    recording = load_recording(work / "first")
    spec = learn(infer_twin(surface), [recording])
    check = await check_twin(spec, surface.tools)
    seen = (await fidelity(spec, recording)).to_json()
    unseen = (await fidelity(spec, load_recording(work / "held-out"))).to_json()
    kinds: dict[str, int] = {}
    for tool in spec.tools:
        kinds[tool.operation.kind] = kinds.get(tool.operation.kind, 0) + 1
    inferred = infer_twin(surface)  # without recordings: synthetic data
    task_reports = {  # in a worker thread: the audit runs an event loop of its own
        which: await anyio.to_thread.run_sync(lambda s=twin: validate_twin_tasks(s, count=TASKS))
        for which, twin in (("recorded", spec), ("synthetic", inferred))
    }
    return {
        "server": f"{surface.name} {surface.version}",
        "package": PINS[server.name],
        "tools": check["tools"],
        "mirrored": check["mirrored"],
        "schemas_equal": check["schemas_equal"],
        "answers_ok": check["answers_ok"],
        "simulated": sum(n for k, n in kinds.items() if k != "call"),
        "replayed": kinds.get("call", 0),
        "operations": kinds,
        "fidelity_seen": {k: seen[k] for k in ("calls", "same_outcome", "same_shape", "same_values")},
        "fidelity_held_out": {k: unseen[k] for k in ("calls", "same_outcome", "same_shape", "same_values")},
        "tasks": {
            which: {"asked": TASKS, "validated": len(r.tasks), "kinds": dict(Counter(t.tags[1] for t in r.tasks))}
            for which, r in task_reports.items()
        },
        "spec": spec,
        "inferred": inferred,
        "task_reports": task_reports,
        "work": work,
        "check": check,
        "reports": {"seen": seen, "held_out": unseen},
    }


def _pct(x: float) -> str:
    return f"{round(100 * x)}%"


def table(results: dict[str, dict[str, Any]]) -> str:
    """The docs' table, from the results."""
    lines = [
        "| server | tools mirrored | input schemas equal | valid answers | simulated / replayed tools "
        "| fidelity, seen session (outcome / shape / values) | fidelity, held-out session "
        "| tasks validated (recorded / synthetic data) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        seen, held, tasks = r["fidelity_seen"], r["fidelity_held_out"], r["tasks"]
        lines.append(
            f"| {r['package']} | {r['mirrored']}/{r['tools']} | {r['schemas_equal']}/{r['tools']} "
            f"| {r['answers_ok']}/{r['tools']} | {r['simulated']} / {r['replayed']} "
            f"| {_pct(seen['same_outcome'])} / {_pct(seen['same_shape'])} / {_pct(seen['same_values'])} "
            f"({seen['calls']} calls) "
            f"| {_pct(held['same_outcome'])} / {_pct(held['same_shape'])} / {_pct(held['same_values'])} "
            f"({held['calls']} calls) "
            f"| {tasks['recorded']['validated']} / {tasks['synthetic']['validated']} of {tasks['recorded']['asked']} |"
        )
    return "\n".join(lines)


def doc_table() -> str:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(MARK_BEGIN) + len(MARK_BEGIN), text.index(MARK_END)
    return text[start:end].strip().removeprefix("<!-- snippet: output -->").strip()


def write_doc(results: dict[str, dict[str, Any]]) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(MARK_BEGIN) + len(MARK_BEGIN), text.index(MARK_END)
    DOC.write_text(f"{text[:start]}\n{table(results)}\n{text[end:]}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.twins", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare docs/twins.md with the results")
    parser.add_argument("--work", type=Path, default=None, help="working directory (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.check:
        saved = json.loads(RESULTS.read_text(encoding="utf-8"))
        if doc_table() != table(saved):
            print("docs/twins.md's table differs from benchmarks/results/twins.json; run python -m benchmarks.twins")
            return 1
        return 0
    import tempfile

    from mcpsim import logs

    logs.configure("WARNING")
    missing = [s.name for s in SERVERS.values() if not s.installed]
    if missing:
        print(f"not installed: {', '.join(missing)} (see .ci/run)", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="mcpsim-twins-") as tmp:
        base = args.work or Path(tmp)
        for name, server in SERVERS.items():
            work = base / name
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            found = anyio.run(measure, server, work)
            results[name] = {k: v for k, v in found.items() if k not in PRIVATE}
            print(f"{name}: {json.dumps(results[name])}", file=sys.stderr)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_doc(results)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
