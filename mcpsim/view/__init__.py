"""The web viewer: runs on disk (`mcpsim view`) and a server's live episodes (`/ui` of `mcpsim
serve --http`), with each tool call's row-level diff. `runs` indexes, filters and sums a run
file; `pages` serves the page (package data under `static/`) and its JSON."""

from mcpsim.view._pages import live_viewer, run_viewer
from mcpsim.view._runs import RunError, RunFile

__all__ = [
    "RunError",
    "RunFile",
    "live_viewer",
    "run_viewer",
]
