"""A tiny world for testing the core without retail: a ledger of accounts.

It has a read tool, write tools with a business rule, and a tool with a deliberate bug.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field
from sqlalchemy import MetaData
from sqlalchemy.orm import registry
from sqlmodel import Field as Column
from sqlmodel import SQLModel, select

from mcpsim.world import PartialFailure, ToolContext, World, WorldError
from mcpsim.world._seeding import SeedContext


class LedgerTable(SQLModel, registry=registry()):
    pass


class Account(LedgerTable, table=True):
    id: str = Column(primary_key=True)
    owner: str
    balance_cents: int
    opened_at: str


class AccountView(BaseModel):
    id: str
    owner: str
    balance: float


def bare_world(name: str, metadata: MetaData, scales: dict[str, dict[str, int]] | None = None) -> World:
    """A test world of `metadata` without tools, named `name` throughout, at `scales` (None: `default`)."""
    return World(name, title=name, description=name, metadata=metadata, policy="-", scales=scales or {"default": {}})


world = World(
    "ledger",
    title="Ledger",
    description="Accounts and transfers (test world).",
    metadata=LedgerTable.metadata,
    policy="Never let a balance go negative.",
    scales={"small": {"accounts": 3}, "default": {"accounts": 20}},
)


@world.seeder
def seed(ctx: SeedContext) -> None:
    for _ in range(ctx.params["accounts"]):
        ctx.session.add(
            Account(
                id=ctx.ids.code("account", "acc_", 6),
                owner=ctx.faker.name(),
                balance_cents=ctx.rng.randrange(1_000, 100_000),
                opened_at=ctx.now.isoformat(),
            )
        )


def _account(ctx: ToolContext, account_id: str) -> Account:
    account = ctx.session.get(Account, account_id)
    if account is None:
        raise WorldError(f"Account {account_id} not found")
    return account


@world.tool(read_only=True, idempotent=True)
def get_account(ctx: ToolContext, account_id: Annotated[str, Field(max_length=64)]) -> AccountView:
    """Look up an account by id."""
    a = _account(ctx, account_id)
    return AccountView(id=a.id, owner=a.owner, balance=a.balance_cents / 100)


@world.tool(read_only=True)
def list_accounts(ctx: ToolContext) -> list[AccountView]:
    """List all accounts."""
    rows = ctx.session.exec(select(Account).order_by(Account.id)).all()
    return [AccountView(id=a.id, owner=a.owner, balance=a.balance_cents / 100) for a in rows]


@world.tool()
def transfer(
    ctx: ToolContext,
    from_account: Annotated[str, Field(max_length=64)],
    to_account: Annotated[str, Field(max_length=64)],
    amount: Annotated[float, Field(gt=0, description="Dollars")],
) -> list[AccountView]:
    """Move money between accounts. The payer's balance may not go negative."""
    if from_account == to_account:
        raise WorldError("An account cannot transfer money to itself")
    src, dst = _account(ctx, from_account), _account(ctx, to_account)
    cents = round(amount * 100)
    dst.balance_cents += cents  # written first on purpose: the rollback must undo it
    ctx.session.add(dst)
    ctx.session.flush()
    if src.balance_cents < cents:
        raise WorldError(f"Insufficient funds: {src.id} holds {src.balance_cents / 100:.2f}")
    src.balance_cents -= cents
    ctx.session.add(src)
    return [get_account(ctx, src.id), get_account(ctx, dst.id)]


@world.tool()
def open_account(ctx: ToolContext, owner: Annotated[str, Field(min_length=1, max_length=100)]) -> AccountView:
    """Open a new empty account."""
    a = Account(id=ctx.ids.code("account", "acc_", 6), owner=owner, balance_cents=0, opened_at=ctx.now.isoformat())
    ctx.session.add(a)
    return AccountView(id=a.id, owner=a.owner, balance=0)


@world.tool(destructive=True)
def close_account_buggy(ctx: ToolContext, account_id: str) -> str:
    """Close an account (has a deliberate bug after deleting)."""
    ctx.session.delete(_account(ctx, account_id))
    ctx.session.flush()
    raise KeyError("deliberate bug")


@world.check("balances_conserved")
def balances_conserved(ctx, total_cents: int) -> tuple[bool, str]:
    """Money moved, but none was created or destroyed."""
    (row,) = ctx.episode.query("SELECT sum(balance_cents) AS s FROM account")
    return row["s"] == total_cents, f"total is {row['s']} cents, expected {total_cents}"


@world.check("slow")
def slow(ctx, seconds: float) -> bool:
    import time

    time.sleep(seconds)
    return True


@world.check("heavy")
def heavy(ctx, rows: int) -> bool:
    """A check that makes SQLite count to `rows` (a deterministic amount of work)."""
    (row,) = ctx.episode.query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT count(*) AS c FROM n",
        (rows,),
    )
    return row["c"] == rows


@world.check("broken")
def broken(ctx) -> bool:
    raise ZeroDivisionError("a bug in a custom check")


class Wire(LedgerTable, table=True):
    id: str = Column(primary_key=True)
    from_account: str
    to_account: str
    amount_cents: int
    status: str  # settled | pending


@world.tool(partial_failures=True)
def wire(
    ctx: ToolContext,
    from_account: Annotated[str, Field(max_length=64)],
    to_account: Annotated[str, Field(max_length=64)],
    amount: Annotated[float, Field(gt=0)],
) -> str:
    """Wire money to another account. Under a partial failure the payer is debited and the wire
    stays pending (the payee is not credited)."""
    src, dst = _account(ctx, from_account), _account(ctx, to_account)
    cents = round(amount * 100)
    if src.balance_cents < cents:
        raise WorldError("Insufficient funds")
    src.balance_cents -= cents
    wire_id = ctx.ids.code("wire", "w_", 6)
    if ctx.fault == "partial":
        ctx.session.add(Wire(id=wire_id, from_account=src.id, to_account=dst.id, amount_cents=cents, status="pending"))
        raise PartialFailure(f"The payee's bank did not answer: wire {wire_id} is pending; {src.id} was debited.")
    dst.balance_cents += cents
    ctx.session.add(Wire(id=wire_id, from_account=src.id, to_account=dst.id, amount_cents=cents, status="settled"))
    return wire_id


@world.edge_data
def edge_cases(ctx: SeedContext) -> None:
    first = ctx.session.exec(select(Account).order_by(Account.id)).first()
    first.owner = "Zoë Ñandú-Łukasiewicz 北京 " + "x" * 300
    ctx.session.add(first)
