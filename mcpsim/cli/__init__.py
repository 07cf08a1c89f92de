"""The `mcpsim` command line: one module per concern, each adding its commands to `main`."""

from mcpsim.cli import generating, grading, info, recording, running, serving, viewing  # noqa: F401  (register the commands)
from mcpsim.cli._app import main

__all__ = ["main"]
