"""The research world's easy task families, written from the universe (`generate.py` runs them):
a figure to reconcile with its revision, a chief executive who changed, a product repriced, a
headcount. The medium and hard tiers are in `harder_tasks.py`."""

from __future__ import annotations

from typing import Any

from .generate import Corpus, Task, m, money, rubric, search, task
from .seed.universe import Organisation

REFUSAL = {
    "phrase": "could not find",
    "synonyms": [
        "couldn't find",
        "cannot find",
        "can't find",
        "did not find",
        "didn't find",
        "found no",
        "no fiscal 2025",
        "not in the corpus",
        "does not hold",
        "doesn't hold",
        "not available",
        "no document",
        "not been published",
        "not published",
    ],
}


def _report(corpus: Corpus, org: Organisation, text: str = "Audited revenue") -> list[dict[str, Any]]:
    steps = [search(f"{org.name} annual report fiscal 2024")]
    if "preliminary24" in org.docs:
        steps.append({"tool": "open", "args": {"doc_id": org.docs["preliminary24"]}})
    return steps + corpus.reading(org.docs["report24"], text)


def _revenue(corpus: Corpus, org: Organisation, n: int) -> Task:
    forbidden = [money(org.revenue23)] + ([money(org.revenue24_preliminary)] if org.revenue24_preliminary else [])
    near = [
        {"name": "gives the preliminary figure, not the audited one",
         "answer": f"It was {m(org.revenue24_preliminary or 0)}."},
        {"name": "answers from the search snippet without opening the report",
         "steps": [search(f"{org.name} fiscal 2024 revenue")],
         "answer": f"{org.name}'s fiscal 2024 revenue was {m(org.revenue24)}."},
    ]  # fmt: skip
    sibling = corpus.sibling(org)
    if sibling is not None:
        wrong = f"Fiscal 2024 revenue was {m(sibling.revenue24)}."
        name = f"reads the report of {sibling.name}, a similarly named company"
        near.append({"name": name, "steps": _report(corpus, sibling), "answer": wrong})
    report = org.docs["report24"]
    return task(
        f"revenue-fy2024-{n}",
        f"What was {org.name}'s revenue for fiscal 2024? I need the final, audited figure.",
        f"{org.name}'s audited fiscal 2024 revenue.",
        _report(corpus, org),
        [money(org.revenue24)],
        forbidden,
        rubric(f"The agent said {org.name}'s audited fiscal 2024 revenue was {m(org.revenue24)}.", [[report]]),
        tags=["reconcile", "revision"],
        difficulty="easy",
        split="train",
        alternatives=[
            {"name": "reads only the annual report, finding the figure with find_in_page",
             "steps": [search(f"{org.name} revenue 2024"), {"tool": "open", "args": {"doc_id": report}},
                       {"tool": "find_in_page", "args": {"doc_id": report, "text": "audited revenue"}}],
             "answer": f"The fiscal 2024 annual report of {org.name} gives audited revenue of {m(org.revenue24)}."},
        ],
        near_misses=near,
    )  # fmt: skip


def _ceo(corpus: Corpus, org: Organisation, n: int) -> Task:
    news = [org.docs["ceo_news"]] + ([org.docs["ceo_news_copy"]] if "ceo_news_copy" in org.docs else [])
    gold = [search(f"{org.name} chief executive"), {"tool": "open", "args": {"doc_id": org.docs["profile"]}},
            {"tool": "open", "args": {"doc_id": news[0]}}]  # fmt: skip
    return task(
        f"ceo-now-{n}",
        f"Who is the chief executive of {org.name} today?",
        f"The name of {org.name}'s current chief executive.",
        gold,
        [{"name": org.ceo}],
        [{"name": org.former_ceo}],
        rubric(f"The agent named {org.ceo} as {org.name}'s chief executive (not {org.former_ceo}).", [news]),
        tags=["reconcile", "outdated"],
        difficulty="easy",
        split="train",
        alternatives=[
            {"name": f"reads the {'syndicated copy of the ' if len(news) > 1 else ''}appointment news only",
             "steps": [search(f"{org.name} appoints chief executive"), {"tool": "open", "args": {"doc_id": news[-1]}}],
             "answer": f"{org.name} is now led by {org.ceo}, according to the appointment news."},
        ],
        near_misses=[
            {"name": "names the chief executive of the older company profile", "answer": f"It is {org.former_ceo}."},
            {"name": "reads only the profile", "steps": gold[:2], "answer": f"{org.former_ceo} leads {org.name}."},
        ],
    )  # fmt: skip


def _price(corpus: Corpus, org: Organisation, n: int) -> Task:
    i, product = next((i, p) for i, p in enumerate(org.products) if p.new_price is not None)
    assert product.new_price is not None
    launch, reprice = org.docs[f"launch{i}"], org.docs[f"reprice{i}"]
    gold = [search(f"{product.name} price"), {"tool": "open", "args": {"doc_id": launch}},
            {"tool": "open", "args": {"doc_id": reprice}}]  # fmt: skip
    return task(
        f"price-now-{n}",
        f"What is the current list price of {org.name}'s {product.name}?",
        f"The current list price of {product.name}.",
        gold,
        [{"money": product.new_price}],
        [{"money": product.price}],
        rubric(f"The agent gave {product.name}'s current list price, ${product.new_price:,.2f}.", [[reprice]]),
        tags=["reconcile", "outdated"],
        difficulty="easy",
        split="train",
        alternatives=[
            {"name": "reads only the repricing news", "steps": [search(f"{product.name} new price"),
                                                                {"tool": "open", "args": {"doc_id": reprice}}],
             "answer": f"{product.name} now lists at ${product.new_price:,.2f}, after a price cut."},
        ],
        near_misses=[
            {"name": "gives the launch price", "answer": f"It costs ${product.price:,.2f}."},
            {"name": "reads only the launch news", "steps": gold[:2],
             "answer": f"The list price is ${product.price:,.2f}."},
        ],
    )  # fmt: skip


def _headcount(corpus: Corpus, org: Organisation, n: int) -> Task:
    report = org.docs["report24"]
    gold = [search(f"{org.name} employees fiscal 2024"), *corpus.reading(report, "employees at the end")]
    return task(
        f"headcount-fy2024-{n}",
        f"How many employees did {org.name} have at the end of fiscal 2024?",
        f"{org.name}'s headcount at the end of fiscal 2024.",
        gold,
        [{"count": org.headcount24, "noun": "employee"}],
        [{"count": org.headcount23, "noun": "employee"}],
        rubric(f"The agent said {org.name} had {org.headcount24:,} employees at the end of fiscal 2024.", [[report]]),
        tags=["lookup"],
        difficulty="easy",
        split="train",
        alternatives=[
            {"name": "finds the sentence with find_in_page",
             "steps": [search(f"{org.name} annual report 2024"), {"tool": "open", "args": {"doc_id": report}},
                       {"tool": "find_in_page", "args": {"doc_id": report, "text": "employees at the end"}}],
             "answer": f"{org.name} had {org.headcount24:,} employees at the end of fiscal 2024."},
        ],
        near_misses=[
            {"name": "gives the fiscal 2023 headcount", "answer": f"It had {org.headcount23:,} employees."},
            {"name": "answers without opening the report", "steps": gold[:1],
             "answer": f"{org.name} had {org.headcount24:,} employees."},
        ],
    )  # fmt: skip


def easy(corpus: Corpus, taken: set[str]) -> list[Task]:
    tasks: list[Task] = []
    for n, org in enumerate(corpus.pick(lambda o: o.revenue24_preliminary is not None, taken), 1):
        tasks.append(_revenue(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: o.ceo_since is not None, taken), 1):
        tasks.append(_ceo(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: any(p.new_price is not None for p in o.products), taken), 1):
        tasks.append(_price(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: True, taken), 1):
        tasks.append(_headcount(corpus, org, n))
    return tasks
