"""Every shell and Python code block in README.md and docs/**/*.md runs as written.

The conventions (CONTRIBUTING.md repeats them for writers of docs):

- Blocks tagged `bash`, `sh`, `shell`, `console` (its `$ ` lines) and `python` are commands and
  run here; `json`, `yaml`, `toml`, `text` and untagged blocks are data and are not run.
- `<!-- snippet: skip REASON -->` on the line before a block skips it, with REASON (a real model,
  Docker, a fresh virtual environment...); `<!-- snippet: output -->` marks a block that shows
  output or an excerpt of a file, not a command.
- The docs address a running server as `127.0.0.1:8000` with the token in `$MCPSIM_TOKEN`: this
  test serves `mcpsim serve retail --http --token $MCPSIM_TOKEN` once for all blocks, on a free
  port that replaces 8000 in every block, and exports `MCPSIM_TOKEN` and `MCPSIM_URL`.
- `npx @modelcontextprotocol/inspector@VERSION` runs the Inspector that .ci/run installed
  ($MCPSIM_INSPECTOR); without it those blocks skip.

Each block runs in a scratch folder that links the repository's top-level entries (so
`examples/...` and `worlds/...` resolve as they do from a clone), with the venv's `bin` first on
PATH and one template cache for the whole module.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CLEAN_ENV, free_port, wait_until_healthy

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
COMMAND_LANGUAGES = {"bash", "sh", "shell", "console", "python"}
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*snippet:\s*(?P<kind>skip|output)\b\s*(?P<reason>.*?)\s*-->")
INSPECTOR = re.compile(r"npx (?:--yes |-y )?@modelcontextprotocol/inspector(?:@[\w.-]+)?")
BLOCK_TIMEOUT = 600  # seconds; a block that hangs fails instead of stalling CI


@dataclass(frozen=True)
class Snippet:
    page: Path
    line: int
    lang: str
    code: str
    skip: str | None  # the reason it does not run here

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def snippets() -> Iterator[Snippet]:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            lang = match["lang"].lower()
            if lang not in COMMAND_LANGUAGES:
                continue
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.search(before)
            if marker and marker["kind"] == "output":
                continue
            reason = (marker["reason"] or "no reason given") if marker else None
            line = text.count("\n", 0, match.start()) + 1
            yield Snippet(page, line, lang, match["body"], reason)


ALL = list(snippets())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The server the docs talk to, and the environment of every block."""
    scratch = tmp_path_factory.mktemp("snippets")
    cache = scratch / "templates"
    token = secrets.token_hex(16)
    port = free_port()
    log = scratch / "server.log"
    env = CLEAN_ENV | {
        "MCPSIM_TOKEN": token,
        "MCPSIM_URL": f"http://127.0.0.1:{port}",
        "MCPSIM_CACHE_DIR": str(cache),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    }
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpsim", "serve", "retail", "--http", "--port", str(port), "--token", token],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            wait_until_healthy(env["MCPSIM_URL"], proc, log)
            yield env | {"PORT": str(port), "SCRATCH": str(scratch)}
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def _workdir(base: Path, snippet: Snippet) -> Path:
    work = base / re.sub(r"[^\w.-]", "_", snippet.id)
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git", ".venv", "runs") and not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    return work


def _script(snippet: Snippet, env: dict[str, str], work: Path) -> tuple[list[str], str]:
    code = snippet.code.replace("127.0.0.1:8000", f"127.0.0.1:{env['PORT']}")
    if snippet.lang == "python":  # saved to a file first, as a reader would
        (work / "snippet.py").write_text(code, encoding="utf-8")
        return [sys.executable, "-W", "error", "snippet.py"], code
    if snippet.lang == "console":
        code = "\n".join(line[2:] for line in code.splitlines() if line.startswith("$ "))
    if INSPECTOR.search(code):
        inspector = os.environ.get("MCPSIM_INSPECTOR")
        if not inspector:
            pytest.skip("MCP Inspector not installed (.ci/run sets MCPSIM_INSPECTOR)")
        code = INSPECTOR.sub(inspector, code)
    return ["bash", "-euo", "pipefail", "-c", code], code


@pytest.mark.system
@pytest.mark.parametrize("snippet", ALL, ids=[s.id for s in ALL])
def test_snippet_runs_as_written(snippet: Snippet, site: dict[str, str]) -> None:
    if snippet.skip is not None:
        pytest.skip(f"marked in the docs: {snippet.skip}")
    work = _workdir(Path(site["SCRATCH"]), snippet)
    argv, code = _script(snippet, site, work)
    out = subprocess.run(
        argv,
        cwd=work,
        env={k: v for k, v in site.items() if k not in ("PORT", "SCRATCH")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
    )
    assert out.returncode == 0, (
        f"{snippet.id} exited {out.returncode}\n--- code\n{code}\n--- stdout\n{out.stdout[-3000:]}\n"
        f"--- stderr\n{out.stderr[-3000:]}"
    )


def test_the_markers_are_well_formed() -> None:
    """A marker names its kind (skip with a reason, or output) and stands right before a block."""
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if "snippet:" not in line or not line.lstrip().startswith("<!--"):
                continue
            marker = MARKER.search(line)
            where = f"{page.relative_to(ROOT)}:{n + 1}"
            assert marker, f"{where}: use <!-- snippet: skip REASON --> or <!-- snippet: output -->"
            assert marker["kind"] == "output" or marker["reason"], f"{where}: a skip gives its reason"
            assert n + 1 < len(lines) and re.match(r"(```|~~~)", lines[n + 1]), f"{where}: no code block follows"
