"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, add_calculator, handoff_summary, open_ticket

from .. import world
from ..inputs import CustomerId, TicketTopic
from ..rules import get_customer
from ..tables import Ticket
from ..views import TicketView

add_calculator(world, example="2500 - 1875.40", purpose="balances, remaining limits and totals")


@world.tool(irreversible=True)
def transfer_to_human_agent(
    ctx: ToolContext,
    topic: Annotated[TicketTopic, Field(description="What the human agent is needed for.")],
    summary: Annotated[str, handoff_summary("customer")],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, once found (verified or not).")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket. Only for what this policy and
    these tools cannot do (a locked verification, a restricted profile, releasing a fraud hold,
    raising a transfer limit, older statements...), or when the customer insists on a human after
    you have tried to help. Then tell the customer they are being transferred and stop."""
    customer = get_customer(ctx.session, customer_id) if customer_id else None
    ticket = open_ticket(ctx, Ticket, summary, customer_id=customer.id if customer else None, topic=topic)
    return TicketView.from_row(ticket)
