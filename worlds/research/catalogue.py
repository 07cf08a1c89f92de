"""The corpus's catalogue tools: search newest first (the later document wins when two disagree),
browse by kind and date, the publications, a document's details before paying to open it, the
documents opened so far, and the standard calculator for figures computed from them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from mcpsim.world import ToolContext, add_calculator, billing, sql

from . import world
from .tables import Document
from .tools import PRICES, DocId, header, pages_of, search_tool

Day = Annotated[str, Field(description="A date, YYYY-MM-DD.", pattern=r"^\d{4}-\d{2}-\d{2}$")]


class Entry(BaseModel):
    doc_id: str
    kind: str
    title: str
    source: str
    published: str


class Listing(BaseModel):
    page: int
    total: int
    documents: list[Entry]
    more: bool
    cost: int


class Source(BaseModel):
    source: str
    documents: int
    first: str
    last: str


class Sources(BaseModel):
    sources: list[Source]
    cost: int


class DocumentInfo(BaseModel):
    doc_id: str
    kind: str
    title: str
    source: str
    published: str
    pages: int
    opened: bool = Field(description="Whether it was opened before (opening it again costs the call only).")
    price_to_open: int


class Opened(BaseModel):
    documents: list[Entry]


search_tool(
    "search_newest",
    newest_first=True,
    description="""Search the corpus like `search`, but list the matching documents newest first (relevance
    breaks ties). Billed per result page.""",
)


@world.tool(read_only=True, idempotent=True)
def browse(
    ctx: ToolContext,
    kind: Literal["profile", "filing", "news", "table", "commentary"],
    published_after: Day = "1900-01-01",
    published_before: Day = "2100-01-01",
    page: Annotated[int, Field(description="The page, from 1.", ge=1, le=50)] = 1,
    limit: Annotated[int, Field(description="Documents per page.", ge=1, le=20)] = 10,
) -> Listing:
    """List documents of one kind published between two dates (inclusive), newest first: ids,
    titles, sources and dates, no text. Billed per page."""
    cost = PRICES.charge(ctx, "browse", pages=1)
    where, params = "kind = ? AND published >= ? AND published <= ?", (kind, published_after, published_before)
    total = int(sql.scalar(ctx, f"SELECT COUNT(*) FROM documents WHERE {where}", params))
    rows = sql.select(ctx, Document, where, params, order="published DESC, id", limit=limit, offset=(page - 1) * limit)
    entries = [Entry(**header(r)) for r in rows]
    return Listing(page=page, total=total, documents=entries, more=page * limit < total, cost=cost)


@world.tool(read_only=True, idempotent=True)
def list_sources(ctx: ToolContext) -> Sources:
    """The publications the corpus draws on: how many documents each has and the dates of its
    first and last. Billed per call."""
    cost = PRICES.charge(ctx, "list_sources")
    rows = sql.tuples(
        ctx, "SELECT source, COUNT(*), MIN(published), MAX(published) FROM documents GROUP BY source ORDER BY source"
    )
    return Sources(sources=[Source(source=r[0], documents=r[1], first=r[2], last=r[3]) for r in rows], cost=cost)


@world.tool(read_only=True, idempotent=True)
def get_document_info(ctx: ToolContext, doc_id: DocId) -> DocumentInfo:
    """A document's details without its text: kind, title, source, publication date, page count,
    whether it was opened before and what opening it costs now. Free."""
    doc = sql.get(ctx, Document, doc_id.strip())
    opened = PRICES.paid_for(ctx, doc.id)
    price = PRICES.price("open")
    return DocumentInfo(
        **header(doc),
        pages=len(pages_of(doc.body)),
        opened=opened,
        price_to_open=price.call + (0 if opened else price.document),
    )


@world.tool(read_only=True, idempotent=True)
def list_opened(
    ctx: ToolContext,
    limit: Annotated[int, Field(description="How many documents to list, first opened first.", ge=1, le=50)] = 20,
) -> Opened:
    """The documents opened in this episode so far, first opened first: the research trail to
    cite from. Free."""
    rows = sql.tuples(
        ctx,
        f'SELECT d.id, d.kind, d.title, d.source, d.published FROM "{billing.CHARGES}" AS c '
        "JOIN documents AS d ON d.id = c.item ORDER BY c.seq LIMIT ?",
        (limit,),
    )
    return Opened(documents=[Entry(doc_id=r[0], kind=r[1], title=r[2], source=r[3], published=r[4]) for r in rows])


add_calculator(world, example="1130.7 - 988.2", purpose="changes, sums and ratios of the figures you found")
