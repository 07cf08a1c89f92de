"""Standard tools a world opts into, and what their bodies share, so every world does not write
its own copy.

from mcpsim.world.standard import add_calculator, open_ticket
add_calculator(world, example="(49.99 * 2) - 10", purpose="totals, price differences and refunds")
summary: Annotated[str, handoff_summary("customer")]  # a hand-off tool's argument, and in its body:
ticket = open_ticket(ctx, Ticket, summary, customer_id=customer.id)
"""

# No `from __future__ import annotations`: the argument's annotation names `example`, a local
# that typing.get_type_hints could not resolve from a string.
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo
from sqlmodel import SQLModel

from mcpsim.world.core import ToolContext, World
from mcpsim.world.toolkit import evaluate_arithmetic, iso

TicketT = TypeVar("TicketT", bound=SQLModel)


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
    return Field(
        description=f"What the {who} wants, what was done and why a human is needed.", min_length=10, max_length=2000
    )


def open_ticket(ctx: ToolContext, table: type[TicketT], summary: str, **links: Any) -> TicketT:
    """Hand a conversation to a human agent: a new open row of the world's ticket `table` (columns
    id, summary, status, created_at, and the `links`: who and what it is about), staged in the call.
    Its id comes from the world's "ticket" id namespace."""
    ticket = table(id=ctx.new_id("ticket"), summary=summary.strip(), status="open", created_at=iso(ctx.now), **links)
    ctx.add(ticket)
    return ticket
