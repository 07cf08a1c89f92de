"""The `mcpsim` command line: one module per concern, each adding its commands to `main`, imported
when one of its commands runs (`mcpsim.cli._app.COMMANDS`)."""

from mcpsim.cli._app import main

__all__ = [
    "main",
]
