"""Options that several commands declare alike, beside `_app`'s shared option lists."""

from __future__ import annotations

from typing import Any

import click


def port_option(*, default: int, help_text: str, show_default: bool = True) -> Any:
    """`--port`: the TCP port a command listens on, on 127.0.0.1 (0: a free one)."""
    return click.option(
        "--port", type=click.IntRange(0, 65535), default=default, show_default=show_default, help=help_text
    )
