"""Order tools: looking orders up, tracking parcels, placing an order and changing where it goes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mcpsim.world import PartialFailure, ToolContext, WorldError, iso, sql

from .. import world
from ..inputs import City, CustomerId, ItemQuantity, Line1, Line2, OrderId, PaymentMethodId, State, Zip
from ..ledger import charge, check_can_pay
from ..rules import (
    MAX_ORDER_LINES,
    OPEN_STATUSES,
    get_address_of,
    get_order_row,
    get_payment_method_of,
    new_line_values,
    normalize_order_id,
    refuse_duplicates,
)
from ..tables import Address, Customer, Order, OrderItem, Product, Shipment, Variant
from ..views import OrderDetails, OrderList, ShipmentTracking, ShipmentView, order_details, order_summary

StatusFilter = Literal[
    "payment_pending",
    "pending",
    "processing",
    "shipped",
    "delivered",
    "cancelled",
    "returned",
    "partially_returned",
    "exchanged",
]


@world.tool(read_only=True, idempotent=True)
def get_order_details(ctx: ToolContext, order_id: OrderId) -> OrderDetails:
    """Everything about one order: status, shipping address, items (each with its item id, variant,
    options, unit price and status), payments and refunds, shipments with tracking numbers,
    returns and exchanges."""
    order = sql.find(ctx, Order, normalize_order_id(order_id))
    if order is None:
        raise WorldError(f"Order {order_id} not found")
    return order_details(ctx, order)


@world.tool(read_only=True, idempotent=True)
def list_customer_orders(
    ctx: ToolContext,
    customer_id: CustomerId,
    status: Annotated[StatusFilter | None, Field(description="Only orders with this status.")] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="At most this many orders (1-50).")] = 10,
    offset: Annotated[int, Field(ge=0, le=100_000, description="Skip this many orders (for paging).")] = 0,
) -> OrderList:
    """A customer's orders, newest first, one page at a time, optionally only those with one status."""
    customer = sql.get(ctx, Customer, customer_id.strip())
    where, params = "customer_id = ?", [customer.id]
    if status is not None:
        where, params = f"{where} AND status = ?", [*params, status]
    total = sql.scalar(ctx, f"SELECT COUNT(*) FROM orders WHERE {where}", params)
    orders = sql.select(ctx, Order, where, params, order="placed_at DESC, id DESC", limit=limit, offset=offset)
    items: dict[str, list[Any]] = {o.id: [] for o in orders}
    if orders:  # every page's lines in one query
        marks = ", ".join("?" * len(items))
        for item in sql.select(ctx, OrderItem, f"order_id IN ({marks})", list(items)):
            items[item.order_id].append(item)
    return OrderList(
        customer_id=customer.id,
        status=status,
        total_count=total,
        offset=offset,
        orders=[order_summary(o, items[o.id]) for o in orders],
    )


@world.tool(read_only=True, idempotent=True)
def track_shipment(
    ctx: ToolContext,
    tracking_number: Annotated[str, Field(description="The carrier's tracking number.", max_length=40)],
) -> ShipmentTracking:
    """Where a parcel is: carrier, status (label_created, in_transit, out_for_delivery, delivered),
    ship date, estimated delivery date, delivery time, and which order lines it carries."""
    shipment = sql.first(ctx, Shipment, "tracking_number = ?", (tracking_number.strip(),))
    if shipment is None:
        raise WorldError(f"No shipment has tracking number {tracking_number}")
    item_ids = sql.scalars(
        ctx, "SELECT order_items.id FROM order_items WHERE order_items.shipment_id = ?", (shipment.id,)
    )
    return ShipmentTracking(shipment=ShipmentView.from_row(shipment), item_ids=item_ids)


@world.tool(partial_failures=True, irreversible=True)
def place_order(
    ctx: ToolContext,
    customer_id: CustomerId,
    items: Annotated[
        list[ItemQuantity],
        Field(min_length=1, max_length=MAX_ORDER_LINES, description="What to buy: variant ids and quantities."),
    ],
    payment_method_id: Annotated[
        PaymentMethodId, Field(description="The customer's payment method that pays the whole order.")
    ],
    address_id: Annotated[
        str | None,
        Field(
            description="An address from the customer's address book to ship to; the default address if omitted.",
            max_length=40,
        ),
    ] = None,
) -> OrderDetails:
    """Place a new order for a customer. Every variant must be available (not discontinued) and in
    stock in the quantity asked; the stock is reserved at once. One payment method pays the whole
    order: a credit card that has not expired, PayPal, or a gift card whose balance covers the total
    (the balance is debited). Prices are the current variant prices; shipping is free. If the
    payment cannot be captured after the order is created, the order stays 'payment_pending' with
    its items reserved: charge it with retry_order_payment."""
    customer = sql.get(ctx, Customer, customer_id.strip())
    refuse_duplicates([line.variant_id for line in items], "Variant")
    method = get_payment_method_of(ctx, payment_method_id, customer.id)
    if address_id:
        address = get_address_of(ctx, address_id, customer.id)
    else:
        address = sql.find(ctx, Address, customer.default_address_id)
        if address is None:
            raise WorldError(f"Customer {customer.id} has no default address")

    chosen = []
    for line in items:
        variant = sql.get(ctx, Variant, line.variant_id.strip())
        if not variant.available:
            raise WorldError(f"Variant {variant.id} is discontinued and cannot be ordered")
        if variant.stock < line.quantity:
            raise WorldError(
                f"Only {variant.stock} unit(s) of variant {variant.id} are in stock; {line.quantity} asked"
            )
        chosen.append((variant, line.quantity))
    total = sum(v.price_cents * q for v, q in chosen)
    check_can_pay(method, total, ctx.now)

    order = sql.insert(
        ctx,
        Order,
        id=ctx.new_id("order"),
        customer_id=customer.id,
        status="pending",
        placed_at=iso(ctx.now),
        updated_at=iso(ctx.now),
        ship_name=f"{customer.first_name} {customer.last_name}",
        ship_line1=address.line1,
        ship_line2=address.line2,
        ship_city=address.city,
        ship_state=address.state,
        ship_zip=address.zip,
        ship_country=address.country,
    )
    # The lines and the stock they take, written as the ORM wrote them (the change log's order):
    # queued, and flushed before a read of a product it had not loaded, and at the end.
    writes = sql.Writes(ctx)
    products: dict[str, str] = {}  # id -> name
    stock = {variant.id: variant.stock for variant, _ in chosen}
    for variant, quantity in chosen:
        if variant.product_id not in products:
            writes.flush()
            product = sql.find(ctx, Product, variant.product_id)
            assert product is not None, f"variant {variant.id} has no product"
            products[product.id] = product.name
        writes.insert(OrderItem, **new_line_values(ctx, order.id, variant, products[variant.product_id], quantity))
        stock[variant.id] -= quantity
        writes.update(Variant, variant.id, stock=stock[variant.id])
    writes.flush()
    if ctx.fault == "partial":  # the payment processor failed after the order was written
        sql.update(ctx, Order, order.id, status="payment_pending")
        raise PartialFailure(
            f"The payment could not be captured: order {order.id} was created and its items are reserved, but it is "
            "awaiting payment. Charge it with retry_order_payment (this or another payment method of the customer)."
        )
    charge(ctx, order, method, total, "purchase")
    return order_details(ctx, order)


@world.tool(irreversible=True)
def retry_order_payment(ctx: ToolContext, order_id: OrderId, payment_method_id: PaymentMethodId) -> OrderDetails:
    """Charge an order whose payment failed when it was placed (status 'payment_pending') with one
    of the customer's payment methods; the order then becomes 'pending'. Orders in any other status
    are already paid or closed."""
    order = get_order_row(ctx, order_id)
    if order.status != "payment_pending":
        raise WorldError(f"Order {order.id} has status '{order.status}'; only orders awaiting payment can be charged")
    method = get_payment_method_of(ctx, payment_method_id, order.customer_id)
    total = sql.scalar(
        ctx,
        "SELECT coalesce(sum(unit_price_cents * quantity), 0) FROM order_items WHERE order_id = ? AND status = ?",
        (order.id, "ordered"),
    )
    check_can_pay(method, total, ctx.now)
    charge(ctx, order, method, total, "purchase")
    changed = {"status": "pending", "updated_at": iso(ctx.now)}
    sql.update(ctx, Order, order.id, **changed)
    return order_details(ctx, order._replace(**changed))


@world.tool(idempotent=True)
def update_order_shipping_address(
    ctx: ToolContext,
    order_id: OrderId,
    line1: Line1,
    city: City,
    state: State,
    zip: Zip,
    line2: Line2 = "",
) -> OrderDetails:
    """Change where a pending or processing order will be shipped (a US address). Orders that have
    shipped cannot be redirected. The customer's address book is not changed."""
    order = get_order_row(ctx, order_id)
    if order.status not in OPEN_STATUSES:
        raise WorldError(
            f"Order {order.id} has status '{order.status}'; only pending or processing orders can have their "
            "shipping address changed"
        )
    new = (line1.strip(), line2.strip(), city.strip(), state, zip, "US")
    old = (order.ship_line1, order.ship_line2, order.ship_city, order.ship_state, order.ship_zip, order.ship_country)
    if new != old:  # the same address again changes nothing, not even the update time
        changed = {
            "ship_line1": new[0],
            "ship_line2": new[1],
            "ship_city": new[2],
            "ship_state": new[3],
            "ship_zip": new[4],
            "ship_country": new[5],
            "updated_at": iso(ctx.now),
        }
        sql.update(ctx, Order, order.id, **changed)
        order = order._replace(**changed)
    return order_details(ctx, order)
