"""What the commands print: tables for people, JSON for machines."""

from __future__ import annotations

import json
from typing import Any

import click


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def print_table(
    columns: list[str],
    rows: list[list[str]],
    *,
    keep: tuple[str, ...] | list[str] | None = None,
    numbers: tuple[str, ...] = (),
) -> None:
    """A table for people, on stdout, that reads the same at 80 columns and in a pipe: nothing is
    cut to an ellipsis; the `numbers` columns (right-aligned) never wrap, the `keep` columns
    (default: the first, a name or an id) keep up to 32 characters on a line (a longer one folds,
    whole), the others share the rest and wrap (a long word folds). Cells are plain text, never
    Rich markup. Every command printing one has `--json`, its machine-readable form."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    keep = columns[:1] if keep is None else keep
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, name in enumerate(columns):
        if name in numbers:
            widest = max([len(name), *(len(row[i]) for row in rows)])
            table.add_column(name, no_wrap=True, min_width=widest, justify="right")
        elif name in keep:  # a name or an id: whole on one line up to 32 characters, longer ones fold
            widest = max([len(name), *(len(row[i]) for row in rows)])
            table.add_column(name, overflow="fold", min_width=min(widest, 32))
        else:
            table.add_column(name, overflow="fold", ratio=1)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    Console().print(table)
