"""Logging setup and progress lines, called only by entry points. Everything goes to stderr: on
stdio, stdout is the MCP channel and a stray byte there corrupts it."""

from __future__ import annotations

import logging
import sys
from typing import TextIO


def configure(level: str = "INFO", fmt: str = "console") -> None:
    """structlog for mcpsim's own events (world and episode bound from contextvars), stdlib
    logging for the SDK and uvicorn, both to stderr."""
    configure_stdlib(level)
    configure_structlog(level, fmt)


def configure_stdlib(level: str = "INFO") -> None:
    """The stdlib half of `configure`: cheap, so a stdio server sets it before it answers
    `initialize` and the structlog half (an import of structlog) once it loads its world."""
    numeric = logging.getLevelName(level.upper())
    root = logging.getLogger()
    root.handlers = [logging.StreamHandler(sys.stderr)]
    root.handlers[0].setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(name)s: %(message)s"))
    root.setLevel(numeric)
    # The SDK logs every tool error at INFO; mcpsim logs what matters itself.
    logging.getLogger("mcp").setLevel(max(numeric, logging.WARNING))


def configure_structlog(level: str = "INFO", fmt: str = "console") -> None:
    import structlog

    numeric = logging.getLevelName(level.upper())
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,  # so tests can capture logs after a CLI call reconfigured them
    )


class Progress:
    """Progress lines for people waiting on a slow step (a template build, a server's start-up):
    `mcpsim: STEP...` on stderr, never stdout. By default shown only when stderr is a terminal, so
    pipes, log files and MCP clients reading a stdio server's stderr stay quiet; `enabled` forces
    them on (True) or off (False)."""

    def __init__(self, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled

    def step(self, text: str) -> None:
        if self.enabled:
            print(f"mcpsim: {text}", file=self.stream, flush=True)
