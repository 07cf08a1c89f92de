"""Customer tools: finding a customer, verifying their identity, their profile and contact details."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field
from sqlmodel import Session, select

from mcpsim.world import ToolContext, WorldError

from .. import world
from ..inputs import City, CustomerId, Email, Line1, Line2, Name, Phone, State, Zip
from ..rules import MAX_FAILED_VERIFICATIONS, get_customer, iso, verification_of, verified_customer
from ..tables import Account, Customer
from ..views import CustomerMatch, CustomerProfile, CustomerSearchResult, VerificationResult


def normalize_phone(phone: str) -> str:
    """'(415) 555-0134', '+1 415 555 0134' -> '415-555-0134'; refuses anything but 10 digits."""
    digits = re.sub(r"\D", "", phone)
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    if len(digits) != 10:
        raise WorldError(f"'{phone}' is not a 10-digit US phone number")
    return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"


def _match(session: Session, customer: Customer) -> CustomerMatch:
    return CustomerMatch.from_row(customer, verified=verification_of(session, customer.id).status == "verified")


@world.tool(read_only=True, idempotent=True)
def find_customer(
    ctx: ToolContext,
    email: Annotated[Email | None, Field(description="The customer's email address.")] = None,
    phone: Annotated[Phone | None, Field(description="The customer's phone number on file.")] = None,
    first_name: Annotated[Name | None, Field(description="First name (with last_name and zip).")] = None,
    last_name: Annotated[Name | None, Field(description="Last name (with first_name and zip).")] = None,
    zip: Annotated[Zip | None, Field(description="ZIP code of the home address (with the names).")] = None,
) -> CustomerSearchResult:
    """Find a customer by email, by phone number, or by first name + last name + ZIP code (give
    exactly one of the three; case does not matter). Returns their customer id and name only:
    nothing else about a customer may be looked at or changed until verify_identity succeeds."""
    by_name = (first_name, last_name, zip)
    given = [email is not None, phone is not None, any(v is not None for v in by_name)]
    if sum(given) != 1:
        raise WorldError("Give exactly one of: email, phone, or first_name + last_name + zip")
    query = select(Customer)
    if email is not None:
        query = query.where(Customer.email == email.strip().lower())
    elif phone is not None:
        query = query.where(Customer.phone == normalize_phone(phone))
    else:
        if any(v is None for v in by_name):
            raise WorldError("Searching by name needs first_name, last_name and zip together")
        assert first_name and last_name and zip
        query = query.where(Customer.zip == zip)
    rows = list(ctx.session.exec(query.order_by(Customer.id)))
    if first_name and last_name:
        first, last = first_name.strip().lower(), last_name.strip().lower()
        rows = [c for c in rows if c.first_name.lower() == first and c.last_name.lower() == last]
    if not rows:
        raise WorldError("No customer matches those details")
    return CustomerSearchResult(matches=[_match(ctx.session, c) for c in rows[:5]])


@world.tool()
def verify_identity(
    ctx: ToolContext,
    customer_id: CustomerId,
    date_of_birth: Annotated[
        str, Field(description="Date of birth the customer gives, YYYY-MM-DD.", pattern=r"^\d{4}-\d{2}-\d{2}$")
    ],
    ssn_last4: Annotated[str, Field(description="The last four digits of the customer's SSN.", pattern=r"^\d{4}$")],
) -> VerificationResult:
    """Verify the identity of the customer you are speaking with, with the date of birth and the
    last four digits of the SSN they tell you (never guess them). Required once per session before
    any other tool that reads or changes the customer's accounts, cards, payees, transfers,
    disputes or profile. A failed check is recorded (verified=false); after 3 failures in a row
    verification locks and only a human agent can help. A restricted profile cannot be verified."""
    customer = get_customer(ctx.session, customer_id)
    check = verification_of(ctx.session, customer.id)
    if customer.status == "restricted":
        raise WorldError(
            f"Customer {customer.id}'s profile is restricted by the fraud team and cannot be verified here; "
            "transfer the customer to a human agent"
        )
    if check.status == "locked":
        raise WorldError(
            f"Identity verification for customer {customer.id} is locked after {MAX_FAILED_VERIFICATIONS} failed "
            "attempts; transfer the customer to a human agent"
        )
    if check.status == "verified":
        return VerificationResult(
            customer_id=customer.id,
            verified=True,
            status="verified",
            attempts_remaining=MAX_FAILED_VERIFICATIONS,
            message="The customer's identity is already verified in this session.",
        )
    now = iso(ctx.now)
    if date_of_birth == customer.date_of_birth and ssn_last4 == customer.ssn_last4:
        check.status, check.method, check.failed_attempts = "verified", "dob_ssn4", 0
        check.verified_at = check.updated_at = now
        ctx.session.add(check)
        return VerificationResult(
            customer_id=customer.id,
            verified=True,
            status="verified",
            attempts_remaining=MAX_FAILED_VERIFICATIONS,
            message=f"Identity verified for {customer.first_name} {customer.last_name}.",
        )
    check.failed_attempts += 1
    check.updated_at = now
    left = MAX_FAILED_VERIFICATIONS - check.failed_attempts
    if left <= 0:
        check.status = "locked"
        message = "The details do not match. Verification is now locked; transfer the customer to a human agent."
    else:
        message = f"The details do not match the customer's records. {left} attempt(s) left before verification locks."
    ctx.session.add(check)
    return VerificationResult(
        customer_id=customer.id, verified=False, status=check.status, attempts_remaining=max(left, 0), message=message
    )


def _profile(ctx: ToolContext, customer: Customer) -> CustomerProfile:
    accounts = ctx.session.exec(
        select(Account.id).where(Account.customer_id == customer.id, Account.status == "open").order_by(Account.id)
    ).all()
    return CustomerProfile.from_row(customer, open_account_ids=list(accounts))


@world.tool(read_only=True, idempotent=True)
def get_customer_profile(ctx: ToolContext, customer_id: CustomerId) -> CustomerProfile:
    """A verified customer's profile: name, email, phone, home address, customer since, and the
    ids of their open accounts."""
    return _profile(ctx, verified_customer(ctx.session, customer_id))


@world.tool(idempotent=True)
def update_contact_info(
    ctx: ToolContext,
    customer_id: CustomerId,
    email: Annotated[Email | None, Field(description="New email address.")] = None,
    phone: Annotated[Phone | None, Field(description="New phone number.")] = None,
    line1: Annotated[Line1 | None, Field(description="New street address (with city, state and zip).")] = None,
    line2: Annotated[Line2 | None, Field(description="New apartment or unit; empty for none.")] = None,
    city: Annotated[City | None, Field(description="New city.")] = None,
    state: Annotated[State | None, Field(description="New two-letter state code.")] = None,
    zip: Annotated[Zip | None, Field(description="New ZIP code.")] = None,
) -> CustomerProfile:
    """Change a verified customer's email, phone number and/or home address (a new address needs
    line1, city, state and zip together; line2 is cleared unless given). Name, date of birth and
    SSN cannot be changed here. An email already used by another customer is refused."""
    customer = verified_customer(ctx.session, customer_id)
    changed = False
    if email is not None:
        address = email.strip().lower()
        if address != customer.email:
            other = ctx.session.exec(select(Customer).where(Customer.email == address)).first()
            if other is not None:
                raise WorldError(f"The email address {address} is already used by another customer profile")
            customer.email, changed = address, True
    if phone is not None:
        number = normalize_phone(phone)
        if number != customer.phone:
            customer.phone, changed = number, True
    parts = {"line1": line1, "city": city, "state": state, "zip": zip}
    if any(v is not None for v in (*parts.values(), line2)):
        missing = [k for k, v in parts.items() if v is None]
        if missing:
            raise WorldError(f"A new address needs line1, city, state and zip together; missing {', '.join(missing)}")
        new = {k: str(v).strip() for k, v in parts.items()} | {"line2": (line2 or "").strip()}
        if any(getattr(customer, k) != v for k, v in new.items()):
            for k, v in new.items():
                setattr(customer, k, v)
            changed = True
    if not changed:
        raise WorldError("Nothing to change: the details given are the ones already on file")
    customer.updated_at = iso(ctx.now)
    ctx.session.add(customer)
    return _profile(ctx, customer)
