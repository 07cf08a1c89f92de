"""Prices are not the research world's own: a small world of its own declares them, its tool bills
in the call's transaction, a call past the budget is refused and bills nothing, and the episode's
spend is state (a fork keeps it, the state hash covers it)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field
from sqlalchemy.orm import registry
from sqlmodel import Field as Column
from sqlmodel import SQLModel

from mcpsim.engine import Episode
from mcpsim.testing import WorldDriver
from mcpsim.world import SeedContext, ToolContext, billing
from tests.support.toyworld import bare_world


class KioskTable(SQLModel, registry=registry()):
    pass


class Item(KioskTable, table=True):
    id: str = Column(primary_key=True)
    name: str


class Found(BaseModel):
    ids: list[str]


kiosk = bare_world("kiosk", KioskTable.metadata, {"small": {}, "default": {}})
PRICES = billing.declare(kiosk, {"find": billing.Price(call=1, page=2, document=3)}, budget=10, currency="tokens")


@kiosk.seeder
def _seed(ctx: SeedContext) -> None:
    for i in range(4):
        ctx.session.add(Item(id=f"it_{i}", name=f"item {i}"))


@kiosk.tool(read_only=True)
def find(ctx: ToolContext, ids: Annotated[list[str], Field(max_length=4)]) -> Found:
    """Deliver the items `ids` (billed once each per episode)."""
    PRICES.charge(ctx, "find", pages=1, documents=ids)
    return Found(ids=ids)


def _spend(ep: Episode) -> dict[str, int] | None:
    return billing.statement(kiosk, ep.query)


def test_a_world_of_its_own_bills_per_call_page_and_new_document() -> None:
    desk = WorldDriver(kiosk)
    assert _spend(desk.ep) == {"budget": 10, "spent": 0, "left": 10, "calls": 0}
    desk.ok("find", ids=["it_0"])  # 1 + 2 + 3
    desk.ok("find", ids=["it_0"])  # delivered before: 1 + 2
    assert _spend(desk.ep) == {"budget": 10, "spent": 9, "left": 1, "calls": 2}
    before = desk.state_hash()
    refused = desk.fails("find", "Budget exceeded: this find call costs 3 tokens and 1 of the episode's 10", ids=[])
    assert refused.changes == [] and desk.state_hash() == before
    assert _spend(desk.ep)["spent"] == 9


def test_spend_is_episode_state_a_fork_keeps() -> None:
    desk = WorldDriver(kiosk)
    desk.ok("find", ids=["it_1", "it_2"])
    fork = desk.ep.fork(id="fork")
    assert _spend(fork) == _spend(desk.ep) == {"budget": 10, "spent": 9, "left": 1, "calls": 1}


def test_a_world_declares_prices_once_within_bounds() -> None:
    with pytest.raises(ValueError, match="prices declared twice"):
        billing.declare(kiosk, {}, budget=1)
    other = bare_world("kiosk2", SQLModel.metadata)
    with pytest.raises(ValueError, match="a budget is between 0 and"):
        billing.declare(other, {}, budget=-1)
