"""The research world's long task families (10 to 40 calls each), written from the universe
(`generate.py` runs them into `tasks/long.yaml`): a sector's fiscal 2024 leader among the top five
of its fiscal 2023 league table, with its margin over the runner-up (every candidate's annual
report read, revised figures preferred over preliminary ones); the combined revenue of the
companies that hired their chief executive from one company (a relation followed across news
items), set against that company's own; and the leader among a league table's sixth to tenth
places saved to the notebook."""

from __future__ import annotations

from typing import Any

from .generate import Corpus, Task, m, money, rubric, search, task
from .harder_tasks import NOTE_CHANGES, _notebook
from .seed.universe import SECTORS, Organisation

Step = dict[str, Any]


def _open(doc_id: str) -> Step:
    return {"tool": "open", "args": {"doc_id": doc_id}}


def _calc(expression: str) -> Step:
    return {"tool": "calculate", "args": {"expression": expression}}


def _audited(corpus: Corpus, org: Organisation, *, preliminary: bool = True) -> list[Step]:
    """Reading `org`'s fiscal 2024 figure: a search, its preliminary results if any (the stale
    figure an agent meets first), then the annual report's pages from the audited figure through
    the fiscal 2023 comparison."""
    report = org.docs["report24"]
    body = str(corpus.docs[report]["body"])
    start = body.find("Audited revenue")
    end = body.find("For comparison, fiscal 2023 revenue was")
    span = body[start : body.find("million", end) + len("million")]
    steps = [search(f"{org.name} annual report fiscal 2024")]
    if preliminary and "preliminary24" in org.docs:
        steps.append(_open(org.docs["preliminary24"]))
    return steps + corpus.reading(report, span.strip())


def _quick(org: Organisation) -> list[Step]:
    """Another path to the audited figure: the report's first page, then find_in_page."""
    report = org.docs["report24"]
    return [search(f"{org.name} fiscal 2024 revenue"), _open(report),
            {"tool": "find_in_page", "args": {"doc_id": report, "text": "audited revenue"}}]  # fmt: skip


def _first_published(org: Organisation) -> float:
    return org.revenue24_preliminary if org.revenue24_preliminary is not None else org.revenue24


def _ranked(orgs: list[Organisation], figure: Any) -> list[Organisation]:
    return sorted(orgs, key=lambda o: -figure(o))


def _max_calls(gold: list[Step]) -> dict[str, Any]:
    limit = -(-2 * len(gold) // 10) * 10  # twice the gold solution's calls, rounded up to ten
    return {"type": "cost", "requirement": f"The agent made at most {limit} tool calls.", "max_calls": limit,
            "noop_passes": True}  # fmt: skip


def league(corpus: Corpus, sector: str) -> tuple[str, list[Organisation]]:
    """A sector's league table (its document id) and its organisations in the table's order."""
    title = f"League table: {sector} revenue, fiscal 2023"
    table = next(i for i, d in corpus.docs.items() if d["title"] == title)
    return table, _ranked([o for o in corpus.orgs if o.sector == sector], lambda o: o.revenue23)


def _find_table(table: str, sector: str) -> list[Step]:
    return [search(f"league table {sector} revenue fiscal 2023"), _open(table)]


def _leader(corpus: Corpus, sector: str, n: int) -> Task:
    table, members = league(corpus, sector)
    top = members[:5]
    first, second = _ranked(top, lambda o: o.revenue24)[:2]
    margin = round(first.revenue24 - second.revenue24, 1)
    reads = [_audited(corpus, o) for o in top]
    gold = [*_find_table(table, sector), *(s for r in reads for s in r),
            _calc(f"{first.revenue24} - {second.revenue24}")]  # fmt: skip
    said = f"{first.name} led with {m(first.revenue24)}, {m(margin)} ahead of {second.name} ({m(second.revenue24)})."
    stale_first, stale_second = top[0], top[1]
    stale_margin = round(stale_first.revenue23 - stale_second.revenue23, 1)
    forbidden = [money(first.revenue23)]
    if first.revenue24_preliminary is not None:
        forbidden.append(money(first.revenue24_preliminary))
    near = [
        {"name": "trusts the fiscal 2023 league table", "steps": gold[:2],
         "answer": f"{stale_first.name} leads, ahead of {stale_second.name} by {m(stale_margin)}."},
        {"name": "stops after the first three candidates", "steps": [*gold[:2], *(s for r in reads[:3] for s in r)],
         "answer": said},
    ]  # fmt: skip
    p_first, p_second = _ranked(top, _first_published)[:2]
    p_margin = round(_first_published(p_first) - _first_published(p_second), 1)
    if abs(p_margin - margin) > 0.05:
        near.append({"name": "takes the preliminary figures where they were published",
                     "answer": f"{p_first.name} led, {m(p_margin)} ahead of {p_second.name}."})  # fmt: skip
    twins = [(i, o, sibling) for i, o in enumerate(top) if (sibling := corpus.sibling(o)) is not None]
    if twins:
        i, org, sibling = twins[0]
        swapped = [*gold[:2], *(s for j, r in enumerate(reads) if j != i for s in r), *_audited(corpus, sibling)]
        near.append({"name": f"reads the report of {sibling.name} instead of {org.name}'s", "steps": swapped,
                     "answer": said})  # fmt: skip
    checks = rubric(
        f"The agent said {first.name} had the highest audited fiscal 2024 revenue of the five, {m(margin)} more "
        f"than {second.name}.",
        [[table], *([o.docs["report24"]] for o in top)],
    )
    return task(
        f"sector-leader-{n}",
        f"Take the five largest {sector} companies in the fiscal 2023 league table. Which of them had the highest "
        "audited revenue in fiscal 2024, and by how much, in millions of dollars, did it beat the second highest?",
        f"The {sector} company with the highest audited fiscal 2024 revenue among the league table's top five, and "
        "its margin over the runner-up.",
        gold,
        [{"name": first.name}, money(margin)],
        forbidden,
        [*checks, _max_calls(gold)],
        tags=["long", "multi-hop", "reconcile", "revision", "compute"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "finds each audited figure with find_in_page, skipping the preliminary results",
             "steps": [*gold[:2], *(s for o in top for s in _quick(o))],
             "answer": f"On audited fiscal 2024 revenue, {first.name} ({m(first.revenue24)}) beat {second.name} "
                       f"({m(second.revenue24)}) by {m(margin)}."},
        ],
        near_misses=near,
    )  # fmt: skip


def _alumni(
    corpus: Corpus, prior: Organisation, hirers: list[Organisation], others: list[Organisation], n: int
) -> Task:
    """`hirers` took their chief executive from `prior`; `others` from a similarly named company."""
    total = round(sum(o.revenue24 for o in hirers), 1)
    gap = round(abs(total - prior.revenue24), 1)
    news = [o.docs["ceo_news"] for o in hirers]
    find = {"tool": "search", "args": {"query": f"chief executive joins from {prior.name}", "limit": 10}}
    gold: list[Step] = [find, *(_open(d) for d in news)]
    for org in hirers:
        gold += _audited(corpus, org)
    gold.append(_calc(" + ".join(str(o.revenue24) for o in hirers)))
    gold += [*_audited(corpus, prior), _calc(f"{total} - {prior.revenue24}")]
    names = [{"name": o.name} for o in hirers]
    listed = ", ".join(o.name for o in hirers)
    word = "more" if total > prior.revenue24 else "less"
    said = f"{listed}: together {m(total)}, {m(gap)} {word} than {prior.name}'s {m(prior.revenue24)}."
    forbidden = [money(o.revenue23) for o in [*hirers, prior]]
    found = 1 + len(news)
    near = [
        {"name": "stops at the first company found", "steps": gold[:2] + _audited(corpus, hirers[0]),
         "answer": f"{hirers[0].name} hired its chief executive from {prior.name}; {m(hirers[0].revenue24)}."},
        {"name": "never opens the annual reports", "steps": gold[:found], "answer": said},
        {"name": f"never opens {prior.name}'s report", "steps": gold[: len(gold) - len(_audited(corpus, prior)) - 1],
         "answer": said},
    ]  # fmt: skip
    old_gap = round(abs(total - prior.revenue23), 1)
    near.append({"name": f"compares with {prior.name}'s fiscal 2023 revenue",
                 "answer": f"{listed}: together {m(total)}, {m(old_gap)} away from {prior.name}'s "
                           f"{m(prior.revenue23)}."})  # fmt: skip
    if others:
        wrong = hirers + others[:1]
        near.append({"name": f"also counts {others[0].name}, whose chief executive came from another company with a "
                             "similar name",
                     "steps": [*gold, _open(others[0].docs["ceo_news"]), *_audited(corpus, others[0])],
                     "answer": f"{', '.join(o.name for o in wrong)}: together "
                               f"{m(sum(o.revenue24 for o in wrong))}."})  # fmt: skip
    stale = round(sum(_first_published(o) for o in hirers), 1)
    if abs(stale - total) > 0.05:
        stale_gap = round(abs(stale - _first_published(prior)), 1)
        near.append({"name": "adds the preliminary figures where they were published",
                     "answer": f"{listed}: together {m(stale)}, a gap of {m(stale_gap)}."})  # fmt: skip
    groups = [[o.docs["ceo_news"], *([o.docs["ceo_news_copy"]] if "ceo_news_copy" in o.docs else [])] for o in hirers]
    checks = rubric(
        f"The agent named {listed} as the companies whose chief executive came from {prior.name}, with combined "
        f"audited fiscal 2024 revenue of {m(total)}, {m(gap)} {word} than {prior.name}'s.",
        [*groups, *([o.docs["report24"]] for o in [*hirers, prior])],
    )
    return task(
        f"ceo-alumni-revenue-{n}",
        f"Some companies hired their current chief executive from {prior.name}. Which are they, what was their "
        f"combined audited revenue for fiscal 2024, and by how much, in millions of dollars, did that total differ "
        f"from {prior.name}'s own audited fiscal 2024 revenue?",
        f"The companies whose chief executive came from {prior.name}, the sum of their audited fiscal 2024 "
        f"revenue, and how far it is from {prior.name}'s.",
        gold,
        [*names, money(total), money(gap)],
        forbidden,
        [*checks, _max_calls(gold)],
        tags=["long", "multi-hop", "relation", "revision", "compute"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "reads each report with find_in_page",
             "steps": [*gold[:found], *(s for o in [*hirers, prior] for s in _quick(o))],
             "answer": f"{prior.name} supplied the chief executives of {listed}. Their audited fiscal 2024 revenue "
                       f"adds up to {m(total)}, which is {m(gap)} {word} than {prior.name} booked "
                       f"({m(prior.revenue24)})."},
        ],
        near_misses=near,
    )  # fmt: skip


def _note_leader(corpus: Corpus, sector: str, n: int) -> Task:
    table, members = league(corpus, sector)
    band = members[5:10]
    best = _ranked(band, lambda o: o.revenue24)[0]
    report = best.docs["report24"]
    gold = [*_find_table(table, sector), *(s for o in band for s in _audited(corpus, o))]
    text = f"{best.name} had the highest audited fiscal 2024 revenue of the five: {m(best.revenue24)}."
    note: dict[str, Any] = {"title": f"{sector.capitalize()}: places 6-10 in fiscal 2024", "text": text,
                            "sources": [table, report]}  # fmt: skip
    save = {"tool": "save_note", "args": note}
    forbidden = [money(best.revenue23)] + ([money(best.revenue24_preliminary)] if best.revenue24_preliminary else [])
    stale, partial = band[0], _ranked(band[:3], lambda o: o.revenue24)[0]
    near = [
        {"name": "saves the league table's sixth place without reading the reports",
         "steps": [*gold[:2], {"tool": "save_note", "args": {
             "title": f"{sector} leader", "text": f"{stale.name} leads the five with {m(stale.revenue23)}.",
             "sources": [table]}}]},
        {"name": "stops after the first three candidates", "steps": [*gold[:2], *(
            s for o in band[:3] for s in _audited(corpus, o)), {"tool": "save_note", "args": {
                "title": "leader", "text": f"{partial.name} leads with {m(partial.revenue24)}.",
                "sources": [table, partial.docs["report24"]]}}]},
        {"name": "saves the finding twice", "steps": [*gold, save, save]},
        {"name": "answers in chat without saving a note", "steps": gold, "answer": text},
    ]  # fmt: skip
    if best.revenue24_preliminary is not None:
        near.append({"name": "saves the preliminary figure", "steps": [*gold, {"tool": "save_note", "args": {
            **note, "text": f"{best.name} leads with {m(best.revenue24_preliminary)}."}}]})  # fmt: skip
    checks = [
        _notebook([{"name": best.name}, money(best.revenue24)], forbidden, [report],
                  f"The notebook holds one note naming {best.name} with audited fiscal 2024 revenue of "
                  f"{m(best.revenue24)}, citing its annual report."),
        *rubric(None, [[table], *([o.docs["report24"]] for o in band)], writes=True), NOTE_CHANGES,
        _max_calls([*gold, save]),
    ]  # fmt: skip
    return task(
        f"note-sector-band-{n}",
        f"In the fiscal 2023 league table of {sector} companies, look at the companies in sixth to tenth place. "
        "Find which of them had the highest audited revenue in fiscal 2024 and save it as one note in the "
        "notebook, with that figure, citing the documents it rests on. No need to report back beyond that.",
        f"One note naming the {sector} company (places six to ten of the league table) with the highest audited "
        "fiscal 2024 revenue, with the figure and its sources.",
        [*gold, save],
        [],
        [],
        checks,
        tags=["long", "notebook", "multi-hop", "revision"],
        difficulty="hard",
        split="test",
        alternatives=[
            {"name": "reads each report with find_in_page and words the note otherwise",
             "steps": [*gold[:2], *(s for o in band for s in _quick(o)), {"tool": "save_note", "args": {
                 "title": f"Fiscal 2024 leader, {sector} places 6 to 10", "text": f"Audited fiscal 2024 revenue: "
                 f"{best.name} is highest at {m(best.revenue24)}.", "sources": [report]}}]},
        ],
        near_misses=near,
    )  # fmt: skip


def long(corpus: Corpus, taken: set[str]) -> list[Task]:
    """The long families. They reuse organisations of the other tiers (`taken` is left alone)."""
    del taken
    tasks = [_leader(corpus, sector, n) for n, sector in enumerate(SECTORS, 1)]
    alumni: dict[str, list[Organisation]] = {}
    for org in corpus.orgs:
        if org.ceo_prior_employer is not None:
            alumni.setdefault(org.ceo_prior_employer, []).append(org)
    priors = [corpus.by_name[name] for name, hirers in alumni.items() if len(hirers) >= 2]
    for n, prior in enumerate(priors[:: max(1, len(priors) // 6)][:6], 1):
        twin = corpus.sibling(prior)
        tasks.append(_alumni(corpus, prior, alumni[prior.name], alumni.get(twin.name, []) if twin else [], n))
    tasks += [_note_leader(corpus, sector, n) for n, sector in enumerate(SECTORS[:4], 1)]
    return tasks
