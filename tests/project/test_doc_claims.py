"""Claims the docs make about the command line hold: every option docs/cli.md's command summary lists
is an option of that command, the summary shows what a new user needs to find (`verify
--conversation`, `export --format tokens`), and every paragraph that offers the parquet export
names the extra it needs. (The README's cancel example and every other snippet run in
test_snippets.py; the catalogue's `serve --worlds-dir` line in tests/cli/test_serving_worlds.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from mcpsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CLI_PAGE = ROOT / "docs" / "cli.md"


def _summary() -> dict[str, str]:
    """docs/cli.md's first code block: each `mcpsim CMD ...` entry's syntax with its continuation
    lines (not the description column)."""
    block = CLI_PAGE.read_text().split("```", 2)[1]
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        if line.startswith(" " * 20):
            continue  # the description column, which may name other commands' options
        syntax = re.split(r"\s{2,}", line.strip())[0]
        found = re.match(r"mcpsim (\w[\w-]*)", syntax)
        if found:
            current = found.group(1)
            entries[current] = entries.get(current, "") + " " + syntax
        elif current is not None:
            entries[current] += " " + syntax
    return entries


def _options(command: str) -> set[str]:
    group = main
    assert isinstance(group, click.Group)
    found = group.commands.get(command)
    assert found is not None, f"docs/cli.md lists `mcpsim {command}`, which is no command"
    return {opt for param in found.params for opt in (*param.opts, *param.secondary_opts)}


def test_the_summary_lists_every_command() -> None:
    assert isinstance(main, click.Group)
    hidden = {name for name, cmd in main.commands.items() if cmd.hidden}
    assert set(main.commands) - hidden <= set(_summary()) | _elsewhere(), "a command docs/cli.md omits"


def _elsewhere() -> set[str]:
    """Commands docs/cli.md describes below its summary block (`## mcpsim gen`...)."""
    return set(re.findall(r"^#+ .*?`?mcpsim (\w[\w-]*)", CLI_PAGE.read_text(), re.M))


@pytest.mark.parametrize("command", sorted(_summary()))
def test_every_option_in_the_summary_exists(command: str) -> None:
    listed = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", _summary()[command]))
    assert listed <= _options(command), f"mcpsim {command}: {sorted(listed - _options(command))} in docs/cli.md only"


def test_the_summary_shows_conversation_and_token_exports() -> None:
    summary = _summary()
    assert "--conversation" in summary["verify"]
    formats = re.search(r"--format ([\w|]+)", summary["export"])
    assert formats is not None
    assert {"tokens", "parquet"} <= set(formats.group(1).split("|"))
    export = main.commands["export"]  # type: ignore[attr-defined]
    choices = next(p.type.choices for p in export.params if "--format" in p.opts)
    assert set(formats.group(1).split("|")) == set(choices), "the summary's formats are the command's"


def _paragraphs(text: str) -> list[str]:
    return [block for block in re.split(r"\n\s*\n", text) if block.strip()]


EXTRA = re.compile(r"`parquet` extra|extra `parquet`|mcpsim\[parquet\]|\.\[parquet\]|parquet extra")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_mention_of_the_parquet_export_names_its_extra(page: Path) -> None:
    missing = [
        block.strip()[:120]
        for block in _paragraphs(page.read_text())
        if re.search(r"parquet", block, re.I) and not EXTRA.search(block)
    ]
    assert not missing, f"{page.name}: parquet offered without its extra: {missing}"
