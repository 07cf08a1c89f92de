"""What the airline tools return: pydantic models, separate from the tables. Money is in dollars;
times are ISO-8601 in UTC."""

from __future__ import annotations

from pydantic import BaseModel


class UserRef(BaseModel):
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


class UserDetails(BaseModel):
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


class AirportView(BaseModel):
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


class FlightView(BaseModel):
    flight_number: str
    date: str
    origin: str
    destination: str
    scheduled_departure: str
    scheduled_arrival: str
    status: str  # scheduled | delayed | departed | landed | cancelled
    delay_minutes: int
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


class PassengerView(BaseModel):
    first_name: str
    last_name: str
    date_of_birth: str


class LegView(BaseModel):
    leg: int
    flight_number: str
    date: str
    origin: str
    destination: str
    scheduled_departure: str
    scheduled_arrival: str
    status: str
    delay_minutes: int
    fare_paid_per_passenger: float


class PaymentView(BaseModel):
    transaction_id: str
    payment_method_id: str
    method: str
    kind: str  # charge | refund
    amount: float
    purpose: str
    created_at: str


class ReservationDetails(BaseModel):
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


class ReservationSummary(BaseModel):
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


class CertificateView(BaseModel):
    compensation_id: str
    certificate_id: str
    user_id: str
    reservation_id: str
    flight_number: str
    date: str
    disruption: str
    amount: float
    expires_on: str


class CalculationResult(BaseModel):
    expression: str
    result: float


class TicketView(BaseModel):
    ticket_id: str
    status: str
    user_id: str | None
    reservation_id: str | None
    summary: str
    created_at: str
