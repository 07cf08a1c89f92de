"""Build a fresh bank database: customers with their session verification rows, accounts, debit
cards, payees, and six and a half months of history (payroll, card purchases, subscriptions,
ATM withdrawals, transfers, interest, disputes) whose posted lines add up to each balance.

Situations the rules need are spread over customers by sampling (at least one customer each,
even at the small scale): restricted profiles, frozen and replaced cards, new payees, transfers
held for fraud review, transfers earlier today that eat into the daily limit, savings accounts
that used their six monthly withdrawals, pending card authorizations, open and resolved disputes,
closed accounts and customers who joined during the history.

Rows are built as dicts and bulk-inserted with `SeedContext.insert`. Only `ctx.rng` and
`ctx.faker` are random; every time is relative to `ctx.now`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from mcpsim.world import SeedContext

from ..rules import (
    ATM_LIMITS,
    MIN_PURCHASE_LIMIT,
    PRODUCTS,
    PURCHASE_LIMITS,
    SAVINGS_MONTHLY_WITHDRAWALS,
    SAVINGS_RATES_BPS,
    STATEMENT_MONTHS,
    iso,
    mask,
    month_start,
    new_card_number,
    next_month,
)
from ..tables import Account, Card, Customer, Dispute, IdentityVerification, Payee, Ticket, Transaction, Transfer
from .data import (
    ACCOUNT_NICKNAMES,
    BANKS,
    BUSINESS_PAYEES,
    CATEGORY_WEIGHTS,
    EMAIL_DOMAINS,
    MERCHANTS,
    PERSON_NICKNAMES,
    STATES,
    SUBSCRIPTIONS,
)

Row = dict[str, Any]

# Share of customers with each situation (each present at least once).
FEATURES = {
    "restricted": 0.03,
    "frozen_card": 0.07,
    "replaced_card": 0.2,
    "new_payee": 0.1,
    "held_transfer": 0.04,
    "transfers_today": 0.15,
    "savings_maxed": 0.04,
    "open_dispute": 0.07,
    "resolved_dispute": 0.05,
    "closed_account": 0.08,
    "second_checking": 0.12,
    "joined_recently": 0.08,
}
CHECKING_MIX = (("Everyday Checking", 55), ("Plus Checking", 30), ("Premier Checking", 15))
PAYROLL = {
    "Everyday Checking": (110_000, 260_000),
    "Plus Checking": (200_000, 420_000),
    "Premier Checking": (400_000, 900_000),
}
OPENING = {
    "Everyday Checking": (40_000, 300_000),
    "Plus Checking": (150_000, 800_000),
    "Premier Checking": (500_000, 3_000_000),
    "savings": (50_000, 4_000_000),
}


@dataclass
class Event:
    """Something that happens to an account during the history, applied in time order."""

    at: datetime
    account: str
    amount: int  # signed cents
    row: Row  # the transaction row (id filled when applied)
    transfer: Row | None = None  # the transfer this line belongs to (applied with its first line)
    partner: Event | None = None  # the other leg of an internal transfer
    optional: bool = True  # skipped if it would overdraw; otherwise always applied
    key: str = ""  # a name to find it again (disputes)
    applied: bool = field(default=False)


class Builder:
    def __init__(self, ctx: SeedContext) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.fake = ctx.faker
        self.now: datetime = ctx.now.astimezone(UTC)
        start = month_start(self.now)
        for _ in range(STATEMENT_MONTHS):
            start = month_start(start - timedelta(days=1))
        self.start = start  # the first day of retained history
        self.tables: dict[str, list[Row]] = {
            t: []
            for t in (
                "customers",
                "identity_verifications",
                "accounts",
                "cards",
                "payees",
                "transfers",
                "transactions",
                "disputes",
                "tickets",
            )
        }
        self.emails: set[str] = set()
        self.phones: set[str] = set()

    # -- helpers -------------------------------------------------------------------------------

    def id(self, kind: str) -> str:
        return self.ctx.ids.new(kind)

    def between(self, lo: datetime, hi: datetime) -> datetime:
        span = int((hi - lo).total_seconds())
        return lo + timedelta(seconds=self.rng.randint(0, max(span - 1, 0)))

    def money(self, lo: int, hi: int, step: int = 1) -> int:
        return self.rng.randint(lo // step, hi // step) * step

    def months(self) -> list[datetime]:
        out, m = [], self.start
        while m < self.now:
            out.append(m)
            m = next_month(m)
        return out

    def features(self, count: int) -> list[set[str]]:
        chosen: list[set[str]] = [set() for _ in range(count)]
        for name, share in FEATURES.items():
            k = min(count, max(1, round(count * share)))
            for index in self.rng.sample(range(count), k):
                chosen[index].add(name)
        return chosen

    # -- customers ------------------------------------------------------------------------------

    def build(self, count: int) -> None:
        for flags in self.features(count):
            self.customer(flags)

    def customer(self, flags: set[str]) -> None:
        rng, fake = self.rng, self.fake
        first, last = fake.first_name(), fake.last_name()
        cid = self.id("customer")
        email = self.unique_email(first, last)
        phone = self.unique_phone()
        born = date(1948, 1, 1) + timedelta(days=rng.randint(0, 365 * 57))
        if "joined_recently" in flags:
            since = self.between(self.start + timedelta(days=20), self.now - timedelta(days=25))
        else:
            since = self.between(datetime(2009, 1, 1, tzinfo=UTC), self.start - timedelta(days=200))
        self.tables["customers"].append(
            {
                "id": cid,
                "first_name": first,
                "last_name": last,
                "email": email,
                "phone": phone,
                "date_of_birth": born.isoformat(),
                "ssn_last4": f"{rng.randint(0, 9999):04d}",
                "line1": fake.street_address(),
                "line2": fake.secondary_address() if rng.random() < 0.25 else "",
                "city": fake.city(),
                "state": rng.choice(STATES),
                "zip": fake.zipcode(),
                "status": "restricted" if "restricted" in flags else "active",
                "customer_since": since.date().isoformat(),
                "updated_at": iso(since),
            }
        )
        self.tables["identity_verifications"].append({"customer_id": cid, "status": "unverified", "failed_attempts": 0})
        CustomerHistory(self, cid, first, last, since, flags).build()

    def unique_email(self, first: str, last: str) -> str:
        base = f"{first}.{last}".lower().replace("'", "").replace(" ", "")
        styles = (base, f"{first[0]}{last}".lower(), f"{first}{last}".lower(), f"{last}.{first}".lower())
        while True:
            name = self.rng.choice(styles).replace("'", "").replace(" ", "")
            if self.rng.random() < 0.5:
                name += str(self.rng.randint(1, 99))
            email = f"{name}@{self.rng.choice(EMAIL_DOMAINS)}"
            if email not in self.emails:
                self.emails.add(email)
                return email

    def unique_phone(self) -> str:
        while True:
            phone = f"{self.rng.randint(201, 989)}-{self.rng.randint(201, 989)}-{self.rng.randint(0, 9999):04d}"
            if phone not in self.phones:
                self.phones.add(phone)
                return phone

    def insert(self) -> None:
        for table in (Customer, IdentityVerification, Account, Card, Payee, Transfer, Transaction, Dispute, Ticket):
            self.ctx.insert(table, self.tables[table.__tablename__])


class CustomerHistory:
    """One customer's accounts, cards, payees and history."""

    def __init__(self, b: Builder, cid: str, first: str, last: str, since: datetime, flags: set[str]) -> None:
        self.b, self.rng, self.cid, self.first, self.last = b, b.rng, cid, first, last
        self.since, self.flags = since, flags
        self.events: list[Event] = []
        self.accounts: dict[str, Row] = {}
        self.cards: dict[str, list[tuple[datetime, Row]]] = {}  # account -> [(valid from, card)]
        self.payees: list[Row] = []
        self.balances: dict[str, int] = {}
        self.pending_cents: dict[str, int] = {}  # pending debits per account
        self.held_cents: dict[str, int] = {}  # held transfers per account
        self.today_cents: dict[str, int] = {}  # transfers out today per account
        self.purchases: list[Event] = []

    def build(self) -> None:
        b, rng = self.b, self.rng
        product = weighted(rng, CHECKING_MIX)
        checking = self.account(product, self.since)
        savings = None
        if rng.random() < 0.7 or "savings_maxed" in self.flags:
            opened = self.since if rng.random() < 0.6 else b.between(self.since, b.now - timedelta(days=20))
            savings = self.account(rng.choice(("Everyday Savings", "High-Yield Savings")), opened)
        second = None
        if "second_checking" in self.flags:
            second = self.account(
                "Everyday Checking",
                b.between(self.since, b.now - timedelta(days=30)),
                nickname=rng.choice(ACCOUNT_NICKNAMES),
            )
        if "closed_account" in self.flags:
            self.closed_account()
        for account in (checking, second):
            if account:
                self.card(account)
        self.make_payees()
        self.history(checking, savings, second)
        self.apply()
        self.today(checking, savings)
        self.pending(checking)
        self.disputes()
        for aid, account in self.accounts.items():
            account["balance_cents"] = self.balances.get(aid, account["balance_cents"])
            b.tables["accounts"].append(account)

    # -- accounts, cards, payees ------------------------------------------------------------------

    def account(self, product: str, opened: datetime, nickname: str | None = None) -> Row:
        kind, limit, _ = PRODUCTS[product]
        opened = max(opened, self.since)
        aid = self.b.id("account")
        lo, hi = OPENING["savings" if kind == "savings" else product]
        row = {
            "id": aid,
            "customer_id": self.cid,
            "number": "4" + self.b.ctx.ids.new("account_number")[1:],
            "type": kind,
            "product": product,
            "nickname": nickname,
            "status": "open",
            "balance_cents": 0,
            "daily_transfer_limit_cents": limit * 100,
            "interest_rate_bps": SAVINGS_RATES_BPS.get(product, 0),
            "opened_at": iso(opened),
            "closed_at": None,
            "updated_at": iso(opened),
        }
        self.accounts[aid] = row
        self.balances[aid] = self.b.money(lo, hi, 100) if opened < self.b.start else 0
        if opened >= self.b.start:  # a first deposit when the account is opened during the history
            self.events.append(
                self.line(
                    opened + timedelta(minutes=5),
                    aid,
                    self.b.money(lo, hi, 100) // 2 + 10_000,
                    "deposit",
                    "Opening deposit",
                    optional=False,
                )
            )
        return row

    def closed_account(self) -> None:
        b, rng = self.b, self.rng
        product = rng.choice(("Everyday Savings", "Everyday Checking"))
        kind, limit, _ = PRODUCTS[product]
        opened = b.between(self.since, self.since + timedelta(days=300))
        closed = b.between(opened + timedelta(days=60), b.now - timedelta(days=40))
        if closed <= opened:
            return
        aid = b.id("account")
        self.accounts[aid] = {
            "id": aid,
            "customer_id": self.cid,
            "number": "4" + b.ctx.ids.new("account_number")[1:],
            "type": kind,
            "product": product,
            "nickname": None,
            "status": "closed",
            "balance_cents": 0,
            "daily_transfer_limit_cents": limit * 100,
            "interest_rate_bps": SAVINGS_RATES_BPS.get(product, 0),
            "opened_at": iso(opened),
            "closed_at": iso(closed),
            "updated_at": iso(closed),
        }

    def card(self, account: Row) -> None:
        b, rng = self.b, self.rng
        tier = PRODUCTS[account["product"]][2]
        assert tier is not None, f"{account['product']} accounts have no debit card"
        opened = datetime.fromisoformat(account["opened_at"])
        purchase = PURCHASE_LIMITS[tier][0]
        atm = ATM_LIMITS[tier][0]
        if rng.random() < 0.2:
            purchase = self.b.money(MIN_PURCHASE_LIMIT * 10, PURCHASE_LIMITS[tier][1] * 100, 50_000) // 100
        if rng.random() < 0.1:
            atm = rng.choice([v for v in (200, 300, 400, 500, 800, 1_000, 1_500) if v <= ATM_LIMITS[tier][1]])
        current_from = max(opened, b.now - timedelta(days=3 * 365))
        cards: list[tuple[datetime, Row]] = []
        if "replaced_card" in self.flags and account["type"] == "checking" and not cards:
            issued = max(opened, b.now - timedelta(days=3 * 365))
            earliest = max(issued + timedelta(days=30), b.start + timedelta(days=10))
            replaced = b.between(earliest, b.now - timedelta(days=15))
            if issued < replaced < b.now - timedelta(days=1):
                reason = rng.choice(("lost", "damaged", "stolen", "lost"))
                old = self.card_row(account, tier, issued, purchase, atm)
                new = self.card_row(account, tier, replaced, purchase, atm)
                old.update(
                    status="closed",
                    closed_at=iso(replaced),
                    closed_reason=reason,
                    replaced_by_card_id=new["id"],
                    updated_at=iso(replaced),
                )
                new.update(replaces_card_id=old["id"], delivery=rng.choice(("standard", "standard", "expedited")))
                cards = [(issued, old), (replaced, new)]
        if not cards:
            issued = b.between(current_from, current_from + timedelta(days=20))
            cards = [(issued, self.card_row(account, tier, issued, purchase, atm))]
        first_account = next(iter(self.accounts.values()))
        if "frozen_card" in self.flags and account["type"] == "checking" and account is first_account:
            current = cards[-1][1]
            frozen = b.between(b.now - timedelta(days=12), b.now - timedelta(hours=3))
            current.update(status="frozen", frozen_at=iso(frozen), updated_at=iso(frozen))
        self.cards[account["id"]] = cards
        b.tables["cards"] += [row for _, row in cards]

    def card_row(self, account: Row, tier: str, issued: datetime, purchase: int, atm: int) -> Row:
        number = new_card_number(self.b.ctx.ids)
        return {
            "id": self.b.id("card"),
            "customer_id": self.cid,
            "account_id": account["id"],
            "number": number,
            "last4": number[-4:],
            "tier": tier,
            "status": "active",
            "purchase_limit": purchase,
            "atm_limit": atm,
            "expires": f"{issued.month:02d}/{issued.year + 4}",
            "issued_at": iso(issued),
            "frozen_at": None,
            "closed_at": None,
            "closed_reason": None,
            "replaces_card_id": None,
            "replaced_by_card_id": None,
            "delivery": None,
            "updated_at": iso(issued),
        }

    def card_at(self, account_id: str, at: datetime) -> Row | None:
        current = None
        for valid_from, card in self.cards.get(account_id, []):
            if valid_from <= at:
                current = card
        return current

    def make_payees(self) -> None:
        b, rng, fake = self.b, self.rng, self.b.fake
        count = rng.choice((0, 1, 1, 2, 2, 3, 4))
        if "new_payee" in self.flags or "held_transfer" in self.flags:
            count = max(count, 1)
        for n in range(count):
            bank, routing = rng.choice(BANKS)
            new = n == 0 and ("new_payee" in self.flags or "held_transfer" in self.flags)
            business = rng.random() < 0.35 and not new
            if business:
                pattern, nickname, monthly = rng.choice(BUSINESS_PAYEES)
                name = pattern.format(street=fake.street_name().split()[0], last=fake.last_name(), city=fake.city())
            else:
                name, nickname, monthly = fake.name(), rng.choice(PERSON_NICKNAMES), None
            created = b.between(max(self.since, b.start - timedelta(days=700)), b.now - timedelta(days=30))
            if new:
                created = b.between(b.now - timedelta(days=6, hours=12), b.now - timedelta(hours=20))
            self.payees.append(
                {
                    "id": b.id("payee"),
                    "customer_id": self.cid,
                    "name": name,
                    "nickname": nickname,
                    "bank_name": bank,
                    "routing_number": routing,
                    "account_number": str(rng.randint(10**7, 10**12 - 1)),
                    "account_type": "checking" if rng.random() < 0.85 else "savings",
                    "status": "active",
                    "created_at": iso(created),
                    "removed_at": None,
                    "_monthly": monthly,
                }
            )
        if self.payees and rng.random() < 0.12:  # an old payee the customer removed
            last = self.payees[-1]
            if last["created_at"] < iso(b.now - timedelta(days=60)) and not last["_monthly"]:
                last.update(
                    status="removed",
                    removed_at=iso(b.between(datetime.fromisoformat(last["created_at"]), b.now - timedelta(days=5))),
                )
        for payee in self.payees:
            b.tables["payees"].append({k: v for k, v in payee.items() if not k.startswith("_")})

    # -- history --------------------------------------------------------------------------------

    def draw_purchase(self) -> tuple[str, str, int]:
        """A card purchase's category, merchant and amount in cents (mostly small, a few large)."""
        category = weighted(self.rng, tuple(CATEGORY_WEIGHTS.items()))
        merchants, (lo, hi) = MERCHANTS[category]
        merchant = self.rng.choice(merchants)
        return category, merchant, int(lo * (hi / lo) ** (self.rng.random() ** 1.6))

    def purchase(self, at: datetime, account: str, card: Row, category: str, merchant: str, amount: int) -> Event:
        """The card purchase drawn by `draw_purchase`, with a store number on its description."""
        description = f"{merchant.upper()} #{self.rng.randint(100, 9999)}"
        return self.line(
            at, account, -amount, "card_purchase", description, merchant=merchant, category=category, card=card
        )

    def line(
        self,
        at: datetime,
        account: str,
        amount: int,
        kind: str,
        description: str,
        *,
        merchant: str | None = None,
        category: str | None = None,
        card: Row | None = None,
        optional: bool = True,
        key: str = "",
    ) -> Event:
        return Event(
            at=at,
            account=account,
            amount=amount,
            optional=optional,
            key=key,
            row={
                "account_id": account,
                "card_id": card["id"] if card else None,
                "transfer_id": None,
                "kind": kind,
                "description": description,
                "merchant": merchant,
                "category": category,
                "amount_cents": amount,
                "status": "posted",
                "posted_at": iso(at),
            },
        )

    def opened(self, account: Row) -> datetime:
        return datetime.fromisoformat(account["opened_at"])

    def history(self, checking: Row, savings: Row | None, second: Row | None) -> None:
        b, rng = self.b, self.rng
        end = b.now - timedelta(hours=40)  # later card activity is still pending (see `pending`)
        atm_towns = [b.fake.city().upper() for _ in range(3)]
        for account in (checking, second):
            if account is None:
                continue
            aid, start = account["id"], max(self.opened(account), b.start)
            main = account is checking
            if main:  # payroll every other Friday
                employer = b.fake.company().upper().replace(",", "")
                pay = b.money(*PAYROLL[account["product"]], 100) + rng.randint(0, 99)
                day = start + timedelta(days=(4 - start.weekday()) % 7 + rng.choice((0, 7)))
                day = day.replace(hour=rng.randint(6, 11), minute=rng.randint(0, 59), second=0)
                while day < b.now:
                    if day >= start:
                        self.events.append(
                            self.line(
                                day,
                                aid,
                                pay,
                                "deposit",
                                f"{employer} PAYROLL DIRECT DEP",
                                merchant=employer.title(),
                                category="income",
                                optional=False,
                            )
                        )
                    day += timedelta(days=14)
            subs = rng.sample(SUBSCRIPTIONS, rng.randint(0, 3) if main else rng.randint(0, 1))
            for merchant, category, amount in subs:
                day_of_month = rng.randint(1, 28)
                for m in b.months():
                    at = m.replace(day=day_of_month, hour=rng.randint(5, 20), minute=rng.randint(0, 59))
                    if start <= at < end and (card := self.card_at(aid, at)):
                        self.events.append(
                            self.line(
                                at,
                                aid,
                                -amount,
                                "card_purchase",
                                f"{merchant} recurring",
                                merchant=merchant,
                                category=category,
                                card=card,
                            )
                        )
            per_month = b.ctx.params["purchases_per_month"] if main else (2, 5)
            for m in b.months():
                lo_at, hi_at = max(m, start), min(next_month(m), end)
                if lo_at >= hi_at:
                    continue
                share = (hi_at - lo_at) / (next_month(m) - m)
                for _ in range(round(rng.randint(*per_month) * share)):
                    at = b.between(lo_at, hi_at)
                    card = self.card_at(aid, at)
                    if card is None:
                        continue
                    category, merchant, amount = self.draw_purchase()
                    event = self.purchase(at, aid, card, category, merchant, amount)
                    self.events.append(event)
                    self.purchases.append(event)
                    if rng.random() < 0.02 and category in ("shopping", "travel"):
                        back = at + timedelta(days=rng.randint(3, 12), hours=rng.randint(0, 12))
                        if back < end:
                            self.events.append(
                                self.line(
                                    back,
                                    aid,
                                    amount,
                                    "refund",
                                    f"{merchant.upper()} REFUND",
                                    merchant=merchant,
                                    category=category,
                                    card=card,
                                    key=f"refund:{id(event)}",
                                )
                            )
                for _ in range(rng.choice((0, 0, 1, 1, 2)) if main else 0):
                    at = b.between(lo_at, hi_at)
                    if card := self.card_at(aid, at):
                        amount = rng.choice((4_000, 6_000, 8_000, 10_000, 12_000, 20_000, 30_000))
                        self.events.append(
                            self.line(
                                at,
                                aid,
                                -amount,
                                "atm_withdrawal",
                                f"ATM WITHDRAWAL {rng.choice(atm_towns)}",
                                card=card,
                                category="cash",
                            )
                        )
        if savings is not None:
            self.savings_history(checking, savings)
        self.payee_payments(checking)

    def internal(self, at: datetime, source: Row, target: Row, amount: int, memo: str, optional: bool = True) -> None:
        transfer = {
            "id": None,
            "customer_id": self.cid,
            "kind": "internal",
            "from_account_id": source["id"],
            "to_account_id": target["id"],
            "payee_id": None,
            "amount_cents": amount,
            "memo": memo,
            "status": "completed",
            "hold_reason": None,
            "created_at": iso(at),
            "completed_at": iso(at),
            "cancelled_at": None,
        }
        out = self.line(
            at,
            source["id"],
            -amount,
            "transfer_out",
            f"Transfer to {target['product']} {mask(target['number'])}",
            optional=optional,
        )
        into = self.line(
            at, target["id"], amount, "transfer_in", f"Transfer from {source['product']} {mask(source['number'])}"
        )
        out.transfer, out.partner = transfer, into
        self.events.append(out)

    def savings_history(self, checking: Row, savings: Row) -> None:
        b, rng = self.b, self.rng
        start = max(self.opened(savings), self.opened(checking), b.start)
        monthly = b.money(5_000, 80_000, 2_500)
        for m in b.months():
            at = m.replace(day=rng.randint(2, 5), hour=rng.randint(12, 22), minute=rng.randint(0, 59))
            if start <= at < b.now - timedelta(days=1):
                self.internal(at, checking, savings, monthly, "Monthly savings")
            end_of_month = next_month(m) - timedelta(hours=1)
            if start <= end_of_month < b.now:
                self.events.append(
                    self.line(
                        end_of_month, savings["id"], 0, "interest", "Interest paid", optional=False, key="interest"
                    )
                )
            if rng.random() < 0.3 and m < month_start(b.now):
                at = b.between(max(m, start), next_month(m))
                if start <= at < b.now:
                    self.internal(at, savings, checking, b.money(10_000, 150_000, 5_000), "To checking")
        if "savings_maxed" in self.flags:
            m = month_start(b.now)
            for n in range(SAVINGS_MONTHLY_WITHDRAWALS):
                at = m + timedelta(days=2 * n + 1, hours=rng.randint(8, 20))
                self.internal(at, savings, checking, b.money(2_000, 20_000, 1_000), "To checking", optional=False)

    def payee_payments(self, checking: Row) -> None:
        b, rng = self.b, self.rng
        start = max(self.opened(checking), b.start)
        for payee in self.payees:
            created = datetime.fromisoformat(payee["created_at"])
            removed = datetime.fromisoformat(payee["removed_at"]) if payee["removed_at"] else b.now
            if created > b.now - timedelta(days=7):
                continue
            if payee["_monthly"]:
                lo, hi = payee["_monthly"]
                amount = b.money(lo, hi, 500)
                for m in b.months():
                    at = m.replace(day=1, hour=rng.randint(13, 20), minute=rng.randint(0, 59))
                    if max(start, created) <= at < min(removed, b.now - timedelta(days=2)):
                        self.external(at, checking, payee, amount, f"{payee['nickname'] or 'Payment'} {at:%B}")
            else:
                for m in b.months():
                    if rng.random() < 0.4:
                        at = b.between(max(m, start, created), min(next_month(m), removed, b.now - timedelta(days=2)))
                        if max(start, created) <= at < min(removed, b.now - timedelta(days=2)):
                            amount = b.money(2_000, 60_000, 500)
                            memo = rng.choice(("", "Thanks!", "Dinner", "Gift", "Share of bills"))
                            self.external(at, checking, payee, amount, memo)

    def external(
        self,
        at: datetime,
        source: Row,
        payee: Row,
        amount: int,
        memo: str,
        status: str = "completed",
        optional: bool = True,
    ) -> Event:
        transfer = {
            "id": None,
            "customer_id": self.cid,
            "kind": "external",
            "from_account_id": source["id"],
            "to_account_id": None,
            "payee_id": payee["id"],
            "amount_cents": amount,
            "memo": memo,
            "status": status,
            "hold_reason": None,
            "created_at": iso(at),
            "completed_at": iso(at + timedelta(days=1)) if status == "completed" else None,
            "cancelled_at": None,
        }
        event = self.line(
            at,
            source["id"],
            -amount,
            "transfer_out",
            f"Transfer to {payee['name']} {mask(payee['account_number'])}",
            optional=optional,
        )
        event.transfer = transfer
        if status == "pending":
            event.row["status"] = "pending"
        self.events.append(event)
        return event

    def apply(self) -> None:
        """Apply the history in time order: debits that would overdraw are dropped."""
        b = self.b
        self.events.sort(key=lambda e: (e.at, e.amount < 0))
        refunded: set[str] = set()
        for event in self.events:
            if event.key.startswith("refund:") and event.key not in refunded:
                continue  # the purchase it refunds was dropped
            if event.key == "interest":
                rate = self.accounts[event.account]["interest_rate_bps"]
                event.amount = event.row["amount_cents"] = round(self.balances[event.account] * rate / 10_000 / 12)
                if event.amount <= 0:
                    continue
            pending = event.row["status"] == "pending"
            if event.amount < 0 and self.balances[event.account] + event.amount < 0:
                if event.optional:
                    continue
                # a mandatory debit always goes through: the customer deposited a check before it
                needed = -(self.balances[event.account] + event.amount)
                self.commit(
                    self.line(
                        event.at - timedelta(hours=2),
                        event.account,
                        needed - needed % 10_000 + 20_000,
                        "deposit",
                        "Mobile check deposit",
                    )
                )
            self.commit(event, pending)
            if event.amount < 0 and event.row["kind"] == "card_purchase":
                refunded.add(f"refund:{id(event)}")
        del b

    def commit(self, event: Event, pending: bool = False) -> None:
        b = self.b
        if event.transfer is not None:
            event.transfer["id"] = b.id("transfer")
            b.tables["transfers"].append(event.transfer)
            event.row["transfer_id"] = event.transfer["id"]
        event.row["id"] = b.id("transaction")
        b.tables["transactions"].append(event.row)
        if not pending:
            self.balances[event.account] += event.amount
        elif event.amount < 0:
            self.pending_cents[event.account] = self.pending_cents.get(event.account, 0) - event.amount
        midnight = iso(self.b.now.replace(hour=0, minute=0, second=0))
        if event.transfer is not None and event.transfer["created_at"] >= midnight:
            source = event.transfer["from_account_id"]
            self.today_cents[source] = self.today_cents.get(source, 0) + event.transfer["amount_cents"]
        event.applied = True
        if event.partner is not None:
            event.partner.row["transfer_id"] = event.row["transfer_id"]
            self.commit(event.partner)

    # -- the present: today's transfers, holds, pending authorizations, disputes -------------------

    def available(self, account: Row) -> int:
        aid = account["id"]
        return self.balances[aid] - self.pending_cents.get(aid, 0) - self.held_cents.get(aid, 0)

    def today(self, checking: Row, savings: Row | None) -> None:
        b, rng = self.b, self.rng
        midnight = b.now.replace(hour=0, minute=0, second=0)
        active = [p for p in self.payees if p["status"] == "active"]
        old = [p for p in active if p["created_at"] < iso(b.now - timedelta(days=7))]
        new = [p for p in active if p["created_at"] >= iso(b.now - timedelta(days=7))]
        if "transfers_today" in self.flags:
            limit = checking["daily_transfer_limit_cents"]
            amount = min(b.money(limit * 35 // 100, limit * 85 // 100, 1_000), max(self.available(checking) - 5_000, 0))
            amount -= amount % 1_000
            at = b.between(midnight + timedelta(hours=1), b.now - timedelta(minutes=20))
            if amount > 0:
                if old and (savings is None or rng.random() < 0.5):
                    event = self.external(
                        at,
                        checking,
                        rng.choice(old),
                        amount,
                        rng.choice(("", "Rent", "Invoice 2231", "Thanks")),
                        status="pending",
                    )
                    self.events.remove(event)
                    self.commit(event, pending=True)
                elif savings is not None:
                    self.internal(at, checking, savings, amount, "Savings top-up")
                    event = self.events.pop()
                    self.commit(event)
        if "held_transfer" in self.flags and new:
            payee = new[0]
            created = datetime.fromisoformat(payee["created_at"])
            earliest = max(created + timedelta(hours=1), midnight - timedelta(hours=6))
            at = b.between(earliest, b.now - timedelta(minutes=10))
            used = self.today_cents.get(checking["id"], 0) if at >= midnight else 0
            room = min(self.available(checking) - 5_000, checking["daily_transfer_limit_cents"] - used)
            amount = min(b.money(120_000, 400_000, 5_000), room - room % 5_000)
            if amount > 100_000:
                self.held_cents[checking["id"]] = amount
                if at >= midnight:
                    self.today_cents[checking["id"]] = self.today_cents.get(checking["id"], 0) + amount
                b.tables["transfers"].append(
                    {
                        "id": b.id("transfer"),
                        "customer_id": self.cid,
                        "kind": "external",
                        "from_account_id": checking["id"],
                        "to_account_id": None,
                        "payee_id": payee["id"],
                        "amount_cents": amount,
                        "memo": rng.choice(("", "Deposit", "Car purchase", "Loan")),
                        "status": "held",
                        "hold_reason": f"Payee added {payee['created_at'][:10]}, less than 7 days ago, "
                        "and the amount is "
                        "above $1,000.00: held for fraud review",
                        "created_at": iso(at),
                        "completed_at": None,
                        "cancelled_at": None,
                    }
                )

    def pending(self, checking: Row) -> None:
        b, rng = self.b, self.rng
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            at = b.between(b.now - timedelta(hours=40), b.now - timedelta(minutes=30))
            card = self.card_at(checking["id"], at)
            if card is None or card["status"] != "active":
                continue
            category, merchant, amount = self.draw_purchase()
            if amount >= self.available(checking):
                continue
            event = self.purchase(at, checking["id"], card, category, merchant, amount)
            event.row["status"] = "pending"
            self.commit(event, pending=True)

    def disputes(self) -> None:
        b, rng = self.b, self.rng
        applied = [e for e in self.purchases if e.applied and e.row["status"] == "posted"]
        plans = []
        if "open_dispute" in self.flags:
            recent = [e for e in applied if b.now - timedelta(days=50) <= e.at <= b.now - timedelta(days=4)]
            if recent:
                plans.append((rng.choice(recent), "open"))
        if "resolved_dispute" in self.flags:
            older = [e for e in applied if e.at <= b.now - timedelta(days=70)]
            if older:
                plans.append((rng.choice(older), rng.choice(("resolved_customer", "resolved_merchant"))))
        for event, status in plans:
            txn = event.row
            opened = event.at + timedelta(days=rng.randint(2, 12), hours=rng.randint(0, 8))
            opened = min(opened, b.now - timedelta(hours=2))
            reason = rng.choice(
                (
                    "not_received",
                    "duplicate_charge",
                    "not_as_described",
                    "incorrect_amount",
                    "cancelled_recurring" if "recurring" in txn["description"] else "not_received",
                )
            )
            amount = -txn["amount_cents"]
            dispute_id = b.id("dispute")
            credit = self.line(
                opened,
                event.account,
                amount,
                "dispute_credit",
                f"Provisional credit: dispute {dispute_id} ({txn['merchant']})",
                merchant=txn["merchant"],
            )
            self.commit(credit)
            resolved = None
            if status != "open":
                resolved = opened + timedelta(days=rng.randint(10, 40))
                if status == "resolved_merchant" and self.available(self.accounts[event.account]) < amount:
                    status = "resolved_customer"
                if status == "resolved_merchant":
                    reversal = self.line(
                        resolved,
                        event.account,
                        -amount,
                        "dispute_credit",
                        f"Provisional credit reversed: dispute {dispute_id} ({txn['merchant']})",
                        merchant=txn["merchant"],
                    )
                    self.commit(reversal)
            b.tables["disputes"].append(
                {
                    "id": dispute_id,
                    "customer_id": self.cid,
                    "account_id": event.account,
                    "transaction_id": txn["id"],
                    "card_id": txn["card_id"],
                    "reason": reason,
                    "description": DISPUTE_STORIES[reason].format(merchant=txn["merchant"]),
                    "amount_cents": amount,
                    "provisional_credit_cents": amount,
                    "credit_transaction_id": credit.row["id"],
                    "status": status,
                    "created_at": iso(opened),
                    "resolved_at": iso(resolved) if resolved else None,
                }
            )


DISPUTE_STORIES = {
    "not_received": "Paid {merchant} but the order never arrived and the merchant stopped answering.",
    "duplicate_charge": "{merchant} charged the same purchase twice.",
    "not_as_described": "The item from {merchant} was not what was advertised; return refused.",
    "incorrect_amount": "{merchant} charged more than the agreed price.",
    "cancelled_recurring": "Cancelled the {merchant} subscription but was charged again.",
    "unauthorized": "The customer did not make this purchase at {merchant}.",
}


def weighted(rng: Any, pairs: tuple[tuple[str, int], ...]) -> str:
    names = [p[0] for p in pairs]
    weights = [p[1] for p in pairs]
    return rng.choices(names, weights=weights, k=1)[0]
