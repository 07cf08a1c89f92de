"""Shared helpers: ids, money, time, and the airline's fixed rules as plain functions.

Every rule that decides an amount lives here, so the tools, the seed and the tests agree:
fares per cabin and fare type, free baggage allowances, change and cancellation fees, insurance,
compensation amounts.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Literal, get_args

from mcpsim.world.seeding import IdGenerator
from mcpsim.world.toolkit import dollars, iso, money, to_cents  # noqa: F401  (re-exported)
from mcpsim.world import WorldError

AIRLINE_CODE = "MRD"
AIRLINE_NAME = "Meridian Air"

Cabin = Literal["economy", "premium", "business"]
Fare = Literal["basic", "standard", "flex"]
Tier = Literal["regular", "silver", "gold", "platinum"]
CancelReason = Literal["change of plans", "illness", "family emergency", "airline cancelled flight", "other"]
CABINS: tuple[str, ...] = get_args(Cabin)
FARES: tuple[str, ...] = get_args(Fare)
TIERS: tuple[str, ...] = get_args(Tier)
CANCEL_REASONS: tuple[str, ...] = get_args(CancelReason)
CABIN_RANK = {"economy": 0, "premium": 1, "business": 2}

# -- flights -----------------------------------------------------------------------------------

FLIGHT_STATUSES = ("scheduled", "delayed", "departed", "landed", "cancelled")
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

# -- ids -----------------------------------------------------------------------------------------

ID_FORMATS = {
    "credit_card": ("credit_card_", 7),
    "gift_card": ("gift_card_", 7),
    "certificate": ("certificate_", 7),
    "gift_card_code": ("", 12),
    "payment": ("txn_", 8),
    "compensation": ("cmp_", 7),
    "flight_change": ("chg_", 7),
    "ticket": ("tkt_", 7),
    "frequent_flyer": ("", 9),
}
_RES_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def new_id(ids: IdGenerator, kind: str) -> str:
    prefix, digits = ID_FORMATS[kind]
    return ids.code(kind, prefix, digits)


def reservation_code(ids: IdGenerator) -> str:
    """Six characters from a 32-letter alphabet: a seeded bijection of 30 bits."""
    n = ids.number("reservation", 9)
    chars = []
    for _ in range(6):
        n, r = divmod(n, 32)
        chars.append(_RES_ALPHABET[r])
    return "".join(reversed(chars))


def gift_card_code(ids: IdGenerator) -> str:
    digits = new_id(ids, "gift_card_code")
    return f"GC-{digits[:4]}-{digits[4:8]}-{digits[8:]}"


# -- money and time ------------------------------------------------------------------------------










def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise WorldError(f"'{text}' is not a valid date (YYYY-MM-DD)") from None


def hours_between(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / 3600
