"""Facts the final answer must state (a task's `answer`, what a free-text rule wants stated),
typed, and how each reads as a plain statement (`state_fact`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from mcpsim.tasks._strict import Strict

__all__ = [
    "AnyFact",
    "CountFact",
    "DateFact",
    "DurationFact",
    "Fact",
    "IdFact",
    "MoneyFact",
    "NameFact",
    "NumberFact",
    "PhraseFact",
    "TimeFact",
    "state_fact",
]


# -- facts the final answer must state ---------------------------------------------------------
#
# A fact is typed, and the answer is parsed by its type (`mcpsim.grading._answers`): a money fact
# matches an amount stated as money, a date fact any common way of writing that date, and so on.
# A fact stated under negation does not count, and an answer that states conflicting values of
# one kind fails the fact. Plain strings and `any` lists are phrase facts; `number` is an untyped
# number (kept for old task files; prefer a typed fact).


class MoneyFact(Strict):
    """An amount of money: `$39.98`, `39.98 dollars`, `USD 39.98` (not a bare 39.98 in a date)."""

    money: float
    tolerance: float = Field(0.005, ge=0)


class CountFact(Strict):
    """A whole number of things, in digits or words: `3 bags`, `three bags`."""

    count: int = Field(ge=0)
    noun: str | None = Field(None, description="What is counted (singular), if the count must be of it.")


class NumberFact(Strict):
    """A plain number (untyped; prefer money, count or duration)."""

    number: float
    tolerance: float = Field(0.005, ge=0)


class DateFact(Strict):
    """A calendar date, in any common format (`2026-05-25`, `May 25`, `25 May 2026`, `5/25/2026`)."""

    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    year_optional: bool = Field(True, description="Whether `May 25` (no year) states it.")


class TimeFact(Strict):
    """A time of day (`14:30`, `2:30 pm`)."""

    time: str = Field(pattern=r"^\d{2}:\d{2}$")


class DurationFact(Strict):
    """A length of time in any unit: `180 minutes`, `3 hours`, `180-minute`."""

    duration: float = Field(ge=0)
    unit: Literal["seconds", "minutes", "hours", "days", "weeks"] = "minutes"


class IdFact(Strict):
    """An identifier (an order number, a confirmation code), matched exactly up to case and a
    leading `#`."""

    id: str = Field(min_length=1)


class NameFact(Strict):
    """A person's, place's or thing's name, matched as words (case and accents ignored)."""

    name: str = Field(min_length=1)


class PhraseFact(Strict):
    """A phrase, or one of its declared synonyms; inflections (plural, tense) are accepted."""

    phrase: str = Field(min_length=1)
    synonyms: list[str] = []


class AnyFact(Strict):
    """At least one of these phrases (a phrase fact whose synonyms are listed together)."""

    any: list[str] = Field(min_length=1)


Fact = (
    str
    | MoneyFact
    | CountFact
    | NumberFact
    | DateFact
    | TimeFact
    | DurationFact
    | IdFact
    | NameFact
    | PhraseFact
    | AnyFact
)


def state_fact(fact: Fact) -> str:
    """The fact as a plain statement, the way a correct answer would put it."""
    match fact:
        case str():
            return fact
        case MoneyFact(money=money):
            return f"${money:,.2f}"
        case CountFact(count=count, noun=noun):
            return f"{count} {noun}{'' if count == 1 or not noun else 's'}" if noun else str(count)
        case NumberFact(number=number):
            return f"{number:.2f}"
        case DateFact(date=day):
            return day
        case TimeFact(time=clock):
            return clock
        case DurationFact(duration=duration, unit=unit):
            return f"{duration:g} {unit}"
        case IdFact(id=ident):
            return ident
        case NameFact(name=name):
            return name
        case PhraseFact(phrase=phrase):
            return phrase
        case AnyFact(any=phrases):
            return phrases[0]
    raise TypeError(fact)
