"""Transfer tools: between a customer's own accounts, to saved payees, and cancelling."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from sqlmodel import select

from mcpsim.world import ToolContext, WorldError, page

from .. import world
from ..inputs import AccountId, Amount, CustomerId, Limit, Memo, Offset, PayeeId, TransferId
from ..rules import (
    FRAUD_HOLD_THRESHOLD_CENTS,
    NEW_PAYEE_DAYS,
    check_outgoing,
    iso,
    mask,
    money,
    needs_fraud_hold,
    new_transaction,
    open_account_of,
    owned,
    to_cents,
    verified_customer,
)
from ..tables import Account, Customer, Payee, Transaction, Transfer
from ..views import TransferList, TransferView, transfer_view


@world.tool(irreversible=True)
def transfer_between_own_accounts(
    ctx: ToolContext,
    customer_id: CustomerId,
    from_account_id: AccountId,
    to_account_id: AccountId,
    amount: Amount,
    memo: Memo = "",
) -> TransferView:
    """Move money at once between two open accounts of the same verified customer. Refused above
    the source account's available balance or its daily transfer limit (all transfers out of the
    account today, UTC, count), and from a savings account that already made 6 transfers out this
    calendar month."""
    customer = verified_customer(ctx.session, customer_id)
    source = owned(ctx.session, customer, Account, from_account_id)
    target = open_account_of(ctx.session, customer, to_account_id)
    if source.id == target.id:
        raise WorldError("The source and destination accounts are the same")
    cents = to_cents(amount)
    check_outgoing(ctx.session, source, cents, ctx.now)
    now = iso(ctx.now)
    transfer = _new_transfer(
        ctx, customer, source, "internal", cents, memo, "completed", to_account_id=target.id, completed_at=now
    )
    for account, sign, text in (
        (source, -1, f"Transfer to {target.product} {mask(target.number)}"),
        (target, 1, f"Transfer from {source.product} {mask(source.number)}"),
    ):
        kind = "transfer_out" if sign < 0 else "transfer_in"
        ctx.session.add(new_transaction(ctx, account, kind, text, sign * cents, transfer_id=transfer.id))
        account.balance_cents += sign * cents
        account.updated_at = now
        ctx.session.add(account)
    return transfer_view(ctx.session, transfer)


@world.tool(irreversible=True)
def transfer_to_payee(
    ctx: ToolContext,
    customer_id: CustomerId,
    from_account_id: AccountId,
    payee_id: PayeeId,
    amount: Amount,
    memo: Memo = "",
) -> TransferView:
    """Send money from a verified customer's open checking account to one of their saved payees.
    Refused above the available balance or the account's daily transfer limit (all transfers out
    today, UTC, count). It is pending (settles the next business day; the amount leaves the
    available balance at once) unless the payee is new (added less than 7 days ago) and the
    amount is above $1,000.00: then it is held for fraud review (status held, the amount is
    reserved) and nothing is sent until the fraud team releases it."""
    customer = verified_customer(ctx.session, customer_id)
    source = owned(ctx.session, customer, Account, from_account_id)
    payee = owned(ctx.session, customer, Payee, payee_id)
    if payee.status != "active":
        raise WorldError(f"Payee {payee.id} ({payee.name}) was removed; add it again to send money")
    if source.type != "checking":
        raise WorldError(
            f"Transfers to payees can only be sent from a checking account; {source.id} is a {source.type} account"
        )
    cents = to_cents(amount)
    check_outgoing(ctx.session, source, cents, ctx.now)
    held = needs_fraud_hold(payee, cents, ctx.now)
    hold_reason = (
        f"Payee added {payee.created_at[:10]}, less than {NEW_PAYEE_DAYS} days ago, and the amount is above "
        f"{money(FRAUD_HOLD_THRESHOLD_CENTS)}: held for fraud review"
    )
    transfer = _new_transfer(
        ctx,
        customer,
        source,
        "external",
        cents,
        memo,
        "held" if held else "pending",
        payee_id=payee.id,
        hold_reason=hold_reason if held else None,
    )
    if not held:
        text = f"Transfer to {payee.name} {mask(payee.account_number)}"
        ctx.session.add(new_transaction(ctx, source, "transfer_out", text, -cents, "pending", transfer_id=transfer.id))
    return transfer_view(ctx.session, transfer)


def _new_transfer(
    ctx: ToolContext,
    customer: Customer,
    source: Account,
    kind: str,
    cents: int,
    memo: str,
    status: str,
    **details: str | None,
) -> Transfer:
    """A transfer out of `source`, made now and flushed, so that its transactions can refer to it."""
    transfer = Transfer(
        id=ctx.new_id("transfer"),
        customer_id=customer.id,
        kind=kind,
        from_account_id=source.id,
        amount_cents=cents,
        memo=memo.strip(),
        status=status,
        created_at=iso(ctx.now),
        **details,
    )
    ctx.session.add(transfer)
    ctx.session.flush()
    return transfer


@world.tool(read_only=True, idempotent=True)
def list_transfers(
    ctx: ToolContext,
    customer_id: CustomerId,
    account_id: Annotated[AccountId | None, Field(description="Only transfers out of this account.")] = None,
    status: Annotated[
        Literal["completed", "pending", "held", "cancelled"] | None,
        Field(description="Only transfers with this status."),
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> TransferList:
    """A verified customer's transfers (internal and to payees), newest first."""
    customer = verified_customer(ctx.session, customer_id)
    conditions = [Transfer.customer_id == customer.id]
    if account_id:
        conditions.append(Transfer.from_account_id == owned(ctx.session, customer, Account, account_id).id)
    if status:
        conditions.append(Transfer.status == status)
    newest_first = [Transfer.created_at.desc(), Transfer.id]  # type: ignore[attr-defined]
    total, rows = page(ctx.session, Transfer, conditions, newest_first, offset=offset, limit=limit)
    return TransferList(
        customer_id=customer.id,
        total_count=total,
        offset=offset,
        transfers=[transfer_view(ctx.session, t) for t in rows],
    )


@world.tool(read_only=True, idempotent=True)
def get_transfer(ctx: ToolContext, customer_id: CustomerId, transfer_id: TransferId) -> TransferView:
    """One transfer of a verified customer, with its status and any fraud-hold reason."""
    customer = verified_customer(ctx.session, customer_id)
    return transfer_view(ctx.session, owned(ctx.session, customer, Transfer, transfer_id))


@world.tool(destructive=True, idempotent=True)
def cancel_pending_transfer(ctx: ToolContext, customer_id: CustomerId, transfer_id: TransferId) -> TransferView:
    """Cancel a verified customer's transfer that is still pending or held for review: nothing is
    sent, and the amount is back in the available balance (and no longer counts toward today's
    limit). Completed transfers cannot be cancelled."""
    customer = verified_customer(ctx.session, customer_id)
    transfer = owned(ctx.session, customer, Transfer, transfer_id)
    if transfer.status not in ("pending", "held"):
        raise WorldError(
            f"Transfer {transfer.id} is {transfer.status}; only pending or held transfers can be cancelled"
        )
    now = iso(ctx.now)
    for txn in ctx.session.exec(
        select(Transaction).where(Transaction.transfer_id == transfer.id, Transaction.status == "pending")
    ):
        txn.status = "cancelled"
        ctx.session.add(txn)
    transfer.status, transfer.cancelled_at = "cancelled", now
    ctx.session.add(transfer)
    return transfer_view(ctx.session, transfer)
