"""The research world's tools and their prices: `search` (ranked by SQLite FTS5's bm25, with
snippets, paged), `open` (a document, paged), `find_in_page` (text in an opened document), the
notebook (`save_note`, `list_notes`; the rest of it in `notebook.py`), `get_budget` and the
catalogue's tools (`catalogue.py`: newest first, browsing, sources, a document's details). Reads
go through plain SQL on the call's connection (`mcpsim.world.sql`); every priced call is billed in
its own transaction (`mcpsim.world.billing`), so a call refused for the budget changes nothing."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Annotated

from pydantic import BaseModel, Field

from mcpsim.world import ToolContext, WorldError, billing, iso, sql

from . import world
from .tables import FTS, Document, Note

PAGE_CHARS = 700  # a document page, cut at a word boundary
MAX_TERMS = 12

PRICES = billing.declare(
    world,
    {
        "search": billing.Price(page=2),
        "open": billing.Price(call=1, document=4),
        "find_in_page": billing.Price(call=1),
        "search_newest": billing.Price(page=2),
        "browse": billing.Price(page=2),
        "list_sources": billing.Price(call=1),
        "get_document_info": billing.Price(),
        "list_opened": billing.Price(),
        "save_note": billing.Price(),
        "list_notes": billing.Price(),
        "get_note": billing.Price(),
        "update_note": billing.Price(),
        "delete_note": billing.Price(),
        "get_budget": billing.Price(),
        "calculate": billing.Price(),
    },
    budget=400,
)

Query = Annotated[
    str, Field(description="Keywords, such as a company's name and a topic.", min_length=1, max_length=200)
]
DocId = Annotated[str, Field(description="A document id, such as doc_004211.", min_length=1, max_length=20)]


class Hit(BaseModel):
    doc_id: str
    title: str
    source: str
    published: str
    snippet: str


class SearchPage(BaseModel):
    query: str
    page: int
    total: int = Field(description="Documents matching the query in all.")
    results: list[Hit]
    more: bool = Field(description="Whether a later page has more results.")
    cost: int


class DocumentPage(BaseModel):
    doc_id: str
    kind: str
    title: str
    source: str
    published: str
    page: int
    pages: int
    text: str
    cost: int


class Match(BaseModel):
    page: int
    context: str


class Matches(BaseModel):
    doc_id: str
    text: str
    matches: list[Match]
    cost: int


class NoteView(BaseModel):
    note_id: str
    title: str
    text: str
    sources: list[str]
    created_at: str


class Notes(BaseModel):
    notes: list[NoteView]
    total: int


class PriceLine(BaseModel):
    tool: str
    price: str


class Budget(BaseModel):
    budget: int
    spent: int
    left: int
    calls: int = Field(description="Calls of priced tools billed so far (free tools are not billed).")
    currency: str
    prices: list[PriceLine]


def header(doc: Document) -> dict[str, str]:
    """What names a document in every answer about it: its id, kind, title, source and date."""
    return {"doc_id": doc.id, "kind": doc.kind, "title": doc.title, "source": doc.source, "published": doc.published}


def match_expression(query: str) -> str:
    """The agent's words as an FTS5 expression any word of which matches (ranked by bm25): its
    letters and digits only, quoted, so no query syntax of the agent's reaches FTS5."""
    terms = re.findall(r"[^\W_]+", query)[:MAX_TERMS]
    if not terms:
        raise WorldError("The query has no words to search for; give a few keywords")
    return " OR ".join(f'"{term.lower()[:40]}"' for term in terms)


def pages_of(body: str) -> list[str]:
    """A document's pages: at most PAGE_CHARS each, cut at a word boundary."""
    pages: list[str] = []
    rest = body.strip()
    while len(rest) > PAGE_CHARS:
        cut = rest.rfind(" ", 0, PAGE_CHARS)
        cut = cut if cut > PAGE_CHARS // 2 else PAGE_CHARS
        pages.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    pages.append(rest)
    return pages


def search_tool(name: str, *, newest_first: bool, description: str) -> None:
    """Register a search tool `name`: a page of the documents matching a query, ranked by
    relevance or newest first (`ranked_search`)."""

    def search(
        ctx: ToolContext,
        query: Query,
        page: Annotated[int, Field(description="The page of results, from 1.", ge=1, le=20)] = 1,
        limit: Annotated[int, Field(description="Results per page.", ge=1, le=10)] = 5,
    ) -> SearchPage:
        return ranked_search(ctx, name, query, page, limit, newest_first=newest_first)

    search.__name__, search.__doc__ = name, description
    world.tool(read_only=True, idempotent=True, name=name)(search)


search_tool(
    "search",
    newest_first=False,
    description="""Search the document corpus: results ranked by relevance, each with its id, title, source,
    publication date and a snippet. Billed per result page. Snippets are not sources: open a
    document to read it.""",
)


def ranked_search(ctx: ToolContext, tool: str, query: str, page: int, limit: int, *, newest_first: bool) -> SearchPage:
    """One page of the documents matching `query`, billed to `tool`: ranked by bm25 (title
    weighted 4 to 1), or newest first with relevance breaking ties."""
    cost = PRICES.charge(ctx, tool, pages=1)
    expression = match_expression(query)
    total = int(sql.scalar(ctx, f"SELECT COUNT(*) FROM {FTS} WHERE {FTS} MATCH ?", (expression,)))
    order = f"{'d.published DESC, ' if newest_first else ''}bm25({FTS}, 4.0, 1.0), d.id"
    rows = sql.tuples(
        ctx,
        f"SELECT d.id, d.title, d.source, d.published, snippet({FTS}, 1, '', '', ' ... ', 16) "
        f"FROM {FTS} JOIN documents AS d ON d.rowid = {FTS}.rowid WHERE {FTS} MATCH ? "
        f"ORDER BY {order} LIMIT ? OFFSET ?",
        (expression, limit, (page - 1) * limit),
    )
    hits = [Hit(doc_id=r[0], title=r[1], source=r[2], published=r[3], snippet=r[4]) for r in rows]
    return SearchPage(query=query, page=page, total=total, results=hits, more=page * limit < total, cost=cost)


@world.tool(read_only=True, idempotent=True)
def open(
    ctx: ToolContext,
    doc_id: DocId,
    page: Annotated[int, Field(description="The page to read, from 1.", ge=1, le=100)] = 1,
) -> DocumentPage:
    """Open a document by its id and read one page of it, with its title, source, publication date
    and page count. Billed per call, and per document the first time it is opened."""
    doc = sql.get(ctx, Document, doc_id.strip())
    pages = pages_of(doc.body)
    if page > len(pages):
        raise WorldError(f"Document {doc.id} has {len(pages)} page(s); there is no page {page}")
    cost = PRICES.charge(ctx, "open", documents=[doc.id])
    return DocumentPage(**header(doc), page=page, pages=len(pages), text=pages[page - 1], cost=cost)


@world.tool(read_only=True, idempotent=True)
def find_in_page(
    ctx: ToolContext,
    doc_id: DocId,
    text: Annotated[str, Field(description="The text to find (case ignored).", min_length=2, max_length=100)],
) -> Matches:
    """Find text in a document opened before: every page it occurs on, with the words around it
    (at most 10 matches). Billed per call."""
    doc = sql.get(ctx, Document, doc_id.strip())
    if not PRICES.paid_for(ctx, doc.id):
        raise WorldError(f"Document {doc.id} is not open; open it first")
    cost = PRICES.charge(ctx, "find_in_page")
    found: list[Match] = []
    needle = text.lower()
    for number, content in enumerate(pages_of(doc.body), 1):
        start = content.lower().find(needle)
        while start >= 0 and len(found) < 10:
            found.append(Match(page=number, context=content[max(0, start - 80) : start + len(text) + 80]))
            start = content.lower().find(needle, start + len(needle))
    return Matches(doc_id=doc.id, text=text, matches=found, cost=cost)


def cited_sources(ctx: ToolContext, sources: list[str]) -> list[str]:
    """A note's sources, each once, in order: documents opened in this episode, else a business error."""
    cited = list(dict.fromkeys(s.strip() for s in sources))
    for doc_id in cited:
        sql.get(ctx, Document, doc_id)
        if not PRICES.paid_for(ctx, doc_id):
            raise WorldError(f"Document {doc_id} was never opened; a note cites only documents you read")
    return cited


@world.tool()
def save_note(
    ctx: ToolContext,
    title: Annotated[str, Field(description="A short title for the finding.", min_length=3, max_length=120)],
    text: Annotated[str, Field(description="The finding, in a few sentences.", min_length=3, max_length=2000)],
    sources: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=20)]],
        Field(description="The ids of the opened documents the finding rests on.", min_length=1, max_length=10),
    ],
) -> NoteView:
    """Save a finding to the notebook, citing the documents it rests on (each must have been
    opened in this episode). Free."""
    cited = cited_sources(ctx, sources)
    note = {"id": ctx.new_id("note"), "title": title.strip(), "text": text.strip(), "sources": cited}
    sql.insert(ctx, Note, **note, created_at=iso(ctx.now))
    return NoteView(note_id=note["id"], title=note["title"], text=note["text"], sources=cited, created_at=iso(ctx.now))


@world.tool(read_only=True, idempotent=True)
def list_notes(
    ctx: ToolContext,
    limit: Annotated[int, Field(description="How many notes to list, oldest first.", ge=1, le=50)] = 20,
) -> Notes:
    """List the notebook's notes, oldest first: title, text, cited documents. Free."""
    rows = sql.select(ctx, Note, order="rowid", limit=limit)
    total = int(sql.scalar(ctx, "SELECT COUNT(*) FROM notes"))
    views = [
        NoteView(note_id=r.id, title=r.title, text=r.text, sources=r.sources, created_at=r.created_at) for r in rows
    ]
    return Notes(notes=views, total=total)


@world.tool(read_only=True, idempotent=True)
def get_budget(ctx: ToolContext) -> Budget:
    """The episode's budget: what it was, what has been spent and what is left, and the price of
    every tool. Free."""
    account = PRICES.account(ctx)
    lines = [PriceLine(tool=t, price=p.describe(account.currency)) for t, p in sorted(PRICES.prices.items())]
    return Budget(**asdict(account), left=account.left, prices=lines)


from . import catalogue, notebook  # noqa: E402, F401  (registering the rest of the tools, in this order)
