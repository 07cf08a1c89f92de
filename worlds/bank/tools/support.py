"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, add_calculator

from .. import world
from ..inputs import CustomerId, TicketTopic
from ..rules import get_customer, iso
from ..tables import Ticket
from ..views import TicketView

add_calculator(world, example="2500 - 1875.40", purpose="balances, remaining limits and totals")


@world.tool(irreversible=True)
def transfer_to_human_agent(
    ctx: ToolContext,
    topic: Annotated[TicketTopic, Field(description="What the human agent is needed for.")],
    summary: Annotated[
        str,
        Field(
            description="What the customer wants, what was done and why a human is needed.",
            min_length=10,
            max_length=2000,
        ),
    ],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, once found (verified or not).")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket. Only for what this policy and
    these tools cannot do (a locked verification, a restricted profile, releasing a fraud hold,
    raising a transfer limit, older statements...), or when the customer insists on a human after
    you have tried to help. Then tell the customer they are being transferred and stop."""
    customer = get_customer(ctx.session, customer_id) if customer_id else None
    ticket = Ticket(
        id=ctx.new_id("ticket"),
        customer_id=customer.id if customer else None,
        topic=topic,
        summary=summary.strip(),
        status="open",
        created_at=iso(ctx.now),
    )
    ctx.add(ticket)
    return TicketView.from_row(ticket)
