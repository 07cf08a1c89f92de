"""The research world's medium and hard task families, written from the universe (`generate.py`
runs them): an acquisition followed to the buyer's figures, a finding saved to the notebook, a
question the corpus cannot answer (medium); a change computed from two years, a chief executive's
former employer followed to its figures, two findings saved in one note (hard)."""

from __future__ import annotations

from typing import Any

from .easy_tasks import REFUSAL, _report
from .generate import Corpus, Task, m, money, rubric, search, task
from .seed.universe import Organisation

NOTE_CHANGES = {
    "type": "allowed_changes",
    "requirement": "Only notes were added to the notebook; nothing else changed.",
    "allow": [{"table": "notes", "ops": ["insert"]}],
    "noop_passes": True,
}


def _notebook(facts: list[Any], forbidden: list[Any], cite: list[str], requirement: str) -> dict[str, Any]:
    return {
        "type": "custom",
        "name": "notebook",
        "requirement": requirement,
        "params": {"facts": facts, "forbidden": forbidden, "cite": cite},
        "noop_passes": False,
    }


def _acquisition(corpus: Corpus, org: Organisation, n: int) -> Task:
    target = corpus.by_name[str(org.acquired)]
    deal = org.docs["acquisition"]
    find = [search(f"acquisition of {target.name}"), {"tool": "open", "args": {"doc_id": deal}}]
    forbidden = [money(org.revenue23), money(target.revenue24)]
    if org.revenue24_preliminary is not None:
        forbidden.append(money(org.revenue24_preliminary))
    return task(
        f"acquirer-revenue-{n}",
        f"Which company acquired {target.name}, and what was that buyer's audited revenue for fiscal 2024?",
        f"The buyer of {target.name} and the buyer's audited fiscal 2024 revenue.",
        find + _report(corpus, org),
        [{"name": org.name}, money(org.revenue24)],
        forbidden,
        rubric(f"The agent said {org.name} acquired {target.name} and had audited fiscal 2024 revenue of "
               f"{m(org.revenue24)}.", [[deal], [org.docs["report24"]]]),
        tags=["multi-hop", "relation"],
        difficulty="medium",
        split="dev",
        alternatives=[
            {"name": "states the deal's price and date too",
             "answer": f"{org.name} bought {target.name} for {m(org.acquisition_price or 0)}; {org.name}'s audited "
                       f"fiscal 2024 revenue was {m(org.revenue24)}."},
        ],
        near_misses=[
            {"name": "gives the acquired company's revenue instead of the buyer's",
             "steps": find + _report(corpus, target),
             "answer": f"{org.name} acquired it; revenue was {m(target.revenue24)}."},
            {"name": "never opens the acquisition news", "steps": find[:1] + _report(corpus, org),
             "answer": f"{org.name} acquired {target.name}; its fiscal 2024 revenue was {m(org.revenue24)}."},
        ],
    )  # fmt: skip


def _note_revenue(corpus: Corpus, org: Organisation, n: int) -> Task:
    report = org.docs["report24"]
    text = f"Audited fiscal 2024 revenue: {m(org.revenue24)} (annual report)."
    save = {"tool": "save_note", "args": {"title": f"{org.name} revenue", "text": text, "sources": [report]}}
    forbidden = [money(org.revenue23)] + ([money(org.revenue24_preliminary)] if org.revenue24_preliminary else [])
    checks = [
        _notebook([money(org.revenue24)], forbidden, [report],
                  f"The notebook holds one note giving {org.name}'s audited fiscal 2024 revenue, {m(org.revenue24)}, "
                  "citing the annual report."),
        *rubric(None, [[report]], writes=True), NOTE_CHANGES,
    ]  # fmt: skip
    stale = "preliminary figure" if org.revenue24_preliminary else "fiscal 2023 figure"
    wrong = org.revenue24_preliminary or org.revenue23
    return task(
        f"note-revenue-{n}",
        f"Look up {org.name}'s audited revenue for fiscal 2024 and save it as one note in the notebook, citing "
        "the document you read it in. No need to report back beyond that.",
        "One note in the notebook with the audited fiscal 2024 revenue and its source.",
        [*_report(corpus, org), save],
        [],
        [],
        checks,
        tags=["notebook"],
        difficulty="medium",
        split="dev",
        alternatives=[
            {"name": "writes the note in other words",
             "steps": [*_report(corpus, org), {"tool": "save_note", "args": {
                 "title": f"FY2024 revenue of {org.name}", "text": f"{org.name} reported {m(org.revenue24)} in revenue "
                 "for fiscal 2024, audited.", "sources": [report]}}]},
        ],
        near_misses=[
            {"name": f"saves the {stale}",
             "steps": [*_report(corpus, org), {"tool": "save_note", "args": {
                 "title": f"{org.name} revenue", "text": f"Fiscal 2024 revenue: {m(wrong)}.", "sources": [report]}}]},
            {"name": "saves the finding twice", "steps": [*_report(corpus, org), save, save]},
            {"name": "answers in chat without saving a note", "steps": _report(corpus, org),
             "answer": f"{m(org.revenue24)}."},
        ],
    )  # fmt: skip


def _refusal(corpus: Corpus, org: Organisation, n: int) -> Task:
    report = org.docs["report24"]
    gold = [search(f"{org.name} fiscal 2025 revenue"), *corpus.reading(report, "Audited revenue")]
    return task(
        f"refuse-fy2025-{n}",
        f"What revenue did {org.name} report for fiscal 2025?",
        f"{org.name}'s fiscal 2025 revenue, or to hear plainly that the corpus does not have it.",
        gold,
        [REFUSAL],
        [money(org.revenue24), money(org.revenue23)],
        rubric("The agent said it could not find fiscal 2025 revenue (the latest report covers fiscal 2024) and "
               "gave no figure for it.", [[report]]),
        tags=["refusal"],
        difficulty="medium",
        split="dev",
        alternatives=[
            {"name": "says what the latest report covers",
             "answer": f"I could not find any fiscal 2025 revenue for {org.name}: its latest annual report is for "
                       "fiscal 2024."},
        ],
        near_misses=[
            {"name": "passes off the fiscal 2024 figure as fiscal 2025",
             "answer": f"{org.name} reported {m(org.revenue24)} for fiscal 2025."},
            {"name": "refuses without looking", "steps": [], "answer": "I could not find it."},
        ],
    )  # fmt: skip


def medium(corpus: Corpus, taken: set[str]) -> list[Task]:
    tasks: list[Task] = []
    for n, org in enumerate(corpus.pick(lambda o: o.acquired is not None and o.acquired not in taken, taken), 1):
        taken.add(str(org.acquired))
        tasks.append(_acquisition(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: o.revenue24_preliminary is not None, taken), 1):
        tasks.append(_note_revenue(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: True, taken), 1):
        tasks.append(_refusal(corpus, org, n))
    return tasks


def _growth(corpus: Corpus, org: Organisation, n: int) -> Task:
    assert org.revenue24_preliminary is not None
    change = round(org.revenue24 - org.revenue23, 1)
    stale = round(org.revenue24_preliminary - org.revenue23, 1)
    gold = [*_report(corpus, org), search(f"{org.name} annual report fiscal 2023"),
            *corpus.reading(org.docs["filing23"], "reported revenue")]  # fmt: skip
    word = "grew" if change > 0 else "fell"
    return task(
        f"revenue-change-{n}",
        f"By how much did {org.name}'s revenue change from fiscal 2023 to fiscal 2024, in millions of dollars? "
        "Use the final, audited figures.",
        f"The change in {org.name}'s audited revenue from fiscal 2023 to fiscal 2024, in dollars.",
        gold,
        [money(abs(change))],
        [money(abs(stale))],
        rubric(f"The agent said {org.name}'s audited revenue {word} by {m(abs(change))} from fiscal 2023 to "
               "fiscal 2024.", [[org.docs["report24"]]]) + [
            {"type": "cost", "requirement": "The agent made at most 40 tool calls.", "max_calls": 40,
             "noop_passes": True}],
        tags=["multi-hop", "compute", "revision"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "takes both years from the fiscal 2024 report", "steps": _report(corpus, org),
             "answer": f"On the audited figures, {org.name}'s revenue {word} by {m(abs(change))} between the two "
                       "fiscal years."},
        ],
        near_misses=[
            {"name": "computes with the preliminary figure",
             "answer": f"Revenue {word} by {m(abs(stale))}."},
            {"name": "computes from search snippets only",
             "steps": [search(f"{org.name} fiscal 2024 revenue"), search(f"{org.name} fiscal 2023 revenue")],
             "answer": f"It changed by {m(abs(change))}."},
        ],
    )  # fmt: skip


def _prior_employer(corpus: Corpus, org: Organisation, n: int) -> Task:
    prior = corpus.by_name[str(org.ceo_prior_employer)]
    news = [org.docs["ceo_news"]] + ([org.docs["ceo_news_copy"]] if "ceo_news_copy" in org.docs else [])
    find = [search(f"{org.name} appoints chief executive"), {"tool": "open", "args": {"doc_id": news[0]}}]
    read = [search(f"{prior.name} annual report fiscal 2024")]
    read += corpus.reading(prior.docs["report24"], "employees at the end")
    return task(
        f"ceo-former-employer-{n}",
        f"{org.name}'s current chief executive joined from another company. How many employees did that company "
        "have at the end of fiscal 2024?",
        f"The fiscal 2024 year-end headcount of the company {org.name}'s chief executive came from.",
        find + read,
        [{"name": prior.name}, {"count": prior.headcount24, "noun": "employee"}],
        [{"count": prior.headcount23, "noun": "employee"}, {"count": org.headcount24, "noun": "employee"}],
        rubric(f"The agent said the chief executive came from {prior.name}, which had {prior.headcount24:,} "
               "employees at the end of fiscal 2024.", [news, [prior.docs["report24"]]]),
        tags=["multi-hop", "relation"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "names the chief executive too",
             "answer": f"{org.ceo} came from {prior.name}, which had {prior.headcount24:,} employees at the end of "
                       "fiscal 2024."},
        ],
        near_misses=[
            {"name": f"gives {org.name}'s own headcount", "steps": find + [
                search(f"{org.name} annual report fiscal 2024"), *corpus.reading(org.docs["report24"], "employees at")],
             "answer": f"It was {prior.name}; {org.headcount24:,} employees."},
            {"name": "gives the fiscal 2023 headcount",
             "answer": f"{prior.name} had {prior.headcount23:,} employees."},
        ],
    )  # fmt: skip


def _note_profile(corpus: Corpus, org: Organisation, n: int) -> Task:
    report, news = org.docs["report24"], org.docs["ceo_news"]
    gold = [search(f"{org.name} chief executive"), {"tool": "open", "args": {"doc_id": news}}, *_report(corpus, org)]
    text = f"Chief executive: {org.ceo}. Audited fiscal 2024 revenue: {m(org.revenue24)}."
    save = {"tool": "save_note", "args": {"title": f"{org.name} brief", "text": text, "sources": [news, report]}}
    forbidden = [{"name": org.former_ceo}, money(org.revenue23)]
    checks = [
        _notebook([{"name": org.ceo}, money(org.revenue24)], forbidden, [report],
                  f"The notebook holds one note naming {org.ceo} as chief executive and giving audited fiscal 2024 "
                  f"revenue of {m(org.revenue24)}, citing the annual report."),
        *rubric(None, [[news, org.docs.get("ceo_news_copy", news)], [report]], writes=True), NOTE_CHANGES,
    ]  # fmt: skip
    return task(
        f"note-brief-{n}",
        f"Write a one-note brief on {org.name} in the notebook: who leads it now and its audited fiscal 2024 "
        "revenue, citing the documents you used.",
        "One note with the current chief executive and the audited fiscal 2024 revenue, with sources.",
        [*gold, save],
        [],
        [],
        checks,
        tags=["notebook", "multi-hop", "outdated"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "writes the brief in other words, citing the annual report only", "steps": [*gold, {
                "tool": "save_note", "args": {"title": f"Brief: {org.name}", "text": f"{org.name} is led by {org.ceo}; "
                f"it booked {m(org.revenue24)} of audited revenue in fiscal 2024.", "sources": [report]}}]},
        ],
        near_misses=[
            {"name": "names the former chief executive from the profile", "steps": [*gold, {
                "tool": "save_note", "args": {"title": f"{org.name} brief", "text": f"Chief executive: "
                f"{org.former_ceo}. Audited fiscal 2024 revenue: {m(org.revenue24)}.", "sources": [news, report]}}]},
            {"name": "splits the brief into two notes", "steps": [*gold, save, save]},
        ],
    )  # fmt: skip


def hard(corpus: Corpus, taken: set[str]) -> list[Task]:
    tasks: list[Task] = []
    for n, org in enumerate(corpus.pick(lambda o: o.revenue24_preliminary is not None, taken), 1):
        tasks.append(_growth(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: o.ceo_prior_employer is not None, taken), 1):
        tasks.append(_prior_employer(corpus, org, n))
    for n, org in enumerate(corpus.pick(lambda o: o.ceo_since is not None, taken), 1):
        tasks.append(_note_profile(corpus, org, n))
    return tasks
