"""The retail world's tables: a shop's back office.

Money is stored in integer cents; timestamps are ISO-8601 strings in UTC (`2026-05-15T09:00:00+00:00`),
which sort as text. Every column a tool looks rows up by is indexed. The tables use a registry of
their own so they never share metadata with another world.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlalchemy import JSON, Index
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel


class RetailTable(SQLModel, registry=registry()):
    """Base of every retail table (its own metadata: `RetailTable.metadata`)."""


class Customer(RetailTable, table=True):
    __tablename__ = "customers"

    id: str = Field(primary_key=True)  # cus_0000000
    first_name: str = Field(index=True)
    last_name: str = Field(index=True)
    email: str = Field(unique=True, index=True)  # stored lower-case
    phone: str
    default_address_id: str | None = None
    created_at: str


class Address(RetailTable, table=True):
    __tablename__ = "addresses"

    id: str = Field(primary_key=True)  # adr_0000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    line1: str
    line2: str = ""
    city: str
    state: str  # two-letter code
    zip: str = Field(index=True)
    country: str = "US"


class PaymentMethod(RetailTable, table=True):
    """A credit card, a PayPal account or a gift card. An unredeemed gift card has no customer."""

    __tablename__ = "payment_methods"
    __label__ = "Payment method"  # what "... not found" calls it

    id: str = Field(primary_key=True)  # pm_0000000
    customer_id: str | None = Field(default=None, foreign_key="customers.id", index=True)
    kind: str  # credit_card | paypal | gift_card
    brand: str | None = None  # credit cards: Visa, Mastercard, American Express, Discover
    last4: str | None = None
    exp_month: int | None = None
    exp_year: int | None = None
    paypal_email: str | None = None
    gift_card_code: str | None = Field(default=None, unique=True, index=True)
    balance_cents: int | None = None  # gift cards only
    created_at: str


class Product(RetailTable, table=True):
    __tablename__ = "products"

    id: str = Field(primary_key=True)  # prod_000000
    name: str = Field(index=True)
    category: str = Field(index=True)
    description: str


class Variant(RetailTable, table=True):
    __tablename__ = "variants"

    id: str = Field(primary_key=True)  # var_00000000
    product_id: str = Field(foreign_key="products.id", index=True)
    sku: str = Field(unique=True)
    options: dict[str, Any] = Field(sa_type=JSON)  # {"color": "Black", "size": "M"}
    price_cents: int
    stock: int
    available: bool  # False: discontinued, cannot be ordered or exchanged into


class Order(RetailTable, table=True):
    """Status: payment_pending (its payment failed when placed), pending, processing, shipped,
    delivered, cancelled, returned, partially_returned,
    exchanged. The shipping address is a copy taken when the order was placed."""

    __tablename__ = "orders"
    __table_args__ = (Index("ix_orders_customer_placed", "customer_id", "placed_at"),)

    id: str = Field(primary_key=True)  # #W0000000
    customer_id: str = Field(foreign_key="customers.id", index=True)
    status: str = Field(index=True)
    placed_at: str
    updated_at: str
    ship_name: str
    ship_line1: str
    ship_line2: str = ""
    ship_city: str
    ship_state: str
    ship_zip: str
    ship_country: str = "US"
    cancelled_at: str | None = None
    cancel_reason: str | None = None


class OrderItem(RetailTable, table=True):
    """One order line. Status: ordered, cancelled, returned, exchanged. A replacement sent by an
    exchange is a new line (status ordered) with `replaces_item_id` set."""

    __tablename__ = "order_items"
    __label__ = "Item"

    id: str = Field(primary_key=True)  # itm_00000000
    order_id: str = Field(foreign_key="orders.id", index=True)
    product_id: str = Field(foreign_key="products.id", index=True)
    variant_id: str = Field(foreign_key="variants.id", index=True)
    product_name: str
    options: dict[str, Any] = Field(sa_type=JSON)
    quantity: int
    unit_price_cents: int
    status: str
    shipment_id: str | None = Field(default=None, foreign_key="shipments.id", index=True)
    return_id: str | None = Field(default=None, foreign_key="returns.id", index=True)
    exchange_id: str | None = Field(default=None, foreign_key="exchanges.id", index=True)
    replaces_item_id: str | None = None


class Payment(RetailTable, table=True):
    """A money movement on an order: a charge (status captured) or a refund (status pending
    while the bank processes it, completed once it has landed; gift card refunds land at once)."""

    __tablename__ = "payments"

    id: str = Field(primary_key=True)  # txn_00000000
    order_id: str = Field(foreign_key="orders.id", index=True)
    payment_method_id: str = Field(foreign_key="payment_methods.id", index=True)
    kind: str  # charge | refund
    amount_cents: int  # always positive
    status: str  # captured | pending | completed | queued (a refund a failure left unsent)
    reason: str  # purchase, cancellation, return, exchange, item change, payment change, partial refund: ...
    created_at: str
    return_id: str | None = Field(default=None, foreign_key="returns.id", index=True)
    exchange_id: str | None = Field(default=None, foreign_key="exchanges.id", index=True)


class Shipment(RetailTable, table=True):
    """A parcel. Kind: outbound (the order), replacement (an exchange's new items), return (a
    prepaid label the customer uses to send items back). Status: label_created, in_transit,
    out_for_delivery, delivered."""

    __tablename__ = "shipments"

    id: str = Field(primary_key=True)  # shp_0000000
    order_id: str = Field(foreign_key="orders.id", index=True)
    kind: str
    carrier: str
    tracking_number: str = Field(unique=True, index=True)
    status: str
    created_at: str
    shipped_at: str | None = None
    estimated_delivery: str | None = None  # a date, YYYY-MM-DD
    delivered_at: str | None = None


class AfterSalesCase(RetailTable):
    """What a return and an exchange both open with: their id (ret_0000000, exc_0000000), the
    order and customer they belong to, and the customer's reason. Not a table itself."""

    id: str = Field(primary_key=True)
    order_id: str = Field(foreign_key="orders.id", index=True)
    customer_id: str = Field(foreign_key="customers.id", index=True)
    reason: str


class Return(AfterSalesCase, table=True):
    __tablename__ = "returns"
    id_namespace: ClassVar[str] = "return"  # ctx.new_id's

    refund_payment_method_id: str | None = Field(default=None, foreign_key="payment_methods.id")
    refund_cents: int
    shipment_id: str | None = Field(default=None, foreign_key="shipments.id")
    created_at: str


class Exchange(AfterSalesCase, table=True):
    __tablename__ = "exchanges"
    id_namespace: ClassVar[str] = "exchange"

    price_difference_cents: int  # positive: the customer paid more; negative: refunded
    payment_method_id: str | None = Field(default=None, foreign_key="payment_methods.id")
    return_shipment_id: str | None = Field(default=None, foreign_key="shipments.id")
    replacement_shipment_id: str | None = Field(default=None, foreign_key="shipments.id")
    created_at: str


class Ticket(RetailTable, table=True):
    """A hand-off to a human agent."""

    __tablename__ = "tickets"

    id: str = Field(primary_key=True)  # tkt_0000000
    customer_id: str | None = Field(default=None, foreign_key="customers.id", index=True)
    order_id: str | None = Field(default=None, foreign_key="orders.id", index=True)
    summary: str
    status: str  # open
    created_at: str
