"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from mcpsim.world import Link, add_calculator, add_handoff

from .. import world
from ..inputs import ReservationId, UserId
from ..rules import get_reservation, get_user
from ..tables import Ticket
from ..views import TicketView

add_calculator(world, example="(214 + 189) * 2 + 50", purpose="totals, fare differences and refunds")

add_handoff(
    world,
    "transfer_to_human_agents",
    Ticket,
    TicketView,
    who=Link("user_id", UserId, "The user, if identified.", lambda ctx, id: get_user(ctx.session, id), "user"),
    about=Link(
        "reservation_id",
        ReservationId,
        "The reservation concerned, if any.",
        lambda ctx, id: get_reservation(ctx.session, id),
        "Reservation",
    ),
    doc="""Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    the policy and these tools cannot handle, or when the user insists on a human after you tried;
    never for a request the policy says to refuse. After calling it, tell the user they are being
    transferred.""",
)
