"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError
from mcpsim.world.standard import add_calculator, handoff_summary, open_ticket

from .. import world
from ..inputs import ReservationId, UserId
from ..rules import get_reservation, get_user
from ..tables import Ticket
from ..views import TicketView

add_calculator(world, example="(214 + 189) * 2 + 50", purpose="totals, fare differences and refunds")


@world.tool(irreversible=True)
def transfer_to_human_agents(
    ctx: ToolContext,
    summary: Annotated[str, handoff_summary("user")],
    user_id: Annotated[UserId | None, Field(description="The user, if identified.")] = None,
    reservation_id: Annotated[ReservationId | None, Field(description="The reservation concerned, if any.")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    the policy and these tools cannot handle, or when the user insists on a human after you tried;
    never for a request the policy says to refuse. After calling it, tell the user they are being
    transferred."""
    user = get_user(ctx.session, user_id) if user_id else None
    reservation = get_reservation(ctx.session, reservation_id) if reservation_id else None
    if user and reservation and reservation.user_id != user.id:
        raise WorldError(f"Reservation {reservation.id} does not belong to user {user.id}")
    ticket = open_ticket(
        ctx,
        Ticket,
        summary,
        user_id=user.id if user else (reservation.user_id if reservation else None),
        reservation_id=reservation.id if reservation else None,
    )
    return TicketView.from_row(ticket)
