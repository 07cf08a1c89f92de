"""Standard tools a world opts into, and what their bodies share, so every world does not write
its own copy.

from mcpsim.world._standard import add_calculator, add_handoff, open_ticket
add_calculator(world, example="(49.99 * 2) - 10", purpose="totals, price differences and refunds")
add_handoff(world, "transfer_to_human_agent", Ticket, TicketView, who=Link(...), about=Link(...), doc=...)
summary: Annotated[str, handoff_summary("customer")]  # a hand-off tool's own argument, and in its body:
ticket = open_ticket(ctx, Ticket, summary, customer_id=customer.id)
card = attach_gift_card(ctx, PaymentMethod, code, customer_id=customer.id)  # a gift card redeemed by its code
"""

# No `from __future__ import annotations`: the argument's annotation names `example`, a local
# that typing.get_type_hints could not resolve from a string.
import inspect
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo
from sqlmodel import SQLModel, select

from mcpsim.world._core import ToolContext, World, WorldError
from mcpsim.world._toolkit import evaluate_arithmetic, iso
from mcpsim.world._views import RowView

TicketT = TypeVar("TicketT", bound=SQLModel)
CardT = TypeVar("CardT", bound=SQLModel)


class CalculationResult(BaseModel):
    expression: str
    result: float


def add_calculator(world: World, *, example: str, purpose: str, name: str = "calculate") -> None:
    """Register a read-only arithmetic tool (numbers, parentheses, + - * / % **; no names, no
    calls, bounded exponents: see `toolkit.evaluate_arithmetic`). `example` goes into the argument's
    description, `purpose` into the tool's."""

    def calculate(
        ctx: ToolContext,
        expression: Annotated[
            str, Field(description=f"An arithmetic expression, such as '{example}'.", min_length=1, max_length=200)
        ],
    ) -> CalculationResult:
        return CalculationResult(expression=expression, result=evaluate_arithmetic(expression))

    calculate.__doc__ = (
        "Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is\n"
        f"rounded to two decimals. Use it for {purpose}."
    )
    world.tool(read_only=True, idempotent=True, name=name)(calculate)


def handoff_summary(who: str) -> FieldInfo:
    """The `summary` argument of a hand-off tool, for a world whose caller is a `who` ("user",
    "customer"): long enough to brief a human, bounded so that it stays a summary."""
    field: FieldInfo = Field(
        description=f"What the {who} wants, what was done and why a human is needed.", min_length=10, max_length=2000
    )
    return field


def open_ticket(ctx: ToolContext, table: type[TicketT], summary: str, **links: Any) -> TicketT:
    """Hand a conversation to a human agent: a new open row of the world's ticket `table` (columns
    id, summary, status, created_at, and the `links`: who and what it is about), staged in the call.
    Its id comes from the world's "ticket" id namespace."""
    ticket = table(id=ctx.new_id("ticket"), summary=summary.strip(), status="open", created_at=iso(ctx.now), **links)
    ctx.add(ticket)
    return ticket


class Link(NamedTuple):
    """An optional argument of a hand-off tool naming who or what the ticket is about: `argument`
    is both the argument's name and the ticket's column, `type` its annotated type, `find` the row
    for a given id (or WorldError), `noun` how an error names the row ("user", "Reservation")."""

    argument: str
    type: Any
    description: str
    find: Callable[[ToolContext, str], Any]
    noun: str


def add_handoff(
    world: World, name: str, table: type[SQLModel], view: type[RowView], *, who: Link, about: Link, doc: str
) -> None:
    """Register an irreversible hand-off tool `name(summary, <who>=None, <about>=None)` that opens a
    ticket (see `open_ticket`) linked to the caller (`who`) and to what it is about (`about`, whose
    row names its owner in the column `who.argument`): when both are given, `about` must be the
    caller's; with `about` alone, the ticket's caller is its owner. It returns `view` of the ticket;
    `doc` is its description."""

    def handoff(ctx: ToolContext, summary: str, **ids: str | None) -> RowView:
        who_id, about_id = ids.get(who.argument), ids.get(about.argument)
        person = who.find(ctx, who_id) if who_id else None
        thing = about.find(ctx, about_id) if about_id else None
        owner = getattr(thing, who.argument) if thing else None
        if person and thing and owner != person.id:
            raise WorldError(f"{about.noun} {thing.id} does not belong to {who.noun} {person.id}")
        links = {who.argument: person.id if person else owner, about.argument: thing.id if thing else None}
        return view.from_row(open_ticket(ctx, table, summary, **links))

    plain = inspect.Parameter.POSITIONAL_OR_KEYWORD
    handoff.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("ctx", plain),
            inspect.Parameter("summary", plain),
            *(inspect.Parameter(link.argument, plain, default=None) for link in (who, about)),
        ]
    )
    handoff.__annotations__ = {
        "ctx": ToolContext,
        "summary": Annotated[str, handoff_summary(who.noun)],
        **{link.argument: Annotated[link.type | None, Field(description=link.description)] for link in (who, about)},
        "return": view,
    }
    handoff.__doc__ = doc
    handoff.__name__ = name
    world.tool(irreversible=True, name=name)(handoff)


def attach_gift_card(
    ctx: ToolContext,
    table: type[CardT],
    code: str,
    *,
    account: str = "this account",
    taken: str = "added to",
    **owner: str,
) -> CardT:
    """Redeem a gift card by the code printed on it (any case, padded): the row of the world's
    payment-method `table` whose `gift_card_code` it is gets the `owner` (its one column and id) and
    a new `created_at`, staged in the call. WorldError if no card has the code, if the card is
    already the owner's (on `account`), or someone else's (it "has already been `taken` another
    account")."""
    if len(owner) != 1:
        raise TypeError(f"attach_gift_card takes one owner column and id (such as customer_id=...), not {owner}")
    [(column, owner_id)] = owner.items()
    normalized = code.strip().upper()
    card = ctx.session.exec(select(table).where(table.gift_card_code == normalized)).first()  # type: ignore[attr-defined]
    if card is None:
        raise WorldError(f"Gift card code {code} is not valid")
    if getattr(card, column) == owner_id:
        raise WorldError(f"Gift card {normalized} is already on {account} as {card.id}")  # type: ignore[attr-defined]
    if getattr(card, column) is not None:
        raise WorldError(f"Gift card {normalized} has already been {taken} another account")
    setattr(card, column, owner_id)
    card.created_at = iso(ctx.now)
    ctx.add(card)
    return card
