"""Argument types shared by the bank tools: bounded ids, money and text, and the closed sets of
choices (reasons, topics, kinds)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

CustomerId = Annotated[
    str, Field(description="The customer's id, such as 'cus_0123456' (from find_customer).", max_length=40)
]
AccountId = Annotated[str, Field(description="An account id of the customer, such as 'acc_01234567'.", max_length=40)]
CardId = Annotated[str, Field(description="A card id of the customer, such as 'card_0123456'.", max_length=40)]
PayeeId = Annotated[str, Field(description="A saved payee of the customer, such as 'pye_0123456'.", max_length=40)]
TransferId = Annotated[str, Field(description="A transfer id, such as 'trf_01234567'.", max_length=40)]
TransactionId = Annotated[str, Field(description="A transaction id, such as 'txn_012345678'.", max_length=40)]
DisputeId = Annotated[str, Field(description="A dispute id, such as 'dsp_0123456'.", max_length=40)]
Amount = Annotated[
    float, Field(description="Amount in US dollars, at most two decimals, such as 250.00.", gt=0, le=1_000_000)
]
Memo = Annotated[str, Field(description="An optional note shown on the transfer.", max_length=140)]
Date = Annotated[str, Field(description="A date, YYYY-MM-DD.", pattern=r"^\d{4}-\d{2}-\d{2}$")]
Limit = Annotated[int, Field(description="How many rows to return (at most 50).", ge=1, le=50)]
Offset = Annotated[int, Field(description="How many rows to skip, for paging.", ge=0, le=100_000)]
Email = Annotated[
    str, Field(description="An email address.", min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
]
Phone = Annotated[
    str,
    Field(
        description="A 10-digit US phone number, such as '415-555-0134' or '(415) 555-0134'.",
        min_length=10,
        max_length=20,
        pattern=r"^[\d\s().+-]+$",
    ),
]
Line1 = Annotated[str, Field(description="Street address, such as '123 Main St'.", min_length=3, max_length=120)]
Line2 = Annotated[str, Field(description="Apartment, suite or unit; empty if none.", max_length=60)]
City = Annotated[str, Field(description="City.", min_length=2, max_length=60)]
State = Annotated[str, Field(description="Two-letter US state code, such as 'CA'.", pattern=r"^[A-Z]{2}$")]
Zip = Annotated[str, Field(description="Five-digit US ZIP code, such as '94107'.", pattern=r"^\d{5}$")]
Name = Annotated[str, Field(min_length=1, max_length=60)]

ReplaceReason = Literal["lost", "stolen", "damaged"]
Delivery = Literal["standard", "expedited"]
LimitType = Literal["purchase", "atm"]
DisputeReason = Literal[
    "unauthorized", "duplicate_charge", "not_received", "not_as_described", "incorrect_amount", "cancelled_recurring"
]
TicketTopic = Literal[
    "fraud",
    "fraud_hold_review",
    "limit_increase",
    "locked_verification",
    "restricted_profile",
    "account_closure",
    "complaint",
    "other",
]
TransactionKind = Literal[
    "deposit",
    "card_purchase",
    "atm_withdrawal",
    "transfer_in",
    "transfer_out",
    "fee",
    "interest",
    "refund",
    "dispute_credit",
]
