"""Finding rows or failing with a message the agent understands, and turning rows into views."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, literal_column
from sqlmodel import Session, col, select

from mcpsim.world import WorldError

from .common import BOOKABLE_STATUSES, BOOKING_CUTOFF, CABINS, dollars, fare_price, iso, parse
from .ledger import method_label, payment_method_view
from .tables import Flight, Passenger, Payment, PaymentMethod, Reservation, ReservationFlight, User
from .views import (
    CabinOffer,
    FlightOffer,
    FlightView,
    LegView,
    PassengerView,
    PaymentView,
    ReservationDetails,
    ReservationSummary,
    UserDetails,
)

# -- finding -------------------------------------------------------------------------------------


def get_user(session: Session, user_id: str) -> User:
    user = session.get(User, user_id.strip().lower())
    if user is None:
        raise WorldError(f"User {user_id} not found")
    return user


def get_reservation(session: Session, reservation_id: str) -> Reservation:
    reservation = session.get(Reservation, reservation_id.strip().upper())
    if reservation is None:
        raise WorldError(f"Reservation {reservation_id} not found")
    return reservation


def get_flight(session: Session, flight_number: str, date: str) -> Flight:
    number = flight_number.strip().upper()
    flight = session.exec(select(Flight).where(Flight.flight_number == number, Flight.date == date)).first()
    if flight is None:
        exists = session.exec(select(Flight.id).where(Flight.flight_number == number)).first()
        if exists is None:
            raise WorldError(f"There is no flight {number}")
        raise WorldError(f"Flight {number} does not operate on {date}")
    return flight


def get_payment_method_of(session: Session, payment_method_id: str, user_id: str) -> PaymentMethod:
    method = session.get(PaymentMethod, payment_method_id.strip())
    if method is None:
        raise WorldError(f"Payment method {payment_method_id} not found")
    if method.user_id != user_id:
        raise WorldError(f"Payment method {payment_method_id} does not belong to user {user_id}")
    return method


def legs_of(session: Session, reservation_id: str) -> list[tuple[ReservationFlight, Flight]]:
    rows = session.exec(
        select(ReservationFlight, Flight)
        .join(Flight, Flight.id == ReservationFlight.flight_id)
        .where(ReservationFlight.reservation_id == reservation_id)
        .order_by(col(ReservationFlight.leg))
    ).all()
    return [(leg, flight) for leg, flight in rows]


def passengers_of(session: Session, reservation_id: str) -> list[Passenger]:
    return list(
        session.exec(
            select(Passenger).where(Passenger.reservation_id == reservation_id).order_by(col(Passenger.position))
        )
    )


def payments_of(session: Session, reservation_id: str) -> list[Payment]:
    return list(
        session.exec(select(Payment).where(Payment.reservation_id == reservation_id).order_by(literal_column("rowid")))
    )


# -- flight times --------------------------------------------------------------------------------


def expected_departure(flight: Flight) -> datetime | None:
    if flight.status == "cancelled":
        return None
    if flight.actual_departure:
        return parse(flight.actual_departure)
    return parse(flight.scheduled_departure) + timedelta(minutes=flight.delay_minutes)


def expected_arrival(flight: Flight) -> datetime | None:
    if flight.status == "cancelled":
        return None
    if flight.actual_arrival:
        return parse(flight.actual_arrival)
    return parse(flight.scheduled_arrival) + timedelta(minutes=flight.delay_minutes)


def has_departed(flight: Flight, now: datetime) -> bool:
    """Departed or landed, or its (delayed) departure time has passed. A cancelled flight never departs."""
    if flight.status in ("departed", "landed"):
        return True
    if flight.status == "cancelled":
        return False
    departure = expected_departure(flight)
    return departure is not None and departure <= now


def trip_status(reservation: Reservation, flights: list[Flight], now: datetime) -> str:
    if reservation.status == "cancelled":
        return "cancelled"
    flown = [has_departed(f, now) for f in flights]
    if flights and all(flown):
        return "completed"
    if any(flown):
        return "in progress"
    return "upcoming"


# -- views ---------------------------------------------------------------------------------------


def flight_view(flight: Flight) -> FlightView:
    dep, arr = expected_departure(flight), expected_arrival(flight)
    return FlightView(
        flight_number=flight.flight_number,
        date=flight.date,
        origin=flight.origin,
        destination=flight.destination,
        scheduled_departure=flight.scheduled_departure,
        scheduled_arrival=flight.scheduled_arrival,
        status=flight.status,
        delay_minutes=flight.delay_minutes,
        expected_departure=iso(dep) if dep else None,
        expected_arrival=iso(arr) if arr else None,
        actual_departure=flight.actual_departure,
        actual_arrival=flight.actual_arrival,
        aircraft=flight.aircraft,
    )


def seats(flight: Flight, cabin: str) -> int:
    return getattr(flight, f"seats_{cabin}")


def set_seats(flight: Flight, cabin: str, value: int) -> None:
    setattr(flight, f"seats_{cabin}", value)


def standard_price(flight: Flight, cabin: str) -> int:
    return getattr(flight, f"price_{cabin}_cents")


def price_of(flight: Flight, cabin: str, fare: str) -> int:
    return fare_price(standard_price(flight, cabin), cabin, fare)


def bookable(flight: Flight, now: datetime) -> bool:
    departure = expected_departure(flight)
    return flight.status in BOOKABLE_STATUSES and departure is not None and departure - BOOKING_CUTOFF > now


def flight_offer(flight: Flight, now: datetime) -> FlightOffer:
    cabins = []
    for cabin in CABINS:
        if getattr(flight, f"capacity_{cabin}") == 0:
            continue
        standard = standard_price(flight, cabin)
        cabins.append(
            CabinOffer(
                cabin=cabin,
                seats_available=seats(flight, cabin),
                basic=dollars(fare_price(standard, cabin, "basic")) if cabin == "economy" else None,
                standard=dollars(standard),
                flex=dollars(fare_price(standard, cabin, "flex")),
            )
        )
    return FlightOffer(**flight_view(flight).model_dump(), bookable=bookable(flight, now), cabins=cabins)


def payment_view(session: Session, payment: Payment) -> PaymentView:
    method = session.get(PaymentMethod, payment.payment_method_id)
    return PaymentView(
        transaction_id=payment.id,
        payment_method_id=payment.payment_method_id,
        method=method_label(method) if method else payment.payment_method_id,
        kind=payment.kind,
        amount=dollars(payment.amount_cents),
        purpose=payment.purpose,
        created_at=payment.created_at,
    )


def reservation_details(session: Session, reservation: Reservation, now: datetime) -> ReservationDetails:
    legs = legs_of(session, reservation.id)
    payments = payments_of(session, reservation.id)
    return ReservationDetails(
        reservation_id=reservation.id,
        user_id=reservation.user_id,
        status=reservation.status,
        trip_status=trip_status(reservation, [f for _, f in legs], now),
        trip_type=reservation.trip_type,
        origin=reservation.origin,
        destination=reservation.destination,
        cabin=reservation.cabin,
        fare=reservation.fare,
        passenger_count=reservation.passenger_count,
        passengers=[
            PassengerView(first_name=p.first_name, last_name=p.last_name, date_of_birth=p.date_of_birth)
            for p in passengers_of(session, reservation.id)
        ],
        flights=[
            LegView(
                leg=leg.leg,
                flight_number=flight.flight_number,
                date=flight.date,
                origin=flight.origin,
                destination=flight.destination,
                scheduled_departure=flight.scheduled_departure,
                scheduled_arrival=flight.scheduled_arrival,
                status=flight.status,
                delay_minutes=flight.delay_minutes,
                fare_paid_per_passenger=dollars(leg.price_cents),
            )
            for leg, flight in legs
        ],
        checked_bags=reservation.checked_bags,
        free_bags=reservation.free_bags,
        paid_bags=reservation.paid_bags,
        insurance=reservation.insurance,
        booked_at=reservation.created_at,
        cancelled_at=reservation.cancelled_at,
        cancel_reason=reservation.cancel_reason,
        payments=[payment_view(session, p) for p in payments],
        total_charged=dollars(sum(p.amount_cents for p in payments if p.kind == "charge")),
        total_refunded=dollars(sum(p.amount_cents for p in payments if p.kind == "refund")),
        as_of=iso(now),
    )


def reservation_summary(session: Session, reservation: Reservation, now: datetime) -> ReservationSummary:
    legs = legs_of(session, reservation.id)
    flights = [f for _, f in legs]
    return ReservationSummary(
        reservation_id=reservation.id,
        status=reservation.status,
        trip_status=trip_status(reservation, flights, now),
        trip_type=reservation.trip_type,
        origin=reservation.origin,
        destination=reservation.destination,
        first_departure=flights[0].scheduled_departure if flights else "",
        cabin=reservation.cabin,
        fare=reservation.fare,
        passenger_count=reservation.passenger_count,
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
    return UserDetails(
        user_id=user.id,
        first_name=user.first_name,
        last_name=user.last_name,
        email=user.email,
        phone=user.phone,
        date_of_birth=user.date_of_birth,
        membership=user.membership,
        frequent_flyer_number=user.frequent_flyer_number,
        address=f"{user.address_line1}, {user.address_city}, {user.address_state} {user.address_zip}",
        member_since=user.created_at[:10],
        payment_methods=[payment_method_view(m, now) for m in methods],
        reservation_count=count,
        recent_reservation_ids=list(recent),
    )
