"""Small shared helpers: money, time and the shop's fixed rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

from mcpsim.world.seeding import IdGenerator
from mcpsim.world.toolkit import dollars, iso, money, to_cents  # noqa: F401  (re-exported)

RETURN_WINDOW_DAYS = 30
MAX_ORDER_LINES = 10
MAX_LINE_QUANTITY = 10
CARRIERS = ("UPS", "FedEx", "USPS")

# Order statuses, grouped by what may still happen to them.
OPEN_STATUSES = ("pending", "processing", "payment_pending")  # not shipped yet: can be cancelled or redirected
AFTER_DELIVERY_STATUSES = ("delivered", "partially_returned", "exchanged", "returned")
CancelReason = Literal["no longer needed", "ordered by mistake", "found a better price", "shipping too slow"]
ReturnReason = Literal[
    "defective", "arrived damaged", "wrong item received", "not as described", "does not fit", "no longer needed"
]
ExchangeReason = Literal["wrong size", "different color", "defective", "arrived damaged", "changed my mind"]
RefundReason = Literal["damaged item", "missing item", "late delivery", "price adjustment", "service recovery"]
CANCEL_REASONS: tuple[str, ...] = get_args(CancelReason)
RETURN_REASONS: tuple[str, ...] = get_args(ReturnReason)
EXCHANGE_REASONS: tuple[str, ...] = get_args(ExchangeReason)
ORDER_STATUSES = (
    "pending",
    "processing",
    "shipped",
    "delivered",
    "cancelled",
    "returned",
    "partially_returned",
    "exchanged",
)


# Every id namespace with its prefix and digit count: seed and tools draw from the same sequences.
ID_FORMATS = {
    "customer": ("cus_", 7),
    "address": ("adr_", 7),
    "payment_method": ("pm_", 7),
    "gift_card": ("", 12),
    "product": ("prod_", 6),
    "variant": ("var_", 8),
    "order": ("#W", 7),
    "item": ("itm_", 8),
    "payment": ("txn_", 8),
    "shipment": ("shp_", 8),
    "tracking": ("", 12),
    "return": ("ret_", 7),
    "exchange": ("exc_", 7),
    "ticket": ("tkt_", 7),
}


def new_id(ids: IdGenerator, kind: str) -> str:
    prefix, digits = ID_FORMATS[kind]
    return ids.code(kind, prefix, digits)


def gift_card_code(ids: IdGenerator) -> str:
    digits = new_id(ids, "gift_card")
    return f"GC-{digits[:4]}-{digits[4:8]}-{digits[8:]}"










def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def date_of(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def business_days_after(moment: datetime, days: int) -> datetime:
    """`days` working days later (weekends skipped): carriers' delivery estimates."""
    current = moment
    while days > 0:
        current += timedelta(days=1)
        if current.weekday() < 5:
            days -= 1
    return current


def tracking_number(ids: IdGenerator, carrier: str) -> str:
    """A carrier-shaped tracking number around a 12-digit seeded number."""
    number = new_id(ids, "tracking")
    if carrier == "UPS":
        return f"1Z{number}"
    if carrier == "FedEx":
        return f"7{number}"
    return f"9400{number}"
