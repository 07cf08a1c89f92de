"""The world SDK's shared tool helpers: paged listings, money netted per payment method, and the
hand-off (summary argument and ticket) every customer-service world has."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

import pytest
from pydantic import TypeAdapter, ValidationError
from sqlalchemy.orm import registry
from sqlmodel import Field, Session, SQLModel, col, create_engine

from mcpsim.world import IdGenerator, ToolContext
from mcpsim.world._paging import page
from mcpsim.world._standard import handoff_summary, open_ticket
from mcpsim.world._toolkit import net_by_method


class HelperTable(SQLModel, registry=registry()):
    pass


class Ticket(HelperTable, table=True):
    id: str = Field(primary_key=True)
    customer_id: str | None = None
    summary: str
    status: str
    created_at: str


class Item(HelperTable, table=True):
    id: str = Field(primary_key=True)
    colour: str
    rank: int


@pytest.fixture
def session() -> Iterator[Session]:
    engine = create_engine("sqlite://")
    HelperTable.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all(Item(id=f"it_{n}", colour="red" if n % 2 else "blue", rank=n) for n in range(7))
        session.commit()
        yield session


def test_page_counts_every_match_and_returns_one_page_in_order(session: Session) -> None:
    red = [col(Item.colour) == "red"]
    total, rows = page(session, Item, red, [col(Item.rank).desc()], offset=1, limit=2)
    assert total == 3  # ranks 1, 3, 5
    assert [row.id for row in rows] == ["it_3", "it_1"]


def test_page_without_conditions_or_offset_starts_at_the_first_row(session: Session) -> None:
    total, rows = page(session, Item, [], [col(Item.rank)], limit=3)
    assert total == 7 and [row.rank for row in rows] == [0, 1, 2]


def test_page_past_the_end_is_empty_but_still_counts(session: Session) -> None:
    assert page(session, Item, [], [col(Item.id)], offset=50, limit=10) == (7, [])


@dataclass
class Entry:
    kind: str
    payment_method_id: str
    amount_cents: int


def test_net_by_method_subtracts_refunds_and_keeps_the_order_of_first_payment() -> None:
    entries = [
        Entry("charge", "pm_card", 5_000),
        Entry("charge", "pm_gift", 2_000),
        Entry("refund", "pm_card", 1_500),
        Entry("refund", "pm_gift", 2_000),
        Entry("refund", "pm_new", 300),  # store credit to a method that never paid
    ]
    assert list(net_by_method(entries).items()) == [("pm_card", 3_500), ("pm_gift", 0), ("pm_new", -300)]
    assert net_by_method([]) == {}


def test_open_ticket_stages_an_open_ticket_with_a_trimmed_summary_and_its_links(session: Session) -> None:
    now = datetime(2026, 5, 15, 9, 0, 30, tzinfo=UTC)
    ids = IdGenerator(0, formats={"ticket": ("tkt_", 7)})
    ctx = ToolContext(session=session, now=now, ids=ids, rng=random.Random(0), call_seq=1)
    ticket = open_ticket(ctx, Ticket, "  Wants a human about a refund.  ", customer_id="cus_1")
    assert ticket.id.startswith("tkt_") and len(ticket.id) == 11
    assert (ticket.summary, ticket.status, ticket.customer_id) == ("Wants a human about a refund.", "open", "cus_1")
    assert ticket.created_at == "2026-05-15T09:00:30+00:00"
    session.flush()
    assert session.get(Ticket, ticket.id) is ticket
    assert open_ticket(ctx, Ticket, "Another one").id != ticket.id


def test_handoff_summary_names_the_caller_and_bounds_the_summary() -> None:
    summary = TypeAdapter(Annotated[str, handoff_summary("user")])
    assert summary.json_schema() == {
        "description": "What the user wants, what was done and why a human is needed.",
        "maxLength": 2000,
        "minLength": 10,
        "type": "string",
    }
    with pytest.raises(ValidationError):
        summary.validate_python("help")
