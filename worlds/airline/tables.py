"""The airline world's tables: an airline's reservations back office.

Money is stored in integer cents; timestamps are ISO-8601 strings in UTC
(`2026-05-15T09:00:00+00:00`), which sort as text; dates are `YYYY-MM-DD`. Every column a tool
looks rows up by is indexed. The tables use a registry of their own so they never share metadata
with another world.
"""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel


class AirlineTable(SQLModel, registry=registry()):
    """Base of every airline table (its own metadata: `AirlineTable.metadata`)."""


class Airport(AirlineTable, table=True):
    __tablename__ = "airports"

    code: str = Field(primary_key=True)  # IATA code, such as "JFK"
    name: str
    city: str = Field(index=True)
    state: str
    country: str = "US"
    latitude: float
    longitude: float


class Flight(AirlineTable, table=True):
    """One scheduled departure of a flight number on one date (UTC). Status: scheduled, delayed
    (not yet departed, `delay_minutes` announced), departed (in the air), landed, cancelled.
    `seats_*` are the seats still for sale per cabin; `price_*` the current standard fare per
    passenger in that cabin (basic and flex fares derive from it, see `rules.fare_price`)."""

    __tablename__ = "flights"
    __table_args__ = (
        UniqueConstraint("flight_number", "date", name="uq_flights_number_date"),
        Index("ix_flights_route_date", "origin", "destination", "date"),
        Index("ix_flights_origin_date", "origin", "date"),
    )

    id: str = Field(primary_key=True)  # MRD123-2026-05-20
    flight_number: str = Field(index=True)
    date: str = Field(index=True)  # departure date (UTC), YYYY-MM-DD
    origin: str = Field(foreign_key="airports.code", index=True)
    destination: str = Field(foreign_key="airports.code", index=True)
    scheduled_departure: str
    scheduled_arrival: str
    aircraft: str
    status: str = Field(index=True)
    delay_minutes: int = 0
    actual_departure: str | None = None
    actual_arrival: str | None = None
    capacity_economy: int
    capacity_premium: int
    capacity_business: int
    seats_economy: int
    seats_premium: int
    seats_business: int
    price_economy_cents: int
    price_premium_cents: int
    price_business_cents: int


class User(AirlineTable, table=True):
    """A frequent-flyer member. Membership tier: regular, silver, gold, platinum."""

    __tablename__ = "users"

    id: str = Field(primary_key=True)  # mia_li_3668
    first_name: str = Field(index=True)
    last_name: str = Field(index=True)
    email: str = Field(unique=True, index=True)  # stored lower-case
    phone: str
    date_of_birth: str  # YYYY-MM-DD
    membership: str = Field(index=True)
    frequent_flyer_number: str = Field(unique=True, index=True)
    address_line1: str
    address_city: str
    address_state: str
    address_zip: str
    created_at: str


class PaymentMethod(AirlineTable, table=True):
    """A credit card, a gift card (balance) or a travel certificate (single use; status active,
    used or expired; `expires_on` a date). An unredeemed gift card has no user."""

    __tablename__ = "payment_methods"

    id: str = Field(primary_key=True)  # credit_card_0000000 | gift_card_0000000 | certificate_0000000
    user_id: str | None = Field(default=None, foreign_key="users.id", index=True)
    kind: str = Field(index=True)  # credit_card | gift_card | certificate
    brand: str | None = None  # credit cards: Visa, Mastercard, American Express, Discover
    last4: str | None = None
    exp_month: int | None = None
    exp_year: int | None = None
    gift_card_code: str | None = Field(default=None, unique=True, index=True)
    balance_cents: int | None = None  # gift cards and certificates
    status: str = "active"  # active | used | expired (certificates); always active otherwise
    expires_on: str | None = None  # certificates, YYYY-MM-DD
    source: str | None = None  # certificates: compensation | refund | goodwill
    created_at: str


class Reservation(AirlineTable, table=True):
    """A booking: one cabin and one fare for every flight and passenger. Status: confirmed or
    cancelled. Fare: basic (economy cabin only), standard, flex. `free_bags` is the allowance for
    all passengers together; `paid_bags` the extra bags already paid for."""

    __tablename__ = "reservations"
    __table_args__ = (Index("ix_reservations_user_created", "user_id", "created_at"),)

    id: str = Field(primary_key=True)  # six characters, such as 4WQ2ZK
    user_id: str = Field(foreign_key="users.id", index=True)
    origin: str = Field(foreign_key="airports.code")
    destination: str = Field(foreign_key="airports.code")  # the turnaround point of a round trip
    trip_type: str  # one_way | round_trip
    cabin: str  # economy | premium | business
    fare: str  # basic | standard | flex
    passenger_count: int
    checked_bags: int
    free_bags: int
    paid_bags: int
    insurance: bool
    status: str = Field(index=True)
    created_at: str
    updated_at: str
    cancelled_at: str | None = None
    cancel_reason: str | None = None


class ReservationFlight(AirlineTable, table=True):
    """One leg of a reservation, in travel order (`leg` 1, 2, ...); id `<reservation>-<leg>`.
    `price_cents` is the fare paid per passenger for this leg."""

    __tablename__ = "reservation_flights"

    id: str = Field(primary_key=True)  # 4WQ2ZK-1
    reservation_id: str = Field(foreign_key="reservations.id", index=True)
    leg: int
    flight_id: str = Field(foreign_key="flights.id", index=True)
    price_cents: int


class FlightChange(AirlineTable, table=True):
    """A leg of a reservation moved from one flight to another (the audit trail of flight
    changes: a traveller moved off a disrupted flight can still be compensated for it)."""

    __tablename__ = "flight_changes"

    id: str = Field(primary_key=True)  # chg_0000000
    reservation_id: str = Field(foreign_key="reservations.id", index=True)
    leg: int
    old_flight_id: str = Field(foreign_key="flights.id", index=True)
    new_flight_id: str | None = Field(default=None, foreign_key="flights.id")  # None: the leg was dropped
    created_at: str


class Passenger(AirlineTable, table=True):
    """A traveller on a reservation; id `<reservation>-P<n>`."""

    __tablename__ = "passengers"

    id: str = Field(primary_key=True)  # 4WQ2ZK-P1
    reservation_id: str = Field(foreign_key="reservations.id", index=True)
    position: int
    first_name: str
    last_name: str
    date_of_birth: str


class Payment(AirlineTable, table=True):
    """A money movement on a reservation: a charge or a refund (always a positive amount).
    Purpose: booking, fare difference, change fee, cabin change, baggage, insurance, cancellation."""

    __tablename__ = "payments"

    id: str = Field(primary_key=True)  # txn_00000000
    reservation_id: str = Field(foreign_key="reservations.id", index=True)
    payment_method_id: str = Field(foreign_key="payment_methods.id", index=True)
    kind: str  # charge | refund
    amount_cents: int
    purpose: str
    created_at: str


class Compensation(AirlineTable, table=True):
    """A travel certificate issued for a delayed or cancelled flight: at most one per
    reservation and flight."""

    __tablename__ = "compensations"
    __table_args__ = (UniqueConstraint("reservation_id", "flight_id", name="uq_compensations_reservation_flight"),)

    id: str = Field(primary_key=True)  # cmp_0000000
    user_id: str = Field(foreign_key="users.id", index=True)
    reservation_id: str = Field(foreign_key="reservations.id", index=True)
    flight_id: str = Field(foreign_key="flights.id", index=True)
    disruption: str  # delayed | cancelled
    amount_cents: int
    certificate_id: str = Field(foreign_key="payment_methods.id")
    created_at: str


class Ticket(AirlineTable, table=True):
    """A hand-off to a human agent."""

    __tablename__ = "tickets"

    id: str = Field(primary_key=True)  # tkt_0000000
    user_id: str | None = Field(default=None, foreign_key="users.id", index=True)
    reservation_id: str | None = Field(default=None, foreign_key="reservations.id", index=True)
    summary: str
    status: str  # open
    created_at: str
