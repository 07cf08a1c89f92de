"""Rows to the views the tools return."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, literal_column
from sqlmodel import Session, col, select

from .common import dollars
from .ledger import card_expired, method_label, order_payments
from .lookups import order_items
from .tables import (
    Address,
    Customer,
    Exchange,
    Order,
    OrderItem,
    PaymentMethod,
    Product,
    Return,
    Shipment,
    Variant,
)
from .views import (
    AddressView,
    CustomerDetails,
    ExchangeView,
    OrderDetails,
    OrderItemView,
    OrderSummary,
    PaymentMethodView,
    PaymentView,
    ProductDetails,
    ReturnView,
    ShipmentView,
    ShippingAddressView,
    VariantView,
)

RECENT_ORDERS = 20


def address_view(address: Address, default_id: str | None) -> AddressView:
    return AddressView(
        address_id=address.id,
        line1=address.line1,
        line2=address.line2,
        city=address.city,
        state=address.state,
        zip=address.zip,
        country=address.country,
        is_default=address.id == default_id,
    )


def payment_method_view(method: PaymentMethod, now: datetime) -> PaymentMethodView:
    return PaymentMethodView(
        payment_method_id=method.id,
        kind=method.kind,
        description=method_label(method),
        brand=method.brand,
        last4=method.last4,
        expires=f"{method.exp_month:02d}/{method.exp_year}" if method.exp_month and method.exp_year else None,
        expired=card_expired(method, now),
        paypal_email=method.paypal_email,
        gift_card_balance=dollars(method.balance_cents) if method.balance_cents is not None else None,
    )


def customer_details(session: Session, customer: Customer, now: datetime) -> CustomerDetails:
    addresses = session.exec(
        select(Address).where(Address.customer_id == customer.id).order_by(literal_column("rowid"))
    ).all()
    methods = session.exec(
        select(PaymentMethod).where(PaymentMethod.customer_id == customer.id).order_by(literal_column("rowid"))
    ).all()
    order_count = session.exec(select(func.count()).select_from(Order).where(Order.customer_id == customer.id)).one()
    recent = session.exec(
        select(Order.id)
        .where(Order.customer_id == customer.id)
        .order_by(col(Order.placed_at).desc(), col(Order.id).desc())
        .limit(RECENT_ORDERS)
    ).all()
    return CustomerDetails(
        customer_id=customer.id,
        first_name=customer.first_name,
        last_name=customer.last_name,
        email=customer.email,
        phone=customer.phone,
        member_since=customer.created_at[:10],
        default_address_id=customer.default_address_id,
        addresses=[address_view(a, customer.default_address_id) for a in addresses],
        payment_methods=[payment_method_view(m, now) for m in methods],
        order_count=order_count,
        recent_order_ids=list(recent),
    )


def shipment_view(shipment: Shipment) -> ShipmentView:
    return ShipmentView(
        shipment_id=shipment.id,
        order_id=shipment.order_id,
        kind=shipment.kind,
        carrier=shipment.carrier,
        tracking_number=shipment.tracking_number,
        status=shipment.status,
        created_at=shipment.created_at,
        shipped_at=shipment.shipped_at,
        estimated_delivery=shipment.estimated_delivery,
        delivered_at=shipment.delivered_at,
    )


def item_view(item: OrderItem) -> OrderItemView:
    return OrderItemView(
        item_id=item.id,
        product_id=item.product_id,
        product_name=item.product_name,
        variant_id=item.variant_id,
        options=dict(item.options),
        quantity=item.quantity,
        unit_price=dollars(item.unit_price_cents),
        line_total=dollars(item.unit_price_cents * item.quantity),
        status=item.status,
        shipment_id=item.shipment_id,
        return_id=item.return_id,
        exchange_id=item.exchange_id,
        replaces_item_id=item.replaces_item_id,
    )


def items_total_cents(items: list[OrderItem]) -> int:
    """What the goods the customer keeps on the order cost: open lines only."""
    return sum(i.unit_price_cents * i.quantity for i in items if i.status == "ordered")


def order_details(session: Session, order: Order) -> OrderDetails:
    items = order_items(session, order.id)
    payments = order_payments(session, order.id)
    methods = {p.payment_method_id: session.get(PaymentMethod, p.payment_method_id) for p in payments}
    shipments = {
        s.id: s
        for s in session.exec(
            select(Shipment).where(Shipment.order_id == order.id).order_by(literal_column("rowid"))
        ).all()
    }
    returns = session.exec(select(Return).where(Return.order_id == order.id).order_by(literal_column("rowid"))).all()
    exchanges = session.exec(
        select(Exchange).where(Exchange.order_id == order.id).order_by(literal_column("rowid"))
    ).all()
    charged = sum(p.amount_cents for p in payments if p.kind == "charge")
    refunded = sum(p.amount_cents for p in payments if p.kind == "refund")

    def tracking(shipment_id: str | None) -> str | None:
        return shipments[shipment_id].tracking_number if shipment_id in shipments else None

    return OrderDetails(
        order_id=order.id,
        customer_id=order.customer_id,
        status=order.status,
        placed_at=order.placed_at,
        updated_at=order.updated_at,
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
            PaymentView(
                transaction_id=p.id,
                kind=p.kind,
                payment_method_id=p.payment_method_id,
                payment_method=method_label(m) if (m := methods[p.payment_method_id]) else "unknown",
                amount=dollars(p.amount_cents),
                status=p.status,
                reason=p.reason,
                created_at=p.created_at,
            )
            for p in payments
        ],
        shipments=[shipment_view(s) for s in shipments.values()],
        returns=[
            ReturnView(
                return_id=r.id,
                reason=r.reason,
                item_ids=[i.id for i in items if i.return_id == r.id],
                refund_amount=dollars(r.refund_cents),
                refund_payment_method_id=r.refund_payment_method_id,
                return_tracking_number=tracking(r.shipment_id),
                created_at=r.created_at,
            )
            for r in returns
        ],
        exchanges=[
            ExchangeView(
                exchange_id=e.id,
                reason=e.reason,
                returned_item_ids=[i.id for i in items if i.exchange_id == e.id and i.status == "exchanged"],
                replacement_item_ids=[i.id for i in items if i.exchange_id == e.id and i.replaces_item_id],
                price_difference=dollars(e.price_difference_cents),
                payment_method_id=e.payment_method_id,
                return_tracking_number=tracking(e.return_shipment_id),
                replacement_tracking_number=tracking(e.replacement_shipment_id),
                created_at=e.created_at,
            )
            for e in exchanges
        ],
        cancelled_at=order.cancelled_at,
        cancel_reason=order.cancel_reason,
    )


def order_summary(order: Order, items: list[OrderItem]) -> OrderSummary:
    return OrderSummary(
        order_id=order.id,
        status=order.status,
        placed_at=order.placed_at,
        item_count=sum(i.quantity for i in items if i.replaces_item_id is None),
        items_total=dollars(items_total_cents(items)),
    )


def variant_view(variant: Variant) -> VariantView:
    return VariantView(
        variant_id=variant.id,
        sku=variant.sku,
        options=dict(variant.options),
        price=dollars(variant.price_cents),
        stock=variant.stock,
        available=variant.available,
        in_stock=variant.available and variant.stock > 0,
    )


def product_details(session: Session, product: Product) -> ProductDetails:
    variants = session.exec(
        select(Variant).where(Variant.product_id == product.id).order_by(literal_column("rowid"))
    ).all()
    return ProductDetails(
        product_id=product.id,
        name=product.name,
        category=product.category,
        description=product.description,
        variants=[variant_view(v) for v in variants],
    )
