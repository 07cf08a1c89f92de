"""Argument types shared by the airline tools: bounded strings and the shapes of list arguments."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from .rules import Cabin, Fare

UserId = Annotated[
    str, Field(description="The user's id, such as 'mia_li_3668'.", min_length=3, max_length=60, pattern=r"^\S+$")
]
ReservationId = Annotated[
    str,
    Field(
        description="The six-character reservation code, such as '4WQ2ZK'.",
        min_length=6,
        max_length=6,
        pattern=r"^[A-Za-z0-9]{6}$",
    ),
]
PaymentMethodId = Annotated[
    str,
    Field(
        description="A payment method id of the user, such as 'credit_card_0123456', 'gift_card_0123456' or "
        "'certificate_0123456'.",
        min_length=3,
        max_length=40,
    ),
]
AirportCode = Annotated[
    str, Field(description="A three-letter IATA airport code, such as 'JFK'.", pattern=r"^[A-Za-z]{3}$")
]
FlightNumber = Annotated[str, Field(description="A flight number, such as 'MRD104'.", pattern=r"^[A-Za-z]{3}\d{1,4}$")]
FlightDate = Annotated[str, Field(description="A date, YYYY-MM-DD (UTC).", pattern=r"^\d{4}-\d{2}-\d{2}$")]
BirthDate = Annotated[str, Field(description="A date of birth, YYYY-MM-DD.", pattern=r"^\d{4}-\d{2}-\d{2}$")]
Name = Annotated[str, Field(min_length=1, max_length=40)]
CabinArg = Annotated[Cabin, Field(description="The cabin: 'economy', 'premium' or 'business'.")]
FareArg = Annotated[
    Fare,
    Field(description="The fare: 'basic' (economy only, no changes, no refund), 'standard' or 'flex'."),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FlightRef(_Strict):
    flight_number: FlightNumber
    date: Annotated[FlightDate, Field(description="The flight's departure date, YYYY-MM-DD (UTC).")]


class PassengerIn(_Strict):
    first_name: Name
    last_name: Name
    date_of_birth: BirthDate


class PaymentIn(_Strict):
    payment_method_id: PaymentMethodId
    amount: float = Field(gt=0, le=100_000, description="How much this method pays, in dollars.")
