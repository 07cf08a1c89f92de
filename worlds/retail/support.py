"""Support tools: arithmetic for the agent, and handing a conversation to a human."""

from __future__ import annotations

import ast
import math
import operator
from typing import Annotated, Any

from pydantic import Field

from mcpsim.world import ToolContext, WorldError

from . import world
from .common import iso, new_id
from .inputs import CustomerId, OrderId
from .lookups import get_customer, get_order
from .tables import Ticket
from .views import CalculationResult, TicketView

_BINARY: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Any] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > 64 or abs(left) > 1e6):
            raise WorldError("Exponent too large")
        return _BINARY[type(node.op)](left, right)
    raise WorldError("Only numbers, parentheses and + - * / % ** are allowed")


@world.tool(read_only=True, idempotent=True)
def calculate(
    ctx: ToolContext,
    expression: Annotated[
        str, Field(description="An arithmetic expression, such as '(49.99 * 2) - 10'.", min_length=1, max_length=200)
    ],
) -> CalculationResult:
    """Evaluate an arithmetic expression (numbers, parentheses, + - * / % **); the result is
    rounded to two decimals. Use it for totals, price differences and refunds."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise WorldError(f"'{expression}' is not an arithmetic expression") from None
    try:
        result = _evaluate(tree)
    except ZeroDivisionError:
        raise WorldError("Division by zero") from None
    except OverflowError:
        raise WorldError("The result is too large") from None
    if isinstance(result, complex) or not math.isfinite(result):
        raise WorldError("The result is not a finite real number")
    return CalculationResult(expression=expression, result=round(result, 2))


@world.tool()
def transfer_to_human_agent(
    ctx: ToolContext,
    summary: Annotated[
        str,
        Field(
            description="What the customer wants, what was done and why a human is needed.",
            min_length=10,
            max_length=2000,
        ),
    ],
    customer_id: Annotated[CustomerId | None, Field(description="The customer, if authenticated.")] = None,
    order_id: Annotated[OrderId | None, Field(description="The order concerned, if any.")] = None,
) -> TicketView:
    """Hand the conversation to a human agent by opening a ticket with a summary. Only for requests
    this policy and these tools cannot handle; after calling it, tell the customer they are being
    transferred and stop."""
    session = ctx.session
    customer = get_customer(session, customer_id) if customer_id else None
    order = get_order(session, order_id) if order_id else None
    if customer and order and order.customer_id != customer.id:
        raise WorldError(f"Order {order.id} does not belong to customer {customer.id}")
    ticket = Ticket(
        id=new_id(ctx.ids, "ticket"),
        customer_id=customer.id if customer else (order.customer_id if order else None),
        order_id=order.id if order else None,
        summary=summary.strip(),
        status="open",
        created_at=iso(ctx.now),
    )
    session.add(ticket)
    return TicketView(
        ticket_id=ticket.id,
        status=ticket.status,
        customer_id=ticket.customer_id,
        order_id=ticket.order_id,
        summary=ticket.summary,
        created_at=ticket.created_at,
    )
