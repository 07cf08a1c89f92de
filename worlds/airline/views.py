"""What the airline tools return: pydantic models, separate from the tables, and the functions
that build them from rows. Money is in dollars; times are ISO-8601 in UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func
from sqlmodel import Session, col, select

from mcpsim.world import RowView

from .rules import (
    CABINS,
    bookable,
    card_expired,
    certificate_state,
    dollars,
    expected_arrival,
    expected_departure,
    fare_price,
    iso,
    legs_of,
    method_label,
    money,
    passengers_of,
    payments_of,
    seats,
    standard_price,
    trip_status,
)
from .tables import Flight, Payment, PaymentMethod, Reservation, User


class UserRef(RowView):
    id_field = "user_id"

    user_id: str
    first_name: str
    last_name: str
    email: str
    membership: str


class PaymentMethodView(BaseModel):
    payment_method_id: str
    kind: str  # credit_card | gift_card | certificate
    description: str  # "Visa ending in 4242", "Gift card (balance $120.00)", "Travel certificate $150.00"
    brand: str | None = None
    last4: str | None = None
    expires: str | None = None  # cards: MM/YYYY; certificates: YYYY-MM-DD
    expired: bool = False
    balance: float | None = None  # gift cards and certificates
    status: str = "active"  # certificates: active | used | expired
    usable: bool = True


class UserDetails(RowView):
    id_field = "user_id"

    user_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    date_of_birth: str
    membership: str
    frequent_flyer_number: str
    address: str
    member_since: str
    payment_methods: list[PaymentMethodView]
    reservation_count: int
    recent_reservation_ids: list[str]  # newest booking first, at most 20


class AirportView(RowView):
    code: str
    name: str
    city: str
    state: str
    country: str


class AirportList(BaseModel):
    total_count: int
    airports: list[AirportView]


class CabinOffer(BaseModel):
    cabin: str
    seats_available: int
    basic: float | None  # economy only
    standard: float
    flex: float


class ScheduledFlight(RowView):
    """What a flight view and a reservation's leg both show of a flight: its number, day, route,
    schedule and status."""

    flight_number: str
    date: str
    origin: str
    destination: str
    scheduled_departure: str
    scheduled_arrival: str
    status: str  # scheduled | delayed | departed | landed | cancelled
    delay_minutes: int


class FlightView(ScheduledFlight):
    expected_departure: str | None  # scheduled + delay; None if cancelled
    expected_arrival: str | None
    actual_departure: str | None
    actual_arrival: str | None
    aircraft: str


class FlightOffer(FlightView):
    bookable: bool  # not cancelled, not departed, and more than an hour before departure
    cabins: list[CabinOffer]


class FlightStatus(BaseModel):
    as_of: str
    flight: FlightView


class DirectSearch(BaseModel):
    origin: str
    destination: str
    date: str
    as_of: str
    flights: list[FlightOffer]


class Itinerary(BaseModel):
    legs: list[FlightOffer]
    connection_minutes: int
    total_standard: dict[str, float]  # per passenger, by cabin, when every leg has seats in it


class OneStopSearch(BaseModel):
    origin: str
    destination: str
    date: str
    as_of: str
    itineraries: list[Itinerary]


class PassengerView(RowView):
    first_name: str
    last_name: str
    date_of_birth: str


class LegNumber(RowView):
    leg: int


# A flight of a reservation. Its fields come base by base, the last base first: `leg`, then the
# flight's schedule, then the fare (a comment: a docstring would enter the tools' output schemas).
class LegView(ScheduledFlight, LegNumber):
    fare_paid_per_passenger: float


class PaymentView(RowView):
    id_field = "transaction_id"

    transaction_id: str
    payment_method_id: str
    method: str
    kind: str  # charge | refund
    amount: float
    purpose: str
    created_at: str


class ReservationDetails(RowView):
    id_field = "reservation_id"

    reservation_id: str
    user_id: str
    status: str  # confirmed | cancelled
    trip_status: str  # upcoming | in progress | completed | cancelled
    trip_type: str  # one_way | round_trip
    origin: str
    destination: str
    cabin: str
    fare: str
    passenger_count: int
    passengers: list[PassengerView]
    flights: list[LegView]
    checked_bags: int
    free_bags: int
    paid_bags: int
    insurance: bool
    booked_at: str
    cancelled_at: str | None
    cancel_reason: str | None
    payments: list[PaymentView]
    total_charged: float
    total_refunded: float
    as_of: str


class ReservationSummary(RowView):
    id_field = "reservation_id"

    reservation_id: str
    status: str
    trip_status: str
    trip_type: str
    origin: str
    destination: str
    first_departure: str
    cabin: str
    fare: str
    passenger_count: int
    booked_at: str


class ReservationList(BaseModel):
    user_id: str
    total_count: int
    offset: int
    reservations: list[ReservationSummary]


class RefundLine(BaseModel):
    payment_method_id: str
    method: str
    amount: float


class CancellationQuote(BaseModel):
    reservation_id: str
    reason: str
    rule: str  # which refund rule applies, in words
    fare_refund: float
    baggage_refund: float
    other_refund: float  # insurance, change fees: only when everything is refunded
    total_refund: float
    refunds: list[RefundLine]  # to the original credit cards and gift cards
    new_certificate_amount: float  # the share paid by certificate comes back as a new certificate


class CancellationResult(CancellationQuote):
    status: str
    new_certificate_id: str | None


class ChangeResult(BaseModel):
    reservation_id: str
    charged: float  # charged to the payment method
    refunded: float  # refunded to the payment method
    change_fee: float
    payment_method_id: str | None
    reservation: ReservationDetails


class CertificateView(RowView):  # built from the compensation row
    id_field = "compensation_id"

    compensation_id: str
    certificate_id: str
    user_id: str
    reservation_id: str
    flight_number: str
    date: str
    disruption: str
    amount: float
    expires_on: str


class TicketView(RowView):
    id_field = "ticket_id"

    ticket_id: str
    status: str
    user_id: str | None
    reservation_id: str | None
    summary: str
    created_at: str


# -- building views from rows ----------------------------------------------------------------------


def _expected_times(flight: Flight) -> dict[str, Any]:
    dep, arr = expected_departure(flight), expected_arrival(flight)
    return {"expected_departure": iso(dep) if dep else None, "expected_arrival": iso(arr) if arr else None}


def flight_view(flight: Flight) -> FlightView:
    return FlightView.from_row(flight, **_expected_times(flight))


def cabin_offers(flight: Flight) -> list[CabinOffer]:
    offers = []
    for cabin in CABINS:
        if getattr(flight, f"capacity_{cabin}") == 0:
            continue
        standard = standard_price(flight, cabin)
        offers.append(
            CabinOffer(
                cabin=cabin,
                seats_available=seats(flight, cabin),
                basic=dollars(fare_price(standard, cabin, "basic")) if cabin == "economy" else None,
                standard=dollars(standard),
                flex=dollars(fare_price(standard, cabin, "flex")),
            )
        )
    return offers


def flight_offer(flight: Flight, now: datetime) -> FlightOffer:
    return FlightOffer.from_row(
        flight, **_expected_times(flight), bookable=bookable(flight, now), cabins=cabin_offers(flight)
    )


def payment_method_view(method: PaymentMethod, now: datetime) -> PaymentMethodView:
    if method.kind == "credit_card":
        expired = card_expired(method, now)
        return PaymentMethodView(
            payment_method_id=method.id,
            kind=method.kind,
            description=method_label(method),
            brand=method.brand,
            last4=method.last4,
            expires=f"{method.exp_month:02d}/{method.exp_year}",
            expired=expired,
            usable=not expired,
        )
    balance = method.balance_cents or 0
    if method.kind == "gift_card":
        return PaymentMethodView(
            payment_method_id=method.id,
            kind=method.kind,
            description=f"Gift card (balance {money(balance)})",
            balance=dollars(balance),
            usable=balance > 0,
        )
    state = certificate_state(method, now)
    return PaymentMethodView(
        payment_method_id=method.id,
        kind=method.kind,
        description=f"Travel certificate {money(balance)} ({state}, valid until {method.expires_on})",
        expires=method.expires_on,
        expired=state == "expired",
        balance=dollars(balance),
        status=state,
        usable=state == "active",
    )


def payment_view(session: Session, payment: Payment) -> PaymentView:
    method = session.get(PaymentMethod, payment.payment_method_id)
    return PaymentView.from_row(
        payment,
        method=method_label(method) if method else payment.payment_method_id,
        amount=dollars(payment.amount_cents),
    )


def reservation_details(session: Session, reservation: Reservation, now: datetime) -> ReservationDetails:
    legs = legs_of(session, reservation.id)
    payments = payments_of(session, reservation.id)
    return ReservationDetails.from_row(
        reservation,
        trip_status=trip_status(reservation, [f for _, f in legs], now),
        passengers=PassengerView.from_rows(passengers_of(session, reservation.id)),
        flights=[
            LegView.from_row(flight, leg=leg.leg, fare_paid_per_passenger=dollars(leg.price_cents))
            for leg, flight in legs
        ],
        booked_at=reservation.created_at,
        payments=[payment_view(session, p) for p in payments],
        total_charged=dollars(sum(p.amount_cents for p in payments if p.kind == "charge")),
        total_refunded=dollars(sum(p.amount_cents for p in payments if p.kind == "refund")),
        as_of=iso(now),
    )


def reservation_summary(session: Session, reservation: Reservation, now: datetime) -> ReservationSummary:
    flights = [f for _, f in legs_of(session, reservation.id)]
    return ReservationSummary.from_row(
        reservation,
        trip_status=trip_status(reservation, flights, now),
        first_departure=flights[0].scheduled_departure if flights else "",
        booked_at=reservation.created_at,
    )


def user_details(session: Session, user: User, now: datetime) -> UserDetails:
    methods = session.exec(
        select(PaymentMethod)
        .where(PaymentMethod.user_id == user.id)
        .order_by(col(PaymentMethod.kind), col(PaymentMethod.id))
    ).all()
    count = session.exec(select(func.count()).select_from(Reservation).where(Reservation.user_id == user.id)).one()
    recent = session.exec(
        select(Reservation.id)
        .where(Reservation.user_id == user.id)
        .order_by(col(Reservation.created_at).desc(), col(Reservation.id))
        .limit(20)
    ).all()
    return UserDetails.from_row(
        user,
        address=f"{user.address_line1}, {user.address_city}, {user.address_state} {user.address_zip}",
        member_since=user.created_at[:10],
        payment_methods=[payment_method_view(m, now) for m in methods],
        reservation_count=count,
        recent_reservation_ids=list(recent),
    )
