"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world.toolkit import evaluate_arithmetic
from mcpsim.world import ToolContext

from . import world
from .common import TicketTopic, iso, new_id
from .inputs import CustomerId
from .lookups import get_customer
from .tables import Ticket
from .views import CalculationResult, TicketView


@world.tool(read_only=True, idempotent=True)
def calculate(
    ctx: ToolContext,
    expression: Annotated[
        str, Field(description="An arithmetic expression, such as '2500 - 1875.40'.", min_length=1, max_length=200)
    ],
) -> CalculationResult:
    """Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is
    rounded to two decimals. Use it for balances, remaining limits and totals."""
    return CalculationResult(expression=expression, result=evaluate_arithmetic(expression))


@world.tool()
def transfer_to_human_agent(
    ctx: ToolContext,
    topic: Annotated[TicketTopic, Field(description="What the human agent is needed for.")],
    summary: Annotated[
        str, Field(description="What the customer wants, what was done and why a human is needed.",
                   min_length=10, max_length=2000),
    ],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, once found (verified or not).")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket. Only for what this policy and
    these tools cannot do (a locked verification, a restricted profile, releasing a fraud hold,
    raising a transfer limit, older statements...), or when the customer insists on a human after
    you have tried to help. Then tell the customer they are being transferred and stop."""
    customer = get_customer(ctx.session, customer_id) if customer_id else None
    ticket = Ticket(
        id=new_id(ctx.ids, "ticket"), customer_id=customer.id if customer else None, topic=topic,
        summary=summary.strip(), status="open", created_at=iso(ctx.now),
    )
    ctx.session.add(ticket)
    return TicketView(ticket_id=ticket.id, customer_id=ticket.customer_id, topic=ticket.topic,
                      summary=ticket.summary, status=ticket.status, created_at=ticket.created_at)
