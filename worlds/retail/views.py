"""What the retail tools return: pydantic models, separate from the tables, and the functions that
build the composite ones from rows. Money is in dollars. A view named after a table reads its
fields from the row (`RowView.from_row`); only what a row does not hold is computed here."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel

from mcpsim.world import RowView, dollars, sql

from .ledger import card_expired, method_label, order_payments
from .tables import Address, Exchange, Order, OrderItem, PaymentMethod, Return, Shipment, Variant

RECENT_ORDERS = 20


class RetailView(RowView):
    """A view of a row: `from_row` with its field plan made once per view (`sql.view`)."""

    @classmethod
    def from_row(cls, row: Any, /, **values: Any) -> Self:
        return sql.view(cls, row, **values)


class CustomerRef(RetailView):
    id_field = "customer_id"
    customer_id: str
    first_name: str
    last_name: str
    email: str


class AddressView(RetailView):
    id_field = "address_id"
    address_id: str
    line1: str
    line2: str
    city: str
    state: str
    zip: str
    country: str
    is_default: bool


class PaymentMethodView(RetailView):
    id_field = "payment_method_id"
    payment_method_id: str
    kind: str  # credit_card | paypal | gift_card
    description: str  # "Visa ending in 4242", "PayPal (jane@example.com)", "Gift card ending in 8812"
    brand: str | None = None
    last4: str | None = None
    expires: str | None = None  # MM/YYYY
    expired: bool = False
    paypal_email: str | None = None
    gift_card_balance: float | None = None


class CustomerDetails(CustomerRef):
    phone: str
    member_since: str
    default_address_id: str | None
    addresses: list[AddressView]
    payment_methods: list[PaymentMethodView]
    order_count: int
    recent_order_ids: list[str]  # newest first, at most 20; list_customer_orders pages through all


class ShippingAddressView(BaseModel):
    name: str
    line1: str
    line2: str
    city: str
    state: str
    zip: str
    country: str


class OrderItemView(RetailView):
    id_field = "item_id"
    item_id: str
    product_id: str
    product_name: str
    variant_id: str
    options: dict[str, Any]
    quantity: int
    unit_price: float
    line_total: float
    status: str  # ordered | cancelled | returned | exchanged
    shipment_id: str | None = None
    return_id: str | None = None
    exchange_id: str | None = None
    replaces_item_id: str | None = None


class PaymentView(RetailView):
    id_field = "transaction_id"
    transaction_id: str
    kind: str  # charge | refund
    payment_method_id: str
    payment_method: str
    amount: float
    status: str  # captured | pending | completed | queued
    reason: str
    created_at: str


class ShipmentView(RetailView):
    id_field = "shipment_id"
    shipment_id: str
    order_id: str
    kind: str  # outbound | replacement | return
    carrier: str
    tracking_number: str
    status: str  # label_created | in_transit | out_for_delivery | delivered
    created_at: str
    shipped_at: str | None = None
    estimated_delivery: str | None = None
    delivered_at: str | None = None


class ReturnView(RetailView):
    id_field = "return_id"
    return_id: str
    reason: str
    item_ids: list[str]
    refund_amount: float
    refund_payment_method_id: str | None
    return_tracking_number: str | None
    created_at: str


class ExchangeView(RetailView):
    id_field = "exchange_id"
    exchange_id: str
    reason: str
    returned_item_ids: list[str]
    replacement_item_ids: list[str]
    price_difference: float  # positive: charged to the customer; negative: refunded
    payment_method_id: str | None
    return_tracking_number: str | None
    replacement_tracking_number: str | None
    created_at: str


class OrderDetails(RetailView):
    id_field = "order_id"
    order_id: str
    customer_id: str
    status: str
    placed_at: str
    updated_at: str
    shipping_address: ShippingAddressView
    items: list[OrderItemView]
    items_total: float  # what the goods currently on the order cost (cancelled, returned lines excluded)
    total_charged: float
    total_refunded: float
    net_paid: float
    payments: list[PaymentView]
    shipments: list[ShipmentView]
    returns: list[ReturnView]
    exchanges: list[ExchangeView]
    cancelled_at: str | None = None
    cancel_reason: str | None = None


class OrderSummary(RetailView):
    id_field = "order_id"
    order_id: str
    status: str
    placed_at: str
    item_count: int
    items_total: float


class OrderList(BaseModel):
    customer_id: str
    status: str | None
    total_count: int
    offset: int
    orders: list[OrderSummary]  # newest first


class VariantView(RetailView):
    id_field = "variant_id"
    variant_id: str
    sku: str
    options: dict[str, Any]
    price: float
    stock: int
    available: bool  # False: discontinued
    in_stock: bool  # available and at least one unit in stock


class ProductDetails(RetailView):
    id_field = "product_id"
    product_id: str
    name: str
    category: str
    description: str
    variants: list[VariantView]


class ProductSummary(RetailView):
    id_field = "product_id"
    product_id: str
    name: str
    category: str
    min_price: float
    max_price: float
    variant_count: int
    variants_in_stock: int


class ProductSearchResults(BaseModel):
    total_count: int
    offset: int
    products: list[ProductSummary]


class CategoryCount(BaseModel):
    category: str
    product_count: int


class CategoryList(BaseModel):
    categories: list[CategoryCount]


class ShipmentTracking(BaseModel):
    shipment: ShipmentView
    item_ids: list[str]  # the order lines travelling in this parcel (empty for return labels)


class TicketView(RetailView):
    id_field = "ticket_id"
    ticket_id: str
    status: str
    customer_id: str | None
    order_id: str | None
    summary: str
    created_at: str


def address_view(address: Address, default_id: str | None) -> AddressView:
    return AddressView.from_row(address, is_default=address.id == default_id)


def payment_method_view(method: PaymentMethod, now: datetime) -> PaymentMethodView:
    return PaymentMethodView.from_row(
        method,
        description=method_label(method),
        expires=f"{method.exp_month:02d}/{method.exp_year}" if method.exp_month and method.exp_year else None,
        expired=card_expired(method, now),
        gift_card_balance=dollars(method.balance_cents) if method.balance_cents is not None else None,
    )


def customer_details(session: sql.Source, customer: Any, now: datetime) -> CustomerDetails:
    """A customer's profile; `customer` is its row (ORM or plain)."""
    addresses = sql.select(session, Address, "customer_id = ?", (customer.id,))
    methods = sql.select(session, PaymentMethod, "customer_id = ?", (customer.id,))
    order_count = sql.scalar(session, "SELECT COUNT(*) FROM orders WHERE customer_id = ?", (customer.id,))
    recent = sql.scalars(
        session,
        f"SELECT id FROM orders WHERE customer_id = ? ORDER BY placed_at DESC, id DESC LIMIT {RECENT_ORDERS}",
        (customer.id,),
    )
    return CustomerDetails.from_row(
        customer,
        member_since=customer.created_at[:10],
        addresses=[address_view(a, customer.default_address_id) for a in addresses],
        payment_methods=[payment_method_view(m, now) for m in methods],
        order_count=order_count,
        recent_order_ids=recent,
    )


def item_view(item: OrderItem) -> OrderItemView:
    return OrderItemView.from_row(
        item,
        options=dict(item.options),
        unit_price=dollars(item.unit_price_cents),
        line_total=dollars(item.unit_price_cents * item.quantity),
    )


def items_total_cents(items: list[OrderItem]) -> int:
    """What the goods the customer keeps on the order cost: open lines only."""
    return sum(i.unit_price_cents * i.quantity for i in items if i.status == "ordered")


def order_details(session: sql.Source, order: Any) -> OrderDetails:
    """Everything about an order; `order` is its row (ORM or plain). Its related rows are read
    with plain SQL, after the call's pending writes are flushed."""
    by_order = ("order_id = ?", (order.id,))
    items = sql.select(session, OrderItem, *by_order)
    payments = order_payments(session, order.id)
    methods = {
        m.id: m
        for m in sql.select(
            session, PaymentMethod, "id IN (SELECT payment_method_id FROM payments WHERE order_id = ?)", (order.id,)
        )
    }
    shipments = {s.id: s for s in sql.select(session, Shipment, *by_order)}
    returns = sql.select(session, Return, *by_order)
    exchanges = sql.select(session, Exchange, *by_order)
    charged = sum(p.amount_cents for p in payments if p.kind == "charge")
    refunded = sum(p.amount_cents for p in payments if p.kind == "refund")

    def tracking(shipment_id: str | None) -> str | None:
        return shipments[shipment_id].tracking_number if shipment_id in shipments else None

    return OrderDetails.from_row(
        order,
        shipping_address=ShippingAddressView(
            name=order.ship_name,
            line1=order.ship_line1,
            line2=order.ship_line2,
            city=order.ship_city,
            state=order.ship_state,
            zip=order.ship_zip,
            country=order.ship_country,
        ),
        items=[item_view(i) for i in items],
        items_total=dollars(items_total_cents(items)),
        total_charged=dollars(charged),
        total_refunded=dollars(refunded),
        net_paid=dollars(charged - refunded),
        payments=[
            PaymentView.from_row(
                p,
                payment_method=method_label(m) if (m := methods.get(p.payment_method_id)) else "unknown",
                amount=dollars(p.amount_cents),
            )
            for p in payments
        ],
        shipments=ShipmentView.from_rows(shipments.values()),
        returns=[
            ReturnView.from_row(
                r,
                item_ids=[i.id for i in items if i.return_id == r.id],
                refund_amount=dollars(r.refund_cents),
                return_tracking_number=tracking(r.shipment_id),
            )
            for r in returns
        ],
        exchanges=[
            ExchangeView.from_row(
                e,
                returned_item_ids=[i.id for i in items if i.exchange_id == e.id and i.status == "exchanged"],
                replacement_item_ids=[i.id for i in items if i.exchange_id == e.id and i.replaces_item_id],
                price_difference=dollars(e.price_difference_cents),
                return_tracking_number=tracking(e.return_shipment_id),
                replacement_tracking_number=tracking(e.replacement_shipment_id),
            )
            for e in exchanges
        ],
    )


def order_summary(order: Order, items: list[OrderItem]) -> OrderSummary:
    return OrderSummary.from_row(
        order,
        item_count=sum(i.quantity for i in items if i.replaces_item_id is None),
        items_total=dollars(items_total_cents(items)),
    )


def variant_view(variant: Variant) -> VariantView:
    return VariantView.from_row(
        variant,
        options=dict(variant.options),
        price=dollars(variant.price_cents),
        in_stock=variant.available and variant.stock > 0,
    )


def product_details(session: sql.Source, product: Any) -> ProductDetails:
    """A product with its variants; `product` is its row (ORM or plain)."""
    variants = sql.select(session, Variant, "product_id = ?", (product.id,))
    return ProductDetails.from_row(product, variants=[variant_view(v) for v in variants])
