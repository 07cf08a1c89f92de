"""User tools: identifying the user, their profile, payment methods and reservations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlmodel import col, select

from mcpsim.world import ToolContext, WorldError, attach_gift_card, page

from .. import world
from ..inputs import BirthDate, ReservationId, UserId
from ..rules import get_reservation, get_user
from ..tables import PaymentMethod, Reservation, User
from ..views import (
    PaymentMethodView,
    ReservationDetails,
    ReservationList,
    UserDetails,
    UserRef,
    payment_method_view,
    reservation_details,
    reservation_summary,
    user_details,
)


@world.tool(read_only=True, idempotent=True)
def find_user(
    ctx: ToolContext,
    email: Annotated[str, Field(description="The user's email address.", min_length=3, max_length=254)],
    date_of_birth: Annotated[BirthDate, Field(description="The user's date of birth, YYYY-MM-DD.")],
) -> UserRef:
    """Identify a user by email address and date of birth (both must match). Use it to
    authenticate a user who does not give their user id, before looking at or changing anything."""
    user = ctx.session.exec(select(User).where(User.email == email.strip().lower())).first()
    if user is None or user.date_of_birth != date_of_birth:
        raise WorldError("No user matches this email address and date of birth")
    return UserRef.from_row(user)


@world.tool(read_only=True, idempotent=True)
def get_user_details(ctx: ToolContext, user_id: UserId) -> UserDetails:
    """A user's profile: contact details, date of birth, membership tier (regular, silver, gold,
    platinum), frequent-flyer number, payment methods (credit cards with expiry, gift cards with
    balance, travel certificates with value, status and expiry date), how many reservations they
    have and the 20 most recently booked reservation ids. Looking a user up by the id they give
    identifies them."""
    return user_details(ctx.session, get_user(ctx.session, user_id), ctx.now)


@world.tool(read_only=True, idempotent=True)
def list_user_reservations(
    ctx: ToolContext,
    user_id: UserId,
    status: Annotated[
        Literal["confirmed", "cancelled"] | None, Field(description="Only reservations with this status.")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="At most this many reservations (1-50).")] = 10,
    offset: Annotated[int, Field(ge=0, le=100_000, description="Skip this many (for paging).")] = 0,
) -> ReservationList:
    """A user's reservations, most recently booked first, one page at a time: route, trip type,
    first departure, cabin, fare, passenger count and whether the trip is upcoming, in progress,
    completed or cancelled."""
    user = get_user(ctx.session, user_id)
    where = [Reservation.user_id == user.id]
    if status is not None:
        where.append(Reservation.status == status)
    newest_first = [col(Reservation.created_at).desc(), col(Reservation.id)]
    total, rows = page(ctx.session, Reservation, where, newest_first, offset=offset, limit=limit)
    return ReservationList(
        user_id=user.id,
        total_count=total,
        offset=offset,
        reservations=[reservation_summary(ctx.session, r, ctx.now) for r in rows],
    )


@world.tool(read_only=True, idempotent=True)
def get_reservation_details(ctx: ToolContext, reservation_id: ReservationId) -> ReservationDetails:
    """Everything about one reservation: status, trip type, cabin, fare, passengers, flights in
    travel order (with their status, delay and the fare paid per passenger), checked, free and
    paid bags, insurance, when it was booked, every payment and refund, and the current time
    (`as_of`) for the time-based rules."""
    return reservation_details(ctx.session, get_reservation(ctx.session, reservation_id), ctx.now)


@world.tool()
def add_gift_card(
    ctx: ToolContext,
    user_id: UserId,
    gift_card_code: Annotated[
        str,
        Field(
            description="The code printed on the gift card, such as 'GC-1234-5678-9012'.", min_length=4, max_length=40
        ),
    ],
) -> PaymentMethodView:
    """Add a gift card the user holds to their account by its code, so it can pay for bookings and
    changes and receive refunds. A gift card can be added once, to one account."""
    user = get_user(ctx.session, user_id)
    card = attach_gift_card(ctx, PaymentMethod, gift_card_code, user_id=user.id)
    return payment_method_view(card, ctx.now)
