"""Customer tools: finding and authenticating a customer, their profile, addresses and gift cards."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpsim.world import ToolContext, WorldError, attach_gift_card, sql

from .. import world
from ..inputs import City, CustomerId, Line1, Line2, State, Zip
from ..rules import get_address_of
from ..tables import Address, Customer, PaymentMethod
from ..views import (
    AddressView,
    CustomerDetails,
    CustomerRef,
    PaymentMethodView,
    address_view,
    customer_details,
    payment_method_view,
)

Name = Annotated[str, Field(min_length=1, max_length=60)]


@world.tool(read_only=True, idempotent=True)
def find_customer_by_email(
    ctx: ToolContext,
    email: Annotated[str, Field(description="The customer's email address.", min_length=3, max_length=254)],
) -> CustomerRef:
    """Find a customer by email address (case does not matter). Use it to authenticate the customer
    before looking at or changing anything of theirs."""
    customer = sql.first(ctx, Customer, "email = ?", (email.strip().lower(),))
    if customer is None:
        raise WorldError(f"No customer has the email address {email}")
    return CustomerRef.from_row(customer)


@world.tool(read_only=True, idempotent=True)
def find_customer_by_name_zip(
    ctx: ToolContext,
    first_name: Annotated[Name, Field(description="The customer's first name.")],
    last_name: Annotated[Name, Field(description="The customer's last name.")],
    zip: Annotated[Zip, Field(description="The five-digit ZIP code of one of the customer's addresses.")],
) -> CustomerRef:
    """Find a customer by first name, last name and the ZIP code of one of their addresses (case
    does not matter). Use it to authenticate a customer who cannot give their email address."""
    rows = sql.select(ctx, Customer, "id IN (SELECT customer_id FROM addresses WHERE zip = ?)", (zip,))
    first, last = first_name.strip().lower(), last_name.strip().lower()
    matches = {c.id: c for c in rows if c.first_name.lower() == first and c.last_name.lower() == last}
    if not matches:
        raise WorldError(f"No customer named {first_name} {last_name} has an address with ZIP code {zip}")
    if len(matches) > 1:
        raise WorldError(
            f"{len(matches)} customers named {first_name} {last_name} have an address with ZIP code {zip}; "
            "ask for the email address instead"
        )
    return CustomerRef.from_row(next(iter(matches.values())))


@world.tool(read_only=True, idempotent=True)
def get_customer_details(ctx: ToolContext, customer_id: CustomerId) -> CustomerDetails:
    """A customer's profile: contact details, address book (with the default address), payment
    methods (with gift card balances and whether a card has expired), how many orders they have
    and the ids of the 20 most recent ones (newest first; list_customer_orders pages through all)."""
    return customer_details(ctx, sql.get(ctx, Customer, customer_id.strip()), ctx.now)


@world.tool()
def add_customer_address(
    ctx: ToolContext,
    customer_id: CustomerId,
    line1: Line1,
    city: City,
    state: State,
    zip: Zip,
    line2: Line2 = "",
    make_default: Annotated[bool, Field(description="Also make it the default address.")] = False,
) -> AddressView:
    """Add a US address to the customer's address book, optionally making it their default
    address (used for new orders). Existing orders keep the address they were placed with; use
    update_order_shipping_address to change where an open order goes."""
    customer = sql.get(ctx, Customer, customer_id.strip())
    fields = {"line1": line1.strip(), "line2": line2.strip(), "city": city.strip(), "state": state, "zip": zip}
    existing = sql.select(ctx, Address, "customer_id = ? AND zip = ?", (customer.id, zip), order="")
    for address in existing:
        if all(str(getattr(address, k)).lower() == v.lower() for k, v in fields.items()):
            raise WorldError(
                f"This address is already in the address book as {address.id}; "
                "use set_default_address to make it the default"
            )
    address = sql.insert(ctx, Address, id=ctx.new_id("address"), customer_id=customer.id, country="US", **fields)
    default_id = customer.default_address_id
    if make_default:  # written after the address, as the ORM's flush ordered them
        default_id = address.id
        sql.update(ctx, Customer, customer.id, default_address_id=default_id)
    return address_view(address, default_id)


@world.tool(idempotent=True)
def set_default_address(
    ctx: ToolContext,
    customer_id: CustomerId,
    address_id: Annotated[str, Field(description="An address id from the customer's address book.", max_length=40)],
) -> AddressView:
    """Make one of the customer's saved addresses their default address."""
    customer = sql.get(ctx, Customer, customer_id.strip())
    address = get_address_of(ctx, address_id, customer.id)
    sql.update(ctx, Customer, customer.id, default_address_id=address.id)
    return address_view(address, address.id)


@world.tool()
def redeem_gift_card(
    ctx: ToolContext,
    customer_id: CustomerId,
    gift_card_code: Annotated[
        str, Field(description="The code printed on the gift card, such as 'GC-1234-5678-9012'.", max_length=40)
    ],
) -> PaymentMethodView:
    """Add a gift card the customer holds to their account by its code, so it can pay for orders
    and receive refunds. A gift card can be redeemed once, by one customer."""
    customer = ctx.get(Customer, customer_id.strip())
    card = attach_gift_card(
        ctx,
        PaymentMethod,
        gift_card_code,
        account="this customer's account",
        taken="redeemed by",
        customer_id=customer.id,
    )
    return payment_method_view(card, ctx.now)
