"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError, add_calculator
from mcpsim.world.standard import handoff_summary, open_ticket

from .. import world
from ..inputs import CustomerId, OrderId
from ..rules import get_order
from ..tables import Customer, Ticket
from ..views import TicketView

add_calculator(world, example="(49.99 * 2) - 10", purpose="totals, price differences and refunds")


@world.tool(irreversible=True)
def transfer_to_human_agent(
    ctx: ToolContext,
    summary: Annotated[str, handoff_summary("customer")],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, if authenticated.")] = None,
    order_id: Annotated[OrderId | None, Field(description="The order concerned, if any.")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    this policy and these tools cannot handle; after calling it, tell the customer they are being
    transferred and stop."""
    customer = ctx.get(Customer, customer_id.strip()) if customer_id else None
    order = get_order(ctx, order_id) if order_id else None
    if customer and order and order.customer_id != customer.id:
        raise WorldError(f"Order {order.id} does not belong to customer {customer.id}")
    ticket = open_ticket(
        ctx,
        Ticket,
        summary,
        customer_id=customer.id if customer else (order.customer_id if order else None),
        order_id=order.id if order else None,
    )
    return TicketView.from_row(ticket)
