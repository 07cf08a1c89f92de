"""Logging setup, called only by entry points. Everything goes to stderr: on stdio, stdout is
the MCP channel and a stray byte there corrupts it."""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "INFO", fmt: str = "console") -> None:
    """structlog for mcpsim's own events (world and episode bound from contextvars), stdlib
    logging for the SDK and uvicorn, both to stderr."""
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
    root = logging.getLogger()
    root.handlers = [logging.StreamHandler(sys.stderr)]
    root.handlers[0].setFormatter(logging.Formatter("%(asctime)s [%(levelname)s] %(name)s: %(message)s"))
    root.setLevel(numeric)
    # The SDK logs every tool error at INFO; mcpsim logs what matters itself.
    logging.getLogger("mcp").setLevel(max(numeric, logging.WARNING))
