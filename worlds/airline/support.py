"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world.toolkit import evaluate_arithmetic
from mcpsim.world import ToolContext, WorldError

from . import world
from .common import iso, new_id
from .inputs import ReservationId, UserId
from .lookups import get_reservation, get_user
from .tables import Ticket
from .views import CalculationResult, TicketView


@world.tool(read_only=True, idempotent=True)
def calculate(
    ctx: ToolContext,
    expression: Annotated[
        str,
        Field(description="An arithmetic expression, such as '(214 + 189) * 2 + 50'.", min_length=1, max_length=200),
    ],
) -> CalculationResult:
    """Evaluate an arithmetic expression (numbers, parentheses, + - * / %); the result is rounded
    to two decimals. Use it for totals, fare differences and refunds."""
    return CalculationResult(expression=expression, result=evaluate_arithmetic(expression))


@world.tool()
def transfer_to_human_agents(
    ctx: ToolContext,
    summary: Annotated[
        str,
        Field(
            description="What the user wants, what was done and why a human is needed.", min_length=10, max_length=2000
        ),
    ],
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
    ticket = Ticket(
        id=new_id(ctx.ids, "ticket"),
        user_id=user.id if user else (reservation.user_id if reservation else None),
        reservation_id=reservation.id if reservation else None,
        summary=summary.strip(),
        status="open",
        created_at=iso(ctx.now),
    )
    ctx.session.add(ticket)
    return TicketView(
        ticket_id=ticket.id,
        status=ticket.status,
        user_id=ticket.user_id,
        reservation_id=ticket.reservation_id,
        summary=ticket.summary,
        created_at=ticket.created_at,
    )
