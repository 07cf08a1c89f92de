"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from mcpsim.world import Link, add_calculator, add_handoff

from .. import world
from ..inputs import CustomerId, OrderId
from ..rules import get_order
from ..tables import Customer, Ticket
from ..views import TicketView

add_calculator(world, example="(49.99 * 2) - 10", purpose="totals, price differences and refunds")

add_handoff(
    world,
    "transfer_to_human_agent",
    Ticket,
    TicketView,
    who=Link(
        "customer_id",
        CustomerId,
        "The customer, if authenticated.",
        lambda ctx, id: ctx.get(Customer, id.strip()),
        "customer",
    ),
    about=Link("order_id", OrderId, "The order concerned, if any.", get_order, "Order"),
    doc="""Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    this policy and these tools cannot handle; after calling it, tell the customer they are being
    transferred and stop.""",
)
