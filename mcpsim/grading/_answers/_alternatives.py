"""The ways a task's fact can be stated, and which mentions in an answer state each.

A fact is matched by its type: a money fact only by money (so `May 25` never states $25, nor does
an id or a time), a count or number by a number that is part of nothing else, followed within three
words by the count's noun if it has one (`3 checked bags`; a noun of several words as a run, `6 leave
requests`) or preceded by it across fillers only (`the capacity is 4`, `capacity: 4`) (the legacy
untyped `number` fact also by money), a date by a date in any format (year-less only when the fact says
`year_optional`), a time by a time, a duration by a duration of the same length in any unit, an
id by the same token (case and a leading `#` ignored; an id that is a phone number also by that
number in any format), a name by the same words (case and accents ignored; a place also by its
other name or code: `Texas` and `TX`, `Main Street` and `Main St`). Phrase facts (plain strings,
`phrase` with `synonyms`, `any` lists) match word by word on word boundaries, case- and
accent-insensitive, a hyphen or underscore counting as a space, each word also in another form:
a street or unit word's abbreviation, a state's or country's code (`_places`), plural or singular
(`inflect`, irregular nouns too), and verb
forms in -s, -ed and -ing (`refund`, `refunds`, `refunded`, `refunding`; `cancel`, `cancelled`,
`canceled`) or from a short table of irregular verbs (`pay`, `paid`). A phrase that is itself one
typed value (`May 20`, `30 days`, `$0`, `14:30`, `W7996816`) is matched as that value, so a date
given in a task as `May 20` is also found as `2026-05-20`; a phrase of capitalised words is a name.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from mcpsim import tasks
from mcpsim.grading._answers._parsed import FUNCTION_WORDS, DateValue, Mention, Parsed, parse
from mcpsim.grading._answers._phrases import phrase_words, word_forms
from mcpsim.grading._answers._scanner import duration_value, phone_number
from mcpsim.grading._answers._text import JOINERS, LOOKBACK_GAP, Word, canonical
from mcpsim.tasks import Fact, canonical_places


@dataclass(frozen=True)
class Alternative:
    """One way a fact can be stated: a typed value (`kind`, `value`), a name, or a phrase."""

    kind: str  # one of KINDS, or "phrase"
    value: Hashable
    tolerance: float = 0.0
    noun: str | None = None
    year_optional: bool = True

    def accepts(self, mention: Mention, parsed: Parsed | None = None) -> bool:
        if mention.kind != self.kind:
            return False
        match self.kind:
            case "money" | "number" | "percent":
                if abs(float(mention.value) - float(self.value)) > self.tolerance + 1e-9:  # type: ignore[arg-type]
                    return False
                return self.noun is None or parsed is None or noun_follows(parsed, mention, self.noun)
            case "date":
                year, month, day = cast(DateValue, mention.value)
                fact_year, fact_month, fact_day = cast(DateValue, self.value)
                if (month, day) != (fact_month, fact_day):
                    return False
                return year == fact_year or fact_year is None or (year is None and self.year_optional)
            case "name":
                return _name_in(self.value, mention.value)  # type: ignore[arg-type]
        return mention.value == self.value


def _name_in(name: str, mention: str) -> bool:
    if f" {name} " in f" {mention} " or f" {mention} " in f" {name} ":
        return True
    a, b = canonical_places(name), canonical_places(mention)  # `New York` and `NY`, `Main Street` and `Main St`
    return bool(a and b) and (a != name or b != mention) and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def noun_follows(parsed: Parsed, mention: Mention, noun: str) -> bool:
    """The count's noun, of one word or more, within three words after the number (`3 checked
    bags`, `6 leave requests`), or just before it with only fillers between (`the capacity is 4`,
    `capacity: 4`)."""
    wanted = [word_forms(w) for w in phrase_words(noun)]
    if not wanted:
        return True
    n = len(wanted)
    after = parsed.words_after(mention.end, 3 + n - 1)
    if any(_forms_match(after[i : i + n], wanted) for i in range(len(after) - n + 1)):
        return True
    return _noun_before(parsed, mention.start, wanted)


def _forms_match(words: list[Word], wanted: list[frozenset[str]]) -> bool:
    return len(words) == len(wanted) and all(
        not word_forms(w.text).isdisjoint(f) for w, f in zip(words, wanted, strict=True)
    )


_NOUN_GAP = LOOKBACK_GAP | frozenset(":=")


def _noun_before(parsed: Parsed, start: int, wanted: list[frozenset[str]]) -> bool:
    """Whether the noun ends just before `start`, across fillers (`is`, `of`, `the`) and the
    record the count is of (`the workload of engineer AG2032 is 1`: an id and the word before it)."""
    index = bisect.bisect_right(parsed.word_ends, start) - 1
    position, after_id = start, False
    ids = [m for m in parsed.mentions if m.kind == "id"]
    for k in range(index, max(-1, index - 7), -1):
        word = parsed.words[k]
        if not set(parsed.text[word.end : position]) <= _NOUN_GAP:
            return False
        if any(m.start <= word.start < m.end for m in ids):
            after_id = True
        elif word.text not in FUNCTION_WORDS:
            words = list(parsed.words[k - len(wanted) + 1 : k + 1]) if k + 1 >= len(wanted) else []
            joined = all(set(parsed.text[a.end : b.start]) <= JOINERS for a, b in zip(words, words[1:], strict=False))
            if joined and _forms_match(words, wanted):
                return True
            if not after_id:
                return False
            after_id = False  # the id's label: `engineer AG2032`
        else:
            after_id = False
        position = word.start
    return False


@lru_cache(maxsize=4096)
def phrase_alternative(phrase: str) -> Alternative:
    """A phrase as a task wrote it: one typed value if that is all it is, a name if its words are
    capitalised, else words to match with their inflections."""
    parsed = parse(phrase)
    if len(parsed.mentions) == 1 and parsed.mentions[0].kind != "name" and _covers(parsed, parsed.mentions[0]):
        mention = parsed.mentions[0]
        if mention.kind == "date" and mention.value[0] is None:  # type: ignore[index]
            return Alternative("date", mention.value, year_optional=True)
        return Alternative(mention.kind, mention.value)
    words = phrase_words(phrase)
    if words and all(w[:1].isupper() or any(c.isupper() for c in w) for w in canonical(phrase).split()):
        return Alternative("name", " ".join(words))
    return Alternative("phrase", words)


def _covers(parsed: Parsed, mention: Mention) -> bool:
    outside = parsed.text[: mention.start] + parsed.text[mention.end :]
    return not outside.strip(" .,;:!?\"'")


def alternatives(fact: Fact) -> tuple[Alternative, ...]:
    match fact:
        case tasks.MoneyFact(money=money, tolerance=tolerance):
            return (Alternative("money", money, tolerance),)
        case tasks.NumberFact(number=number, tolerance=tolerance):  # untyped (legacy): money or a plain number
            return Alternative("money", number, tolerance), Alternative("number", number, tolerance)
        case tasks.CountFact(count=count, noun=noun):
            return (Alternative("number", float(count), 0.0, noun),)
        case tasks.DateFact(date=day, year_optional=optional):
            year, month, dom = (int(part) for part in day.split("-"))
            return (Alternative("date", (year, month, dom), year_optional=optional),)
        case tasks.TimeFact(time=clock):
            hour, minute = (int(part) for part in clock.split(":"))
            return (Alternative("time", hour * 60 + minute),)
        case tasks.DurationFact(duration=duration, unit=unit):
            return (Alternative("duration", duration_value(duration, unit)),)
        case tasks.IdFact(id=ident):
            phone = phone_number(ident)  # a phone number as an id: any way of writing it
            token = Alternative("id", ident.removeprefix("#").casefold())
            return (token, Alternative("phone", phone)) if phone else (token,)
        case tasks.NameFact(name=name):
            return (Alternative("name", " ".join(phrase_words(name))),)
        case tasks.PhraseFact(phrase=phrase, synonyms=synonyms):
            return tuple(phrase_alternative(p) for p in (phrase, *synonyms))
        case tasks.AnyFact(any=phrases):
            return tuple(phrase_alternative(p) for p in phrases)
        case str():
            return (phrase_alternative(fact),)
    raise TypeError(f"not a fact: {fact!r}")
