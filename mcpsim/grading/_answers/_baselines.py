"""The answers of the cheating baselines (`mcpsim check`): a fact under negation, every value of
some texts, a fact taken back after it is said, the true value among guesses spread over
questions, and two facts of one kind with their subjects swapped."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import cast

from mcpsim import tasks
from mcpsim.grading._answers._alternatives import alternatives
from mcpsim.grading._answers._parsed import DateValue, parse
from mcpsim.grading._answers._reference import fact_subjects
from mcpsim.tasks import AnswerFacts, Fact, Task, state_fact


def negate(fact: Fact) -> str:
    """A sentence that mentions the fact's value under negation (the negating baseline's answer)."""
    return f"It is not {state_fact(fact)}."


def stuffed_answer(texts: list[str]) -> str:
    """Every amount, number, date, time, duration, id and capitalised name found in `texts`, in one
    answer (the stuffing baseline's): numbers are given both bare and as money."""
    items: dict[str, None] = {}
    for text in texts:
        parsed = parse(text)
        for mention in parsed.mentions:
            shown = parsed.text[mention.start : mention.end].strip()
            items[shown] = None
            if mention.kind in ("number", "money"):
                items[f"${float(mention.value):,.2f}"] = None  # type: ignore[arg-type]
                items[f"{float(mention.value):g}"] = None  # type: ignore[arg-type]
            elif mention.kind == "date":
                year, month, day = cast(DateValue, mention.value)
                items[f"{year:04d}-{month:02d}-{day:02d}" if year else f"{month}/{day}"] = None
    return "I found: " + ", ".join(items) + "." if items else "I found nothing."


def denied_after(facts: Sequence[Fact]) -> str:
    """Every fact said, then taken back right after (the denial-after-the-value baseline's answer)."""
    return " ".join(f"It is {state_fact(fact)}, but that is incorrect." for fact in facts)


def decoy(fact: Fact, step: int) -> str | None:
    """A wrong value of the fact's kind, `step` steps from the true one (None for a phrase or a name)."""
    match fact:
        case tasks.MoneyFact(money=money):
            return f"${money + 5 * step:,.2f}"
        case tasks.NumberFact(number=number):
            return f"{number + step:g}"
        case tasks.CountFact(count=count, noun=noun):
            return f"{count + step} {noun}s" if noun else str(count + step)
        case tasks.DateFact(date=day):
            return (date.fromisoformat(day) + timedelta(days=step)).isoformat()
        case tasks.TimeFact(time=clock):
            hour, minute = (int(part) for part in clock.split(":"))
            return f"{(hour + step) % 24:02d}:{minute:02d}"
        case tasks.DurationFact(duration=duration, unit=unit):
            return f"{duration + step:g} {unit}"
        case tasks.IdFact(id=ident):
            last = ident[-1]
            return ident[:-1] + (str((int(last) + step) % 10) if last.isdigit() else chr(ord("A") + step % 26))
    return None


def spread_guesses(facts: Sequence[Fact], forbidden: Sequence[Fact] = ()) -> str:
    """Every fact's true value among guesses, each in a question of its own (the guessing
    baseline's answer): `Is it $45.00? Or $40.00? Perhaps $50.00.` A phrase fact's guesses are
    the task's forbidden phrases (the other values of its closed set), or none."""
    rivals = [state_fact(f) for f in forbidden if decoy(f, 1) is None]
    sentences = []
    for fact in facts:
        first, last = decoy(fact, 1), decoy(fact, 2)
        if first is None or last is None:
            first, last = (rivals + [None, None])[:2]
        guesses = [g for g in (first, state_fact(fact), last) if g]
        sentences.append(
            " ".join(f"{'Is it' if i == 0 else 'Or' if i == 1 else 'Perhaps'} {g}?" for i, g in enumerate(guesses))
        )
    return " ".join(sentences)


def swapped_answer(facts: Sequence[Fact], reference: str) -> str | None:
    """The task's own sentence (`reference`: the requirement) with the values of two of its facts
    of one kind exchanged, then every other fact stated (the swapped-subjects baseline's answer):
    "The total is $59 with $490 on the card." None when no two facts of one kind both appear in
    it, each with a subject of its own."""
    parsed = parse(reference)
    subjects = fact_subjects(facts, [reference])
    spans: list[tuple[str, int, int, int]] = []
    for index, fact in enumerate(facts):
        if not subjects[index].distinctive:
            continue  # only facts the reference tells apart by what they are about can be swapped
        alts = [a for a in alternatives(fact) if a.kind != "phrase"]
        mention = next((m for m in parsed.mentions if any(a.accepts(m) for a in alts)), None)
        if mention is not None and alts:
            spans.append((alts[0].kind, mention.start, mention.end, index))
    for a, first in enumerate(spans):
        for second in spans[a + 1 :]:
            if first[0] != second[0] or not (first[2] <= second[1] or second[2] <= first[1]):
                continue
            (_, s1, e1, i1), (_, s2, e2, i2) = sorted([first, second], key=lambda span: span[1])
            text = parsed.text
            swapped = text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]
            rest = [state_fact(f) for i, f in enumerate(facts) if i not in (i1, i2)]
            return " ".join([swapped, *(f"Also: {r}." for r in rest)])
    return None


CLAIM_BASELINES = ("denied_after", "spread_guesses", "swapped_subjects")


def claim_baseline(name: str, task: Task) -> str | None:
    """The answer of the claim baseline `name` (one of CLAIM_BASELINES) for `task`, or None where
    it does not apply: the task has no answer facts, or (`swapped_subjects`) its requirement gives
    no two facts of one kind a subject of their own."""
    if not task.answer:
        return None
    if name == "denied_after":
        return denied_after(task.answer)
    if name == "spread_guesses":
        return spread_guesses(task.answer, task.forbidden)
    if name == "swapped_subjects":
        requirements = [c.requirement for c in task.rubric if isinstance(c, AnswerFacts)]
        return swapped_answer(task.answer, requirements[0]) if requirements else None
    raise ValueError(f"not a claim baseline: {name!r}")
