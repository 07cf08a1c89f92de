"""The workspace world: one person's mail (threads, labels, attachments by reference), calendar
(events, invitations, free/busy across time zones, recurring events), contacts and files with
sharing permissions, for tasks that cross apps ("find the thread, schedule the meeting, share
the file with exactly the invitees").

`world` is the entry point (`mcpsim.worlds: workspace = mcpsim_worlds.workspace:world`). The
folder follows the standard anatomy: `tables`, `views`, `rules` (constants, id formats, time and
address rules), `recurrence` (how events repeat), `inputs`, `tools/`, `seed/`, `checks`.
"""

from pathlib import Path

from mcpsim.world import World

from .rules import ID_FORMATS
from .tables import WorkspaceTable

world = World(
    "workspace",
    title="Workspace assistant",
    description="An assistant acting for one person in their company workspace: mail, calendar, contacts and "
    "files. Find threads, schedule meetings around everyone's free/busy and time zones, answer invitations, "
    "and share files with exactly the right people.",
    metadata=WorkspaceTable.metadata,
    policy=Path(__file__).with_name("policy.md"),
    scales={
        "small": {"colleagues": 12, "contacts": 15, "threads": 25, "events": 20, "files": 15},
        "default": {"colleagues": 80, "contacts": 150, "threads": 600, "events": 350, "files": 250},
        "large": {"colleagues": 1500, "contacts": 3000, "threads": 9000, "events": 6000, "files": 5000},
    },
    id_formats=ID_FORMATS,
)

# Importing these registers the tools (in the order agents see them), the seeder and the custom checks.
from . import tools, seed, checks  # noqa: E402, F401, I001

__all__ = ["world"]
