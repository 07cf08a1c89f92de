"""The rest of the notebook: read one note, rewrite it, delete it (`save_note` and `list_notes`
are in tools.py). A rewritten note cites only documents opened in the episode, as a new one does."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, sql

from . import world
from .tables import Note
from .tools import NoteView, cited_sources

NoteId = Annotated[str, Field(description="A note id, such as note_0042.", min_length=1, max_length=20)]


def _view(note: Note) -> NoteView:
    return NoteView(note_id=note.id, title=note.title, text=note.text, sources=note.sources, created_at=note.created_at)


@world.tool(read_only=True, idempotent=True)
def get_note(ctx: ToolContext, note_id: NoteId) -> NoteView:
    """Read one note of the notebook: its title, text and cited documents. Free."""
    return _view(sql.get(ctx, Note, note_id.strip()))


@world.tool(idempotent=True)
def update_note(
    ctx: ToolContext,
    note_id: NoteId,
    text: Annotated[str, Field(description="The finding's new text.", min_length=3, max_length=2000)],
    sources: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=20)]],
        Field(description="The ids of the opened documents the finding rests on.", min_length=1, max_length=10),
    ],
) -> NoteView:
    """Rewrite a note's text and its cited documents (each must have been opened in this
    episode); its title stays. Free."""
    note = sql.get(ctx, Note, note_id.strip())
    cited = cited_sources(ctx, sources)
    sql.update(ctx, Note, note.id, text=text.strip(), sources=cited)
    return NoteView(note_id=note.id, title=note.title, text=text.strip(), sources=cited, created_at=note.created_at)


@world.tool(destructive=True, idempotent=True)
def delete_note(ctx: ToolContext, note_id: NoteId) -> NoteView:
    """Delete a note from the notebook for good; returns what it held. Free."""
    note = sql.get(ctx, Note, note_id.strip())
    sql.connection(ctx).execute("DELETE FROM notes WHERE id = ?", (note.id,))
    return _view(note)
