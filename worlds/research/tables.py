"""The research world's tables: the corpus (documents, and their full-text index, an FTS5 table
kept in step with them at build time) and the notebook. Documents never change in an episode;
the notebook is what the agent writes."""

from __future__ import annotations

from typing import Any

from sqlalchemy import DDL, JSON, event
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

FTS = "documents_fts"


class ResearchTable(SQLModel, registry=registry()):
    """Base of every research table (its own metadata: `ResearchTable.metadata`)."""


class Document(ResearchTable, table=True):
    __tablename__ = "documents"

    id: str = Field(primary_key=True)  # doc_000000
    kind: str = Field(index=True)  # profile | filing | news | table | commentary
    title: str
    source: str  # the publication
    published: str = Field(index=True)  # YYYY-MM-DD
    body: str


class Note(ResearchTable, table=True):
    __tablename__ = "notes"

    id: str = Field(primary_key=True)  # note_0000
    title: str
    text: str
    sources: list[Any] = Field(sa_type=JSON)  # the document ids the note rests on
    created_at: str


# The full-text index over the documents' titles and bodies (external content: it stores no copy),
# created with the tables; the seeder fills it once ('rebuild') after inserting the documents.
event.listen(
    ResearchTable.metadata,
    "after_create",
    DDL(
        f"CREATE VIRTUAL TABLE {FTS} USING fts5(title, body, content='documents', content_rowid='rowid', "
        "tokenize='porter unicode61')"
    ),
)
