"""The corpus: documents written about the universe (`universe.py`). Each organisation has a
profile (its chief executive as of 2023), a fiscal 2023 filing, a fiscal 2024 annual report (the
final figures, sometimes after preliminary results that it revises), product launch and repricing
news, news of a new chief executive or an acquisition, syndicated near-duplicates of some news, and
sector league tables of fiscal 2023 revenue. Filler commentary mentions organisations without
their figures. Every figure a document states agrees with the universe."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from .universe import SECTORS, Organisation

WIRES = ["Business Wire Daily", "The Ledger", "Market Courier", "Industry Dispatch"]


def _m(value: float) -> str:
    return f"${value:,.1f} million"


def _d(day: date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


def _price(value: float) -> str:
    return f"${value:,.2f}"


class Writer:
    """Appends documents with ids drawn in order; `filler` pads bodies with seeded prose."""

    def __init__(self, rng: random.Random, faker: Any, new_id: Callable[[], str]) -> None:
        self.rng, self.faker, self.new_id = rng, faker, new_id
        self.rows: list[dict[str, Any]] = []

    def filler(self, sentences: int) -> str:
        return str(self.faker.paragraph(nb_sentences=sentences))

    def add(self, kind: str, title: str, source: str, published: date, parts: list[str]) -> str:
        doc_id = self.new_id()
        body = "\n\n".join(p for p in parts if p)
        self.rows.append(
            {
                "id": doc_id,
                "kind": kind,
                "title": title,
                "source": source,
                "published": published.isoformat(),
                "body": body,
            }
        )
        return doc_id


def _profile(w: Writer, org: Organisation) -> None:
    ceo = org.former_ceo or org.ceo
    published = date(2023, w.rng.randint(1, 12), w.rng.randint(1, 28))
    org.docs["profile"] = w.add(
        "profile",
        f"{org.name}: company profile",
        "Company Registry",
        published,
        [
            f"{org.name} is a {org.sector} company headquartered in {org.city}, founded in {org.founded}.",
            w.filler(3),
            f"Chief executive officer: {ceo}. Sector: {org.sector}.",
        ],
    )


def _filings(w: Writer, org: Organisation) -> None:
    figures23 = (
        f"{org.name} reported revenue of {_m(org.revenue23)} for fiscal 2023. "
        f"At year end the company had {org.headcount23:,} employees."
    )
    org.docs["filing23"] = _annual_report(w, org, 2023, 3, (4, 12), [figures23])
    if org.revenue24_preliminary is not None:
        org.docs["preliminary24"] = w.add(
            "news",
            f"{org.name} posts preliminary fiscal 2024 results",
            w.rng.choice(WIRES),
            date(2025, 2, w.rng.randint(1, 27)),
            [
                f"{org.name} said preliminary, unaudited revenue for fiscal 2024 was about "
                f"{_m(org.revenue24_preliminary)}. Final figures will follow in the annual report.",
                w.filler(3),
            ],
        )
    revised = (
        " This revises the preliminary figure published in February." if org.revenue24_preliminary is not None else ""
    )
    figures24 = [
        f"Audited revenue for fiscal 2024 was {_m(org.revenue24)}.{revised} "
        f"The company had {org.headcount24:,} employees at the end of fiscal 2024.",
        f"For comparison, fiscal 2023 revenue was {_m(org.revenue23)}, with {org.headcount23:,} employees.",
    ]
    org.docs["report24"] = _annual_report(w, org, 2024, 4, (5, 14), figures24)


def _annual_report(
    w: Writer, org: Organisation, fiscal: int, month: int, lead: tuple[int, int], figures: list[str]
) -> str:
    """The annual report of fiscal year `fiscal`, filed in `month` of the next year: `figures`
    after a run of filler paragraphs (between the two numbers of `lead`), then a little more."""
    published = date(fiscal + 1, month, w.rng.randint(1, 28))
    body = [w.filler(w.rng.randint(*lead)), *figures, w.filler(2)]
    return w.add("filing", f"{org.name} annual report, fiscal {fiscal}", "Securities Filings", published, body)


def _products(w: Writer, org: Organisation) -> None:
    for i, product in enumerate(org.products):
        org.docs[f"launch{i}"] = w.add(
            "news",
            f"{org.name} launches {product.name}",
            w.rng.choice(WIRES),
            product.launched,
            [
                f"{org.name} launched {product.name} on {_d(product.launched)} at a list price of "
                f"{_price(product.price)}.",
                w.filler(3),
            ],
        )
        if product.new_price is not None and product.repriced is not None:
            org.docs[f"reprice{i}"] = w.add(
                "news",
                f"{product.name} gets a new price",
                w.rng.choice(WIRES),
                product.repriced,
                [
                    w.filler(2),
                    f"From {_d(product.repriced)}, {org.name} sells {product.name} at a list price of "
                    f"{_price(product.new_price)}, down from its launch price.",
                ],
            )


def _events(w: Writer, org: Organisation) -> None:
    if org.ceo_since is not None:
        parts = [
            f"{org.name} named {org.ceo} chief executive officer, effective {_d(org.ceo_since)}. "
            f"{org.ceo} joins from {org.ceo_prior_employer} and succeeds {org.former_ceo}.",
            w.filler(3),
        ]
        title = f"{org.name} appoints {org.ceo} as chief executive"
        org.docs["ceo_news"] = w.add("news", title, w.rng.choice(WIRES), org.ceo_since, parts)
        if w.rng.random() < 0.5:  # a syndicated copy: same facts, another outlet, a day later
            copy = w.add("news", f"{title} (syndicated)", w.rng.choice(WIRES), org.ceo_since + timedelta(days=1), parts)
            org.docs["ceo_news_copy"] = copy
    if org.acquired is not None and org.acquisition_date is not None and org.acquisition_price is not None:
        org.docs["acquisition"] = w.add(
            "news",
            f"{org.name} completes acquisition of {org.acquired}",
            w.rng.choice(WIRES),
            org.acquisition_date,
            [
                w.filler(2),
                f"{org.name} completed its acquisition of {org.acquired} on {_d(org.acquisition_date)} "
                f"for {_m(org.acquisition_price)} in cash.",
            ],
        )


def _league_tables(w: Writer, orgs: list[Organisation]) -> None:
    """One table per sector: fiscal 2023 revenue of its organisations (stale for fiscal 2024)."""
    for sector in SECTORS:
        members = sorted((o for o in orgs if o.sector == sector), key=lambda o: -o.revenue23)
        if not members:
            continue
        lines = [f"| {o.name} | {_m(o.revenue23)} |" for o in members]
        w.add(
            "table",
            f"League table: {sector} revenue, fiscal 2023",
            "Sector Review",
            date(2024, 5, 15),
            [
                f"Revenue of {sector} companies for fiscal 2023.",
                "| company | revenue |\n|---|---|\n" + "\n".join(lines),
            ],
        )


def _commentary(w: Writer, orgs: list[Organisation], count: int) -> None:
    for _ in range(count):
        named = w.rng.sample(orgs, k=min(3, len(orgs)))
        sector = w.rng.choice(SECTORS)
        w.add(
            "commentary",
            f"{sector.capitalize()} outlook: {w.faker.catch_phrase()}",
            w.rng.choice(WIRES),
            date(2024, 1, 1) + timedelta(days=w.rng.randint(0, 860)),
            [w.filler(3), f"Analysts mentioned {', '.join(o.name for o in named)} among others.", w.filler(3)],
        )


def write_corpus(
    rng: random.Random, faker: Any, orgs: list[Organisation], filler: int, new_id: Callable[[], str]
) -> list[dict[str, Any]]:
    """Every document, as rows of the documents table, in id order of drawing."""
    w = Writer(rng, faker, new_id)
    for org in orgs:
        _profile(w, org)
        _filings(w, org)
        _products(w, org)
        _events(w, org)
    _league_tables(w, orgs)
    _commentary(w, orgs, filler)
    return w.rows
