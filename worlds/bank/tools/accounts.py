"""Account tools: balances and limits, transaction history and monthly statements."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import func
from sqlmodel import select

from mcpsim.world import ToolContext, WorldError, page

from .. import world
from ..inputs import AccountId, CardId, CustomerId, Date, Limit, Offset, TransactionId, TransactionKind
from ..rules import (
    STATEMENT_MONTHS,
    dollars,
    iso,
    mask,
    month_start,
    next_month,
    owned,
    transaction_of,
    verified_customer,
)
from ..tables import Account, Card, Transaction
from ..views import (
    AccountList,
    AccountView,
    StatementView,
    TransactionList,
    TransactionView,
    account_view,
    transaction_view,
    transaction_views,
)


@world.tool(read_only=True, idempotent=True)
def list_accounts(
    ctx: ToolContext,
    customer_id: CustomerId,
    include_closed: Annotated[bool, Field(description="Also list closed accounts.")] = False,
) -> AccountList:
    """A verified customer's accounts with posted balance, available balance (what can be moved:
    balance minus pending debits and held transfers), daily transfer limit and what is left of it
    today, and for savings how many of the 6 monthly withdrawals are used."""
    customer = verified_customer(ctx.session, customer_id)
    query = select(Account).where(Account.customer_id == customer.id)
    if not include_closed:
        query = query.where(Account.status == "open")
    accounts = ctx.session.exec(query.order_by(Account.opened_at, Account.id).limit(50)).all()
    return AccountList(customer_id=customer.id, accounts=[account_view(ctx.session, a, ctx.now) for a in accounts])


@world.tool(read_only=True, idempotent=True)
def get_account(ctx: ToolContext, customer_id: CustomerId, account_id: AccountId) -> AccountView:
    """One account of a verified customer: balances, pending debits, held transfers, the daily
    transfer limit, how much was transferred out today (UTC day) and how much more may go out."""
    customer = verified_customer(ctx.session, customer_id)
    return account_view(ctx.session, owned(ctx.session, customer, Account, account_id), ctx.now)


@world.tool(read_only=True, idempotent=True)
def list_transactions(
    ctx: ToolContext,
    customer_id: CustomerId,
    account_id: AccountId,
    start_date: Annotated[Date | None, Field(description="Earliest date, inclusive (YYYY-MM-DD).")] = None,
    end_date: Annotated[Date | None, Field(description="Latest date, inclusive (YYYY-MM-DD).")] = None,
    kind: Annotated[TransactionKind | None, Field(description="Only this kind of transaction.")] = None,
    card_id: Annotated[CardId | None, Field(description="Only transactions made with this card.")] = None,
    search: Annotated[
        str | None, Field(description="Text the merchant or description contains.", min_length=2, max_length=60)
    ] = None,
    status: Annotated[
        str | None, Field(description="posted, pending or cancelled.", pattern=r"^(posted|pending|cancelled)$")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> TransactionList:
    """A verified customer's transactions on one account, newest first, with filters. Amounts
    are negative for money out. Each line says whether it is pending and whether it has already
    been disputed (dispute_id)."""
    customer = verified_customer(ctx.session, customer_id)
    account = owned(ctx.session, customer, Account, account_id)
    conditions: list[Any] = [Transaction.account_id == account.id]  # SQLModel types a column comparison as bool
    if start_date:
        conditions.append(Transaction.posted_at >= start_date)
    if end_date:
        conditions.append(Transaction.posted_at < _day_after(end_date))
    if kind:
        conditions.append(Transaction.kind == kind)
    if card_id:
        conditions.append(Transaction.card_id == owned(ctx.session, customer, Card, card_id).id)
    if status:
        conditions.append(Transaction.status == status)
    if search:
        pattern = "%" + search.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        conditions.append(
            func.lower(func.coalesce(Transaction.merchant, "") + " " + Transaction.description).like(
                pattern, escape="\\"
            )
        )
    newest_first = [Transaction.posted_at.desc(), Transaction.id]  # type: ignore[attr-defined]
    total, rows = page(ctx.session, Transaction, conditions, newest_first, offset=offset, limit=limit)
    return TransactionList(
        account_id=account.id, total_count=total, offset=offset, transactions=transaction_views(ctx.session, rows)
    )


def _day_after(date: str) -> str:
    try:
        day = datetime.fromisoformat(date).replace(tzinfo=UTC)
    except ValueError:
        raise WorldError(f"{date} is not a valid date") from None
    return iso(day + timedelta(days=1))


@world.tool(read_only=True, idempotent=True)
def get_transaction(ctx: ToolContext, customer_id: CustomerId, transaction_id: TransactionId) -> TransactionView:
    """One transaction of a verified customer's accounts."""
    customer = verified_customer(ctx.session, customer_id)
    return transaction_view(ctx.session, transaction_of(ctx.session, customer, transaction_id))


@world.tool(read_only=True, idempotent=True)
def get_statement(
    ctx: ToolContext,
    customer_id: CustomerId,
    account_id: AccountId,
    period: Annotated[
        str, Field(description="The statement month, YYYY-MM, such as '2026-04'.", pattern=r"^\d{4}-(0[1-9]|1[0-2])$")
    ],
    limit: Annotated[
        int, Field(description="How many of the period's transactions to list (at most 100).", ge=0, le=100)
    ] = 50,
    offset: Offset = 0,
) -> StatementView:
    """The monthly statement of a verified customer's account: opening and closing balance,
    total credits and debits, and the posted transactions of the month (oldest first). Only
    closed periods have statements (the current month has none until it ends), and only the last
    6 closed months are available here; older copies need a human agent."""
    customer = verified_customer(ctx.session, customer_id)
    account = owned(ctx.session, customer, Account, account_id)
    start = datetime(int(period[:4]), int(period[5:]), 1, tzinfo=UTC)
    end = next_month(start)
    current = month_start(ctx.now)
    if end > ctx.now:
        closes = (next_month(current) - timedelta(days=1)).date().isoformat()
        raise WorldError(
            f"The {period} statement period is not closed yet"
            + (f" (it closes on {closes})" if start == current else "")
            + "; statements exist only for past months. Use list_transactions for recent activity."
        )
    oldest = current
    for _ in range(STATEMENT_MONTHS):
        oldest = month_start(oldest - timedelta(days=1))
    if start < oldest:
        raise WorldError(
            f"Only the last {STATEMENT_MONTHS} monthly statements are available ({oldest:%Y-%m} to "
            f"{month_start(current - timedelta(days=1)):%Y-%m}); an older copy needs a human agent"
        )
    if account.opened_at >= iso(end):
        raise WorldError(f"Account {account.id} was opened on {account.opened_at[:10]}, after the {period} period")
    if account.closed_at and account.closed_at < iso(start):
        raise WorldError(f"Account {account.id} was closed on {account.closed_at[:10]}, before the {period} period")
    posted = [Transaction.account_id == account.id, Transaction.status == "posted"]
    after_start = ctx.session.exec(
        select(func.coalesce(func.sum(Transaction.amount_cents), 0)).where(*posted, Transaction.posted_at >= iso(start))
    ).one()
    in_period = [*posted, Transaction.posted_at >= iso(start), Transaction.posted_at < iso(end)]
    credits, debits, count = ctx.session.exec(
        select(
            func.coalesce(func.sum(func.max(Transaction.amount_cents, 0)), 0),
            func.coalesce(func.sum(func.min(Transaction.amount_cents, 0)), 0),
            func.count(),
        ).where(*in_period)
    ).one()
    opening = account.balance_cents - int(after_start)
    rows = ctx.session.exec(
        select(Transaction)
        .where(*in_period)
        .order_by(Transaction.posted_at, Transaction.id)
        .offset(offset)
        .limit(limit)
    ).all()
    return StatementView(
        account_id=account.id,
        number=mask(account.number),
        period=period,
        period_start=start.date().isoformat(),
        period_end=(end - timedelta(days=1)).date().isoformat(),
        opening_balance=dollars(opening),
        total_credits=dollars(int(credits)),
        total_debits=dollars(int(debits)),
        closing_balance=dollars(opening + int(credits) + int(debits)),
        transaction_count=int(count),
        offset=offset,
        transactions=transaction_views(ctx.session, list(rows)),
    )
