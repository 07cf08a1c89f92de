"""Shared helpers of the bank world: its fixed rules (limits, windows, thresholds), id formats,
money and time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal, get_args

from mcpsim.world.seeding import IdGenerator
from mcpsim.world.toolkit import dollars, iso, money, to_cents  # noqa: F401  (re-exported)

# -- the bank's rules --------------------------------------------------------------------------

MAX_FAILED_VERIFICATIONS = 3  # a customer's identity check locks after this many failures in a row
FRAUD_HOLD_THRESHOLD_CENTS = 100_000  # a transfer ABOVE $1,000.00 to a new payee is held for review
NEW_PAYEE_DAYS = 7  # a payee added less than 7 days ago is "new"
DISPUTE_WINDOW_DAYS = 60  # card transactions can be disputed within 60 days of posting
SAVINGS_MONTHLY_WITHDRAWALS = 6  # transfers out of a savings account per calendar month
EXPEDITED_CARD_FEE_CENTS = 2_500  # expedited delivery of a replacement card (free for platinum)
MAX_ACTIVE_PAYEES = 25

# Daily card limits per tier, in whole dollars: (default, maximum).
CardTier = Literal["standard", "gold", "platinum"]
CARD_TIERS: tuple[str, ...] = get_args(CardTier)
PURCHASE_LIMITS = {"standard": (1_500, 3_000), "gold": (3_000, 6_000), "platinum": (5_000, 10_000)}
ATM_LIMITS = {"standard": (300, 500), "gold": (500, 1_000), "platinum": (1_000, 1_500)}
MIN_PURCHASE_LIMIT = 100
MIN_ATM_LIMIT = 20

# Account products: (type, daily transfer limit in dollars, card tier of its debit card or None).
PRODUCTS = {
    "Everyday Checking": ("checking", 2_500, "standard"),
    "Plus Checking": ("checking", 5_000, "gold"),
    "Premier Checking": ("checking", 10_000, "platinum"),
    "Everyday Savings": ("savings", 5_000, None),
    "High-Yield Savings": ("savings", 5_000, None),
}
SAVINGS_RATES_BPS = {"Everyday Savings": 50, "High-Yield Savings": 410}

ReplaceReason = Literal["lost", "stolen", "damaged"]
Delivery = Literal["standard", "expedited"]
LimitType = Literal["purchase", "atm"]
DisputeReason = Literal[
    "unauthorized", "duplicate_charge", "not_received", "not_as_described", "incorrect_amount", "cancelled_recurring"
]
DISPUTE_REASONS: tuple[str, ...] = get_args(DisputeReason)
TicketTopic = Literal[
    "fraud", "fraud_hold_review", "limit_increase", "locked_verification", "restricted_profile", "account_closure",
    "complaint", "other",
]
TransactionKind = Literal[
    "deposit", "card_purchase", "atm_withdrawal", "transfer_in", "transfer_out", "fee", "interest", "refund",
    "dispute_credit",
]

# Every id namespace with its prefix and digit count: seed and tools draw from the same sequences.
ID_FORMATS = {
    "customer": ("cus_", 7),
    "account": ("acc_", 8),
    "account_number": ("", 10),
    "card": ("card_", 7),
    "card_number": ("", 12),
    "payee": ("pye_", 7),
    "transfer": ("trf_", 8),
    "transaction": ("txn_", 9),
    "dispute": ("dsp_", 7),
    "ticket": ("tkt_", 7),
}
CARD_BIN = "4147"


def new_id(ids: IdGenerator, kind: str) -> str:
    prefix, digits = ID_FORMATS[kind]
    return ids.code(kind, prefix, digits)


def new_card_number(ids: IdGenerator) -> str:
    """A 16-digit debit card number: the bank's BIN plus 12 seeded digits."""
    return CARD_BIN + new_id(ids, "card_number")


# -- money and time ----------------------------------------------------------------------------










def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def day_start(moment: datetime) -> datetime:
    """Midnight UTC of the moment's day: the bank's days run in UTC."""
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def next_month(moment: datetime) -> datetime:
    start = month_start(moment)
    return (start + timedelta(days=32)).replace(day=1)


def aba_valid(routing_number: str) -> bool:
    """The ABA routing number checksum: 3*(d1+d4+d7) + 7*(d2+d5+d8) + (d3+d6+d9) is a multiple of 10."""
    if len(routing_number) != 9 or not routing_number.isdigit():
        return False
    d = [int(c) for c in routing_number]
    total = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])
    return total % 10 == 0 and routing_number != "000000000"


def mask(number: str) -> str:
    return f"••••{number[-4:]}"

STATEMENT_MONTHS = 6  # monthly statements available online: the last six closed months
