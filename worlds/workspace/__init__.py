"""The workspace world: one person's mail (threads, labels, attachments by reference), calendar
(events, invitations, free/busy across time zones, recurring events), contacts and files with
sharing permissions, for tasks that cross apps ("find the thread, schedule the meeting, share
the file with exactly the invitees").

`world` is the entry point (`mcpsim.worlds: workspace = mcpsim_worlds.workspace:world`). The
folder follows the standard anatomy: `world.yaml` (name, scales, id formats), `tables`, `views`,
`rules` (constants, time and address rules), `recurrence` (how events repeat), `inputs`,
`tools/`, `seed/`, `checks`.
"""

from pathlib import Path

from mcpsim.world import World

from .tables import WorkspaceTable

world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=WorkspaceTable.metadata)

# Importing these registers the tools (in the order agents see them), the seeder and the custom checks.
from . import tools, seed, checks  # noqa: E402, F401, I001

__all__ = ["world"]
