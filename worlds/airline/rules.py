"""The airline's fixed rules as constants and plain functions, and the lookups the tools share
(its id formats are declared in world.yaml).

Every rule that decides an amount lives here, so the tools, the seed and the tests agree:
fares per cabin and fare type, free baggage allowances, change and cancellation fees, insurance,
compensation amounts. So do the rules about time (when a flight has departed, when sales close)
and about payment methods (when a card has expired, when a certificate can be used).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Literal, get_args

from sqlalchemy import literal_column
from sqlmodel import Session, col, select

from mcpsim.world import IdGenerator, WorldError, dollars, iso, money, to_cents  # noqa: F401  (re-exported)

from .tables import Flight, Passenger, Payment, PaymentMethod, Reservation, ReservationFlight, User

AIRLINE_CODE = "MRD"

Cabin = Literal["economy", "premium", "business"]
Fare = Literal["basic", "standard", "flex"]
CancelReason = Literal["change of plans", "illness", "family emergency", "airline cancelled flight", "other"]
CABINS: tuple[str, ...] = get_args(Cabin)

# -- flights -----------------------------------------------------------------------------------

BOOKABLE_STATUSES = ("scheduled", "delayed")
BOOKING_CUTOFF = timedelta(hours=1)  # sales close one hour before departure
MIN_CONNECTION = timedelta(minutes=60)
MAX_CONNECTION = timedelta(hours=8)  # for one-stop search results
MAX_LEGS = 4
MAX_PASSENGERS = 6

# -- fares -------------------------------------------------------------------------------------

BASIC_DISCOUNT = 0.8  # a basic fare is 80% of the standard economy fare, rounded down to the dollar
FLEX_SURCHARGE_CENTS = {"economy": 6000, "premium": 9000, "business": 15000}  # per passenger and flight


def fare_price(standard_cents: int, cabin: str, fare: str) -> int:
    """The fare per passenger for one flight, from that flight's standard fare in the cabin."""
    if fare == "basic":
        if cabin != "economy":
            raise WorldError("The basic fare exists only in the economy cabin")
        return (int(standard_cents * BASIC_DISCOUNT) // 100) * 100
    if fare == "flex":
        return standard_cents + FLEX_SURCHARGE_CENTS[cabin]
    return standard_cents


# -- baggage -----------------------------------------------------------------------------------

BAG_FEE_CENTS = 5000  # per extra checked bag
MAX_BAGS_PER_PASSENGER = 4
# Free checked bags per passenger, by membership tier and cabin ("basic" = economy on a basic fare).
FREE_BAGS = {
    "regular": {"basic": 0, "economy": 1, "premium": 2, "business": 2},
    "silver": {"basic": 1, "economy": 1, "premium": 2, "business": 3},
    "gold": {"basic": 1, "economy": 2, "premium": 3, "business": 3},
    "platinum": {"basic": 2, "economy": 2, "premium": 3, "business": 4},
}


def free_bags_per_passenger(tier: str, cabin: str, fare: str) -> int:
    return FREE_BAGS[tier]["basic" if fare == "basic" else cabin]


def paid_bags_needed(checked: int, free: int) -> int:
    return max(0, checked - free)


# -- changes, insurance, cancellation ----------------------------------------------------------

CHANGE_FEE_CENTS = 7500  # per passenger, standard fare, regular and silver members
INSURANCE_CENTS = 3000  # per passenger
INSURANCE_WINDOW = timedelta(hours=24)  # insurance can be added up to 24 h after booking
FREE_CANCEL_WINDOW = timedelta(hours=24)  # everything is refunded within 24 h of booking
LATE_CANCEL_WINDOW = timedelta(hours=24)  # standard fares refund nothing within 24 h of departure
INSURED_REASONS = ("illness", "family emergency")
# Standard-fare cancellation fee per passenger, by membership tier.
CANCEL_FEE_CENTS = {"regular": 10000, "silver": 10000, "gold": 5000, "platinum": 0}


def change_fee_per_passenger(fare: str, tier: str) -> int:
    if fare == "standard" and tier in ("regular", "silver"):
        return CHANGE_FEE_CENTS
    return 0


# -- compensation ------------------------------------------------------------------------------

COMPENSATION_CENTS = {"cancelled": 10000, "delayed": 5000}  # per passenger
COMPENSATION_MIN_DELAY = 180  # minutes
CERTIFICATE_VALIDITY_DAYS = 365

# -- ids (their formats are declared in world.yaml) ----------------------------------------------

_RES_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def reservation_code(ids: IdGenerator) -> str:
    """Six characters from a 32-letter alphabet: a seeded bijection of 30 bits."""
    n = ids.number("reservation", 9)
    chars = []
    for _ in range(6):
        n, r = divmod(n, 32)
        chars.append(_RES_ALPHABET[r])
    return "".join(reversed(chars))


def gift_card_code(ids: IdGenerator) -> str:
    digits = ids.new("gift_card_code")
    return f"GC-{digits[:4]}-{digits[4:8]}-{digits[8:]}"


# -- time ----------------------------------------------------------------------------------------


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise WorldError(f"'{text}' is not a valid date (YYYY-MM-DD)") from None


def expected_departure(flight: Flight) -> datetime | None:
    return _expected(flight, flight.actual_departure, flight.scheduled_departure)


def expected_arrival(flight: Flight) -> datetime | None:
    return _expected(flight, flight.actual_arrival, flight.scheduled_arrival)


def _expected(flight: Flight, actual: str | None, scheduled: str) -> datetime | None:
    """When a flight leaves or lands: the actual time once known, else the schedule plus the
    delay; never for a cancelled flight."""
    if flight.status == "cancelled":
        return None
    if actual:
        return parse(actual)
    return parse(scheduled) + timedelta(minutes=flight.delay_minutes)


def has_departed(flight: Flight, now: datetime) -> bool:
    """Departed or landed, or its (delayed) departure time has passed. A cancelled flight never departs."""
    if flight.status in ("departed", "landed"):
        return True
    if flight.status == "cancelled":
        return False
    departure = expected_departure(flight)
    return departure is not None and departure <= now


def bookable(flight: Flight, now: datetime) -> bool:
    departure = expected_departure(flight)
    return flight.status in BOOKABLE_STATUSES and departure is not None and departure - BOOKING_CUTOFF > now


def trip_status(reservation: Reservation, flights: list[Flight], now: datetime) -> str:
    if reservation.status == "cancelled":
        return "cancelled"
    flown = [has_departed(f, now) for f in flights]
    if flights and all(flown):
        return "completed"
    if any(flown):
        return "in progress"
    return "upcoming"


# -- seats and prices of a flight ----------------------------------------------------------------


def seats(flight: Flight, cabin: str) -> int:
    return getattr(flight, f"seats_{cabin}")


def set_seats(flight: Flight, cabin: str, value: int) -> None:
    setattr(flight, f"seats_{cabin}", value)


def standard_price(flight: Flight, cabin: str) -> int:
    return getattr(flight, f"price_{cabin}_cents")


def price_of(flight: Flight, cabin: str, fare: str) -> int:
    return fare_price(standard_price(flight, cabin), cabin, fare)


# -- payment methods -----------------------------------------------------------------------------


def method_label(method: PaymentMethod) -> str:
    if method.kind == "credit_card":
        return f"{method.brand} ending in {method.last4}"
    if method.kind == "gift_card":
        return f"Gift card {method.id}"
    return f"Travel certificate {method.id}"


def card_expired(method: PaymentMethod, now: datetime) -> bool:
    if method.kind != "credit_card" or method.exp_year is None or method.exp_month is None:
        return False
    return (method.exp_year, method.exp_month) < (now.year, now.month)


def certificate_state(method: PaymentMethod, now: datetime) -> str:
    """active, used or expired (an active certificate past its date is expired)."""
    if method.status != "active":
        return method.status
    if method.expires_on and method.expires_on < now.date().isoformat():
        return "expired"
    return "active"


# -- lookups -------------------------------------------------------------------------------------
# The ids an agent types are normalised (user ids are lower-case, reservation codes upper-case);
# the not-found messages name the id as the agent gave it.


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
        .join(Flight, col(Flight.id) == col(ReservationFlight.flight_id))
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
    """In the order they were made."""
    return list(
        session.exec(select(Payment).where(Payment.reservation_id == reservation_id).order_by(literal_column("rowid")))
    )
