"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world.toolkit import evaluate_arithmetic
from mcpsim.world import ToolContext, WorldError

from . import world
from .common import iso, new_id
from .inputs import CustomerId, OrderId
from .lookups import get_customer, get_order
from .tables import Ticket
from .views import CalculationResult, TicketView


@world.tool(read_only=True, idempotent=True)
def calculate(
    ctx: ToolContext,
    expression: Annotated[
        str, Field(description="An arithmetic expression, such as '(49.99 * 2) - 10'.", min_length=1, max_length=200)
    ],
) -> CalculationResult:
    """Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is
    rounded to two decimals. Use it for totals, price differences and refunds."""
    return CalculationResult(expression=expression, result=evaluate_arithmetic(expression))


@world.tool()
def transfer_to_human_agent(
    ctx: ToolContext,
    summary: Annotated[
        str,
        Field(
            description="What the customer wants, what was done and why a human is needed.",
            min_length=10,
            max_length=2000,
        ),
    ],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, if authenticated.")] = None,
    order_id: Annotated[OrderId | None, Field(description="The order concerned, if any.")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    this policy and these tools cannot handle; after calling it, tell the customer they are being
    transferred and stop."""
    session = ctx.session
    customer = get_customer(session, customer_id) if customer_id else None
    order = get_order(session, order_id) if order_id else None
    if customer and order and order.customer_id != customer.id:
        raise WorldError(f"Order {order.id} does not belong to customer {customer.id}")
    ticket = Ticket(
        id=new_id(ctx.ids, "ticket"),
        customer_id=customer.id if customer else (order.customer_id if order else None),
        order_id=order.id if order else None,
        summary=summary.strip(),
        status="open",
        created_at=iso(ctx.now),
    )
    session.add(ticket)
    return TicketView(
        ticket_id=ticket.id,
        status=ticket.status,
        customer_id=ticket.customer_id,
        order_id=ticket.order_id,
        summary=ticket.summary,
        created_at=ticket.created_at,
    )
