"""Prices and budgets: what a world's tools cost, billed as state of the episode's database.

Any world may declare prices (`declare(world, {...}, budget=...)`): a price per call, per result
page and per document delivered (a document is billed once per episode, whichever tool delivers
it). A priced tool calls `prices.charge(ctx, tool, pages=..., documents=...)` before it answers;
a charge past the budget raises a `WorldError` naming the cost and what is left, so the call is
refused and rolled back: nothing is billed and nothing changes.

The charges (and an episode's own budget, if a test or a setup sets one: else the declared
budget holds) live in two bookkeeping tables of the episode's database, created with the world's
tables (a DDL hook on its metadata) but outside them: snapshots, forks and
rollbacks carry them like any row, while the state hash, the change log and gold-state grading
see the world's own rows only (a search billed is not a change of the world). The verdict
reports the spend (`statement`) and the rubric's `cost` check grades it.

    from mcpsim.world import billing

    PRICES = billing.declare(world, {"search": billing.Price(page=2), "open": billing.Price(call=1, document=4)},
                             budget=300)
    ...
    PRICES.charge(ctx, "search", pages=1)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import DDL, event

from mcpsim.world import sql
from mcpsim.world._core import ToolContext, World, WorldError

ACCOUNT = "mcpsim_billing_account"  # at most one row: an episode's own budget (else the declared one)
CHARGES = "mcpsim_billing_charges"  # one row per billed call (and per document it delivered)
MAX_BUDGET = 10**9


@dataclass(frozen=True)
class Price:
    """A tool's price: per call, per result page it returns, per document it delivers first."""

    call: int = 0
    page: int = 0
    document: int = 0

    def __post_init__(self) -> None:
        if min(self.call, self.page, self.document) < 0:
            raise ValueError(f"a price cannot be negative: {self}")

    def describe(self, currency: str) -> str:
        parts = [
            f"{amount} {currency} per {what}"
            for amount, what in ((self.call, "call"), (self.page, "result page"), (self.document, "new document"))
            if amount
        ]
        return ", ".join(parts) or "free"


@dataclass(frozen=True)
class Account:
    """An episode's account as its database holds it."""

    budget: int
    spent: int
    calls: int  # billed calls (free calls of priced tools count too)
    currency: str

    @property
    def left(self) -> int:
        return self.budget - self.spent


class PriceList:
    """A world's prices and the budget every episode starts with."""

    def __init__(self, world: World, prices: Mapping[str, Price], budget: int, currency: str) -> None:
        if not 0 <= budget <= MAX_BUDGET:
            raise ValueError(f"world {world.name}: a budget is between 0 and {MAX_BUDGET}, not {budget}")
        self.world_name = world.name
        self.prices = dict(prices)
        self.budget = budget
        self.currency = currency

    def price(self, tool: str) -> Price:
        try:
            return self.prices[tool]
        except KeyError:
            raise KeyError(f"world {self.world_name}: tool {tool!r} has no declared price") from None

    def unpriced(self, tools: Iterable[str]) -> list[str]:
        """The tools among `tools` that have no price (a world's test: every tool is priced)."""
        return sorted(t for t in tools if t not in self.prices)

    def charge(self, ctx: ToolContext, tool: str, *, pages: int = 0, documents: Iterable[str] = ()) -> int:
        """Bill one call of `tool` in the call's transaction: its call price, `pages` result pages
        and each of `documents` not delivered before in this episode. Past the budget, the
        business error says what the call costs and what is left (the call is then refused and
        nothing is billed). Returns the amount billed."""
        price = self.price(tool)
        conn = sql.connection(ctx)
        delivered = set(documents)
        if delivered:
            marks = ", ".join("?" for _ in delivered)
            paid = {
                row[0]
                for row in conn.execute(
                    f'SELECT item FROM "{CHARGES}" WHERE item IN ({marks})', tuple(sorted(delivered))
                )
            }
            delivered -= paid
        amount = price.call + price.page * pages + price.document * len(delivered)
        account = read_account(conn, self)
        if amount > account.left:
            raise WorldError(
                f"Budget exceeded: this {tool} call costs {amount} {self.currency} and {account.left} of the "
                f"episode's {account.budget} {self.currency} are left. Nothing was done or billed; use "
                "get_budget to see the prices."
            )
        rows = [(ctx.call_seq, tool, amount, None)] + [(ctx.call_seq, tool, 0, item) for item in sorted(delivered)]
        conn.executemany(f'INSERT INTO "{CHARGES}" (call_seq, tool, amount, item) VALUES (?, ?, ?, ?)', rows)
        return amount

    def account(self, ctx: ToolContext) -> Account:
        """The episode's account, as the current call sees it."""
        return read_account(sql.connection(ctx), self)

    def paid_for(self, ctx: ToolContext, item: str) -> bool:
        """Whether the document `item` has been delivered (and billed) in this episode."""
        conn = sql.connection(ctx)
        return conn.execute(f'SELECT 1 FROM "{CHARGES}" WHERE item = ? LIMIT 1', (item,)).fetchone() is not None


_lists: WeakKeyDictionary[World, PriceList] = WeakKeyDictionary()


def declare(world: World, prices: Mapping[str, Price], *, budget: int, currency: str = "credits") -> PriceList:
    """Give `world`'s tools prices and its episodes a budget: the two billing tables are created
    with the world's tables. Declare once per world."""
    if world in _lists:
        raise ValueError(f"world {world.name}: prices declared twice")
    listed = PriceList(world, prices, budget, _named(currency))
    for statement in (
        f'CREATE TABLE "{ACCOUNT}" (id INTEGER PRIMARY KEY CHECK (id = 1), budget INTEGER NOT NULL)',
        f'CREATE TABLE "{CHARGES}" (seq INTEGER PRIMARY KEY, call_seq INTEGER NOT NULL, tool TEXT NOT NULL, '
        "amount INTEGER NOT NULL, item TEXT)",
        f'CREATE INDEX "ix_{CHARGES}_item" ON "{CHARGES}" (item)',
    ):
        event.listen(world.metadata, "after_create", DDL(statement))  # type: ignore[no-untyped-call]
    _lists[world] = listed
    return listed


def _named(text: str) -> str:
    if not text.replace(" ", "").isalnum():
        raise ValueError(f"a currency is named in letters and digits, not {text!r}")
    return text


def price_list(world: World) -> PriceList | None:
    """The prices `world` declared, if any."""
    return _lists.get(world)


def read_account(conn: sqlite3.Connection, prices: PriceList) -> Account:
    """The account of the episode whose database `conn` is: its budget (its own, else the
    declared one), what it spent and how many calls were billed."""
    own = conn.execute(f'SELECT budget FROM "{ACCOUNT}" WHERE id = 1').fetchone()
    spent, calls = conn.execute(
        f'SELECT COALESCE(SUM(amount), 0), COUNT(*) FROM "{CHARGES}" WHERE item IS NULL'
    ).fetchone()
    return Account(budget=prices.budget if own is None else own[0], spent=spent, calls=calls, currency=prices.currency)


def statement(world: World, query: Callable[[str], list[dict[str, Any]]]) -> dict[str, int] | None:
    """An episode's spend as the verdict reports it (`budget`, `spent`, `left`, billed `calls`),
    read with a read-only query function (`Episode.query`); None when its world bills nothing."""
    prices = _lists.get(world)
    if prices is None:
        return None
    own = query(f'SELECT budget FROM "{ACCOUNT}" WHERE id = 1')
    (spend,) = query(f'SELECT COALESCE(SUM(amount), 0) AS spent, COUNT(*) AS calls FROM "{CHARGES}" WHERE item IS NULL')
    budget = int(own[0]["budget"]) if own else prices.budget
    spent = int(spend["spent"])
    return {"budget": budget, "spent": spent, "left": budget - spent, "calls": int(spend["calls"])}
