"""What the retail tools return: pydantic models, separate from the tables. Money is in dollars."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class CustomerRef(BaseModel):
    customer_id: str
    first_name: str
    last_name: str
    email: str


class AddressView(BaseModel):
    address_id: str
    line1: str
    line2: str
    city: str
    state: str
    zip: str
    country: str
    is_default: bool


class PaymentMethodView(BaseModel):
    payment_method_id: str
    kind: str  # credit_card | paypal | gift_card
    description: str  # "Visa ending in 4242", "PayPal (jane@example.com)", "Gift card ending in 8812"
    brand: str | None = None
    last4: str | None = None
    expires: str | None = None  # MM/YYYY
    expired: bool = False
    paypal_email: str | None = None
    gift_card_balance: float | None = None


class CustomerDetails(BaseModel):
    customer_id: str
    first_name: str
    last_name: str
    email: str
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


class OrderItemView(BaseModel):
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


class PaymentView(BaseModel):
    transaction_id: str
    kind: str  # charge | refund
    payment_method_id: str
    payment_method: str
    amount: float
    status: str  # captured | pending | completed | queued
    reason: str
    created_at: str


class ShipmentView(BaseModel):
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


class ReturnView(BaseModel):
    return_id: str
    reason: str
    item_ids: list[str]
    refund_amount: float
    refund_payment_method_id: str | None
    return_tracking_number: str | None
    created_at: str


class ExchangeView(BaseModel):
    exchange_id: str
    reason: str
    returned_item_ids: list[str]
    replacement_item_ids: list[str]
    price_difference: float  # positive: charged to the customer; negative: refunded
    payment_method_id: str | None
    return_tracking_number: str | None
    replacement_tracking_number: str | None
    created_at: str


class OrderDetails(BaseModel):
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


class OrderSummary(BaseModel):
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


class VariantView(BaseModel):
    variant_id: str
    sku: str
    options: dict[str, Any]
    price: float
    stock: int
    available: bool  # False: discontinued
    in_stock: bool  # available and at least one unit in stock


class ProductDetails(BaseModel):
    product_id: str
    name: str
    category: str
    description: str
    variants: list[VariantView]


class ProductSummary(BaseModel):
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


class TicketView(BaseModel):
    ticket_id: str
    status: str
    customer_id: str | None
    order_id: str | None
    summary: str
    created_at: str


class CalculationResult(BaseModel):
    expression: str
    result: float
