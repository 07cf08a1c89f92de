"""Grading the agent's final answer against the task's typed facts.

The answer is parsed once into typed mentions, each with its place in the text:

- money: `$39.98`, `$ 39.98`, `US$39.98`, `USD 39.98`, `39.98 dollars`, `39.98 USD`, `$1,006`,
  `forty dollars`, `39 dollars and 98 cents`, `98 cents`;
- dates: `2026-05-25`, `May 25`, `May 25th`, `May 25, 2026`, `25 May 2026`, `25th of May`,
  `5/25/2026`, `5/25`, `2026/05/25`, `25.05.2026`, `Monday, May 25`, `Sept. 30` (a year-less date
  is kept year-less);
- times: `14:30`, `2:30 pm`, `2:30 PM`, `2.30 p.m.`, `4pm`, `noon`, `midnight`;
- durations: `180 minutes`, `3 hours`, `180-minute`, `three hours`, `4 hours and 55 minutes`
  (one duration of 295 minutes), `5-7 business days` (two);
- percentages: `4%`, `4 percent`;
- ids: a token with a digit and five or more characters (`W6964978`, `#W6964978`, `2CVBG9`,
  `GC-2779-7012-7959`, `7029190570717`, `ronald_taylor_8832`), not a measure (`41mm`, `2-person`);
- numbers and counts: whatever digits or number words (`three`, `twenty-five`,
  `one hundred and five`) are left, never a digit inside any of the above;
- names: runs of capitalised words (`Trail Camping Tent`, `Visa`), less common sentence openers,
  months and weekdays.

A fact is matched by its type: a money fact only by money (so `May 25` never states $25, nor does
an id or a time), a count or number by a number that is part of nothing else, followed within three
words by the count's noun if it has one (`3 checked bags`; a noun of several words as a run, `6 leave
requests`) or preceded by it across fillers only (`the capacity is 4`, `capacity: 4`) (the legacy
untyped `number` fact also by money), a date by a date in any format (year-less only when the fact says
`year_optional`), a time by a time, a duration by a duration of the same length in any unit, an
id by the same token (case and a leading `#` ignored), a name by the same words (case and accents
ignored). Phrase facts (plain strings, `phrase` with `synonyms`, `any` lists) match word by word
on word boundaries, case- and accent-insensitive, a hyphen or underscore counting as a space, each
word also in another inflection: plural or singular (`inflect`, irregular nouns too), and verb
forms in -s, -ed and -ing (`refund`, `refunds`, `refunded`, `refunding`; `cancel`, `cancelled`,
`canceled`) or from a short table of irregular verbs (`pay`, `paid`). A phrase that is itself one
typed value (`May 20`, `30 days`, `$0`, `14:30`, `W7996816`) is matched as that value, so a date
given in a task as `May 20` is also found as `2026-05-20`; a phrase of capitalised words is a name.

Four rules decide whether a matched fact counts:

1. Negation. A value directly qualified by a negation is not stated: `not $39.98`, `isn't
   pending`, `is no longer pending`, `won't be refunded`, `cannot be cancelled`, `never shipped`,
   `no $25 fee`, `not order W6964978`, `not $12 or $40` (both), `$39.98 instead of $40` ($40).
   From the value, the look-back passes only auxiliaries, articles, adverbs and a few prepositions
   (`is`, `be`, `been`, `the`, `any`, `yet`, `longer`, `on`, ...), the noun an id follows
   (`order`, `flight`, ...), other values and `or`, to a negation (`not`, `n't`, `no`, `never`,
   `cannot`, `without`, `neither`, `nor`, `none`, `unable`, `instead`, `rather`). Punctuation or
   any other word ends it, so negation stays in its clause ("I did not charge a fee; your refund
   is $39.98" states $39.98, as does "...because it has already shipped" after "I can't cancel"),
   and a negated verb with an object of its own leaves the object stated ("you haven't received
   the $223.98 refund yet"). A phrase fact that contains its own negation (`not eligible`) is
   looked back from its first word.
2. Hedging. Another value of the fact's type is a conflict when it is offered as an
   alternative: a hedge word (`or`, `either`, `maybe`, `perhaps`, `possibly`, `probably`) or a
   `/` among at most HEDGE_WORDS words between the two in one sentence ("$39.98 or $40",
   "$39.98/$40", "$40, or maybe $39.98"), or nothing but list punctuation between them (a bare
   list: "$39.98, $12.00, $7.50", or guesses: "$39.98? $40?"); a colon or brackets introduce an
   explanation, not alternatives ("$499: $300 from the gift card and $199 on your card",
   "$200 ($100 per passenger)"). A value that is
   itself one of the task's facts is no conflict ("$364 for a health reason, or $164 otherwise"
   when both are asked), nor is an `or` farther away ("$39.98 goes to your Visa or PayPal card,
   and the $5 fee..."), nor a comma list of names ("Sofia owns it, Dana and Ravi can view it").
   A count with a noun conflicts with any other non-negated count of that noun, in any sentence
   ("You have 3 bills. You have 4 bills."). Phrase facts are not hedged: a task whose phrase is
   one of a closed set of values lists the others as `forbidden`.
3. Stuffing. An answer that states more distinct values of one type answering none of the
   task's facts than that type's ALLOWANCE (money 4, numbers 3, dates 2, times 2, durations 2,
   percentages 2, ids 4, names 8) fails every fact of that type. A correct answer often mentions
   an order total beside the refund, or breaks an amount down ("$740: the $790 fare minus the $100
   fee, plus the $50 bag fee"), an order id and a tracking number, a name or two; every
   amount, id and name seen in the tool results is many more. Negated values are not counted.
4. Dumps. An answer with more than DUMP_ALLOWANCE such extra values overall (names aside), that
   is raw data (JSON_PAIRS or more JSON `"key": value` pairs), or that is a document (more than
   DUMP_WORDS words: a pasted policy) is not a reply to the user and fails outright.

Forbidden facts (what a misinformed answer would say) fail the answer when asserted: stated,
hedged or not, in a clause with no negation before it ("it won't leave on time" asserts no `on
time`; the clause ends at punctuation and at `and`, `but`, `because`, ...). The reason names each
fact that is missing, only negated, conflicting (and why) or forbidden. Only the text given is
graded: the harness passes the final answer.

Libraries: `inflect` gives singular and plural nouns with their irregular forms (`children`,
`statuses`, and `news` or `business` left alone), which suffix rules get wrong; verb forms are
regular suffixes plus a short table. No date library: dates are found by the patterns below and
checked by `datetime.date`, so nothing is ever filled in from today (dateutil's parser takes
missing fields from the wall clock unless given a default, and adds nothing once the span is
found). Number words are a closed table of 28 words (zero to ninety, hundred, thousand), which is
all answers use and cannot misread ordinary words as numbers.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import unicodedata
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any, cast

from mcpsim.tasks import (
    MONTHS,
    WEEKDAYS,
    AnyFact,
    CountFact,
    DateFact,
    DurationFact,
    Fact,
    IdFact,
    MoneyFact,
    NameFact,
    NumberFact,
    PhraseFact,
    TimeFact,
    state_fact,
)

# -- canonical text and tokens ----------------------------------------------------------------------

_CHARS = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2212": "-",
        "\u2014": " - ",
        "\u2015": " - ",
    }
)


def canonical(text: str) -> str:
    """Compatibility forms folded, accents dropped, quotes and dashes made ASCII (case kept)."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", stripped).translate(_CHARS)


# A word: letters and digits, with inner apostrophes (`isn't`) and, between digits, `.` or `:`
# (read from the text with `_` as a space: `in_transit` is two words).
_WORD = re.compile(r"\w+(?:(?:'|(?<=\d)[.:](?=\d))\w+)*")
_JOINERS = frozenset(" \t\r\n-_#")  # what may stand between two words of one phrase (`order #W1`)
_LOOKBACK_GAP = frozenset(" \t\r\n-_'\"$#*`")  # what negation may look back across (not , ; . ( :)


@dataclass(frozen=True, slots=True)
class Word:
    start: int
    end: int
    text: str  # casefolded


# -- typed mentions ---------------------------------------------------------------------------------

_Date = tuple[int | None, int, int]  # a mentioned date: (year or None, month, day)
KINDS = ("money", "number", "date", "time", "duration", "percent", "id", "name")


@dataclass(frozen=True, slots=True)
class Mention:
    """A typed value stated in the text, at [start, end)."""

    kind: str
    value: Hashable
    start: int
    end: int
    negated: bool = False
    sentence: int = 0


_UNITS = {
    w: i
    for i, w in enumerate(
        (
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        )
    )
}
_TENS = {
    w: 10 * i
    for i, w in enumerate(
        (
            "twenty",
            "thirty",
            "forty",
            "fifty",
            "sixty",
            "seventy",
            "eighty",
            "ninety",
        ),
        2,
    )
}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
_WORDS = rf"(?:{_NUMBER_WORD})(?:(?:[ -]|(?:(?<=hundred)|(?<=thousand))\s+and\s+)(?:{_NUMBER_WORD}))*"
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUM = rf"(?:{_DIGITS}|\b{_WORDS}\b)"
_NUM_START = r"(?=[\dzotfsenh])"  # what a number starts with: a cheap first test

_MONTHS = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY = r"(?:mon|tue(?:s)?|wed(?:nes)?|thu(?:r(?:s)?)?|fri|sat(?:ur)?|sun)(?:day)?\.?"
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4})(?!\d))?"
_DURATION_UNITS = {
    "sec": 1,
    "second": 1,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hr": 3600,
    "hour": 3600,
    "day": 86400,
    "wk": 604800,
    "week": 604800,
}
_UNIT = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|wks?|months?|years?|yrs?)"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_EMAIL = _rx(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bhttps?://\S+")
_ISO = _rx(
    r"(?<![\w-])(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})"
    r"(?:[T\s](?P<hour>\d{1,2}):(?P<minute>\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])"
)
_DATE_MONTH_FIRST = _rx(rf"(?:\b{_WEEKDAY},?\s+)?\b(?P<month>{_MONTH})\s+(?P<day>\d{{1,2}}){_ORD}(?![\d:])\b{_YEAR}")
_DATE_DAY_FIRST = _rx(
    rf"(?:\b{_WEEKDAY},?\s+)?(?:the\s+)?\b(?P<day>\d{{1,2}}){_ORD}\s+(?:of\s+)?"
    rf"(?P<month>{_MONTH})(?!\w){_YEAR}"
)
_DATE_NUMERIC = _rx(r"(?<![\w/.$:,-])(?P<month>\d{1,2})/(?P<day>\d{1,2})(?:/(?P<year>\d{4}|\d{2}))?(?![\w/]|\.\d)")
# 2026/05/25 or 2026.05.25 (year first: month then day); 25.05.2026 (dotted, year last: day first,
# as it is written where dots separate a date). A dotted date needs its year (25.05 is a number),
# a year of 1900-2099, and no version word before it ("version 1.2.2026", "build 2024.1.3").
_YEAR_4 = r"(?P<year>(?:19|20)\d{2})"
_DATE_YEAR_FIRST = _rx(
    rf"(?<![\w/.$:,#-]){_YEAR_4}(?P<sep>[/.])(?P<month>\d{{1,2}})(?P=sep)(?P<day>\d{{1,2}})(?![\w/]|\.\d)"
)
_DATE_DOTTED = _rx(rf"(?<![\w/.$:,#-])(?P<day>\d{{1,2}})\.(?P<month>\d{{1,2}})\.{_YEAR_4}(?![\w/]|\.\d)")
_VERSION_BEFORE = _rx(r"\b(?:version|ver|release|build|v)\.?\s*$")
_HOUR = r"(?<![\w:.$/])(?P<hour>\d{1,2})"  # not the end of a longer number, time, path or amount
_HALF = r"(?P<half>[ap])\.?\s?m\b\.?"  # am, a.m., pm, p.m.
_TIME_CLOCK = _rx(rf"{_HOUR}:(?P<minute>\d{{2}})(?::\d{{2}})?(?:\s*{_HALF})?(?![\d:])")
_TIME_HALF = _rx(rf"{_HOUR}(?:\.(?P<minute>\d{{2}}))?\s*{_HALF}")
_TIME_WORD = _rx(r"\b(?P<word>noon|midday|midnight)\b")
_AMOUNT = rf"{_NUM_START}(?<![\w.,$])(?P<amount>{_NUM})"  # a number, in digits or words, not glued to another
_MONEY_BEFORE = _rx(rf"(?:\bUSD\s?|\bUS\$\s?|\$\s?)-?(?P<amount>{_DIGITS})(?![\d,]*\.?\d)")
_MONEY_AFTER = _rx(rf"{_AMOUNT}\s*(?:dollars?|USD|bucks)\b(?:\s+and\s+(?P<cents>\d{{1,2}}|{_WORDS})\s+cents?\b)?")
_CENTS = _rx(r"(?<![\w.,$])(?P<cents>\d{1,2})\s*(?:cents?\b|¢)")
_PERCENT = _rx(rf"{_AMOUNT}\s*(?:%|percent\b|per\s+cent\b)")
_DURATION = _rx(
    rf"{_NUM_START}(?<![\w.,$:/])(?P<amount>{_NUM})(?:\s*(?:-|to)\s*(?P<upto>{_NUM}))?[\s-]*"
    rf"(?:(?:business|calendar|working)[\s-]+)?(?P<unit>{_UNIT})(?![\w])"
)
_ORDINAL = _rx(r"\b\d+(?:st|nd|rd|th)\b")
_ID = _rx(r"(?<![\w@.#-])\#?(?P<id>[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*)(?![\w@-]|\.\w)")
_MEASURE = _rx(r"\d+(?:\.\d+)?[a-z]{1,3}|\d+(?:-[a-z]+)+")
_NUMBER = _rx(rf"(?<![\w.,$#/:])(?P<amount>{_DIGITS})(?![\w%]|[.,:/]\d)|\b(?P<words>{_WORDS})\b")
_NAME = re.compile(r"\b[A-Z][A-Za-z]*(?:['&.-][A-Za-z]+)*\b(?:\s+[A-Z][A-Za-z]*(?:['&.-][A-Za-z]+)*\b)*")
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n+")
_HEDGE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly|probably)\b|/", re.IGNORECASE)
# A bare list of candidates: values with only list punctuation between them. A colon, brackets or
# arithmetic introduce an explanation ("$499: $300 from the gift card and $199 on the card",
# "$200 ($100 per passenger)"), not alternatives; `.` ends a statement; `$39.98? $40?` is a list.
_BARE = re.compile(r"[\s,;/|\"'?]*")
_JSON_PAIR = re.compile(r"\"[\w .-]+\"\s*:\s*(?:\"|-?\d|true\b|false\b|null\b|\[|\{)")


def _words_value(text: str) -> int | None:
    """`twenty-five` -> 25, `one hundred and five` -> 105; None unless it is one well-formed number."""
    total = current = 0
    last = ""  # kind of the previous word: unit, teen, ten, hundred, thousand
    for word in re.split(r"[\s-]+", text.lower()):
        if word == "and":
            if last not in ("hundred", "thousand"):
                return None
            continue
        if word in _TENS:
            if last in ("unit", "teen", "ten"):
                return None
            current, last = current + _TENS[word], "ten"
        elif word in _UNITS:
            value = _UNITS[word]
            if last in ("unit", "teen") or (last == "ten" and not 0 < value < 10):
                return None
            current, last = current + value, "unit" if value < 10 else "teen"
        elif word == "hundred":
            if last not in ("unit", "teen") or current >= 100:
                return None
            current, last = current * 100, "hundred"
        else:  # thousand
            if last == "thousand" or current == 0:
                return None
            total, current, last = total + current * 1000, 0, "thousand"
    return total + current


def _word_numbers(text: str, start: int, end: int) -> Iterator[tuple[float, int, int]]:
    """The numbers in a run of number words, longest first: `one two` is two numbers, `twenty two` one."""
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"[a-z]+", text[start:end], re.IGNORECASE)]
    i = 0
    while i < len(words):
        for j in range(len(words) - 1, i - 1, -1):
            value = _words_value(text[words[i][0] : words[j][1]])
            if value is not None:
                yield float(value), words[i][0], words[j][1]
                i = j + 1
                break
        else:
            i += 1


def _amount(text: str) -> float | None:
    if text[0].isdigit():
        return float(text.replace(",", ""))
    value = _words_value(text)
    return None if value is None else float(value)


def _valid_date(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day)  # 2000: a leap year, so a year-less February 29 is a date
    except ValueError:
        return False
    return True


def _clock(hour: int, minute: int, half: str | None) -> int | None:
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    return hour * 60 + minute if hour < 24 and minute < 60 else None


def _duration(amount: float, unit: str) -> Hashable:
    unit = unit.lower().rstrip("s")
    if unit in ("month", "year", "yr"):
        return ("month" if unit == "month" else "year", amount)  # of no fixed length: never equal to days
    return ("seconds", amount * _DURATION_UNITS[unit])


class _Scanner:
    """Finds typed mentions, each claiming its span so that a later, looser pattern (a plain
    number) never re-reads a digit that belongs to a date, a time, money or an id."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.claimed = bytearray(len(text))
        self.found: list[tuple[str, Hashable, int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return not any(self.claimed[start:end])

    def claim(self, start: int, end: int, kind: str | None = None, value: Hashable = None) -> None:
        self.claimed[start:end] = b"\x01" * (end - start)
        if kind is not None:
            self.found.append((kind, value, start, end))

    def each(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        for match in pattern.finditer(self.text):
            if match.end() > match.start() and self.free(match.start(), match.end()):
                yield match

    def scan(self) -> list[tuple[str, Hashable, int, int]]:
        for match in self.each(_EMAIL):
            self.claim(match.start(), match.end())
        self._dates()
        self._times()
        self._money()
        for match in self.each(_PERCENT):
            amount = _amount(match["amount"])
            if amount is not None:
                self.claim(match.start(), match.end(), "percent", amount)
        self._durations()
        for match in self.each(_ORDINAL):
            self.claim(match.start(), match.end())
        self._ids()
        for match in self.each(_NUMBER):
            if match["amount"]:
                self.claim(match.start(), match.end(), "number", float(match["amount"].replace(",", "")))
            else:
                for value, start, end in _word_numbers(self.text, match.start(), match.end()):
                    self.claim(start, end, "number", value)
        return self.found

    def _dates(self) -> None:
        year: int | None
        for match in self.each(_ISO):
            year, month, day = int(match["year"]), int(match["month"]), int(match["day"])
            if _valid_date(year, month, day):
                self.claim(match.start(), match.end(), "date", (year, month, day))
                minutes = match["hour"] and _clock(int(match["hour"]), int(match["minute"]), None)
                if minutes is not None:
                    self.found.append(("time", minutes, match.start("hour"), match.end()))
        for pattern in (_DATE_MONTH_FIRST, _DATE_DAY_FIRST):
            for match in self.each(pattern):
                month, day = _MONTHS[match["month"][:3].lower()], int(match["day"])
                year = int(match["year"]) if match["year"] else None
                if _valid_date(year, month, day):
                    self.claim(match.start(), match.end(), "date", (year, month, day))
        for pattern in (_DATE_YEAR_FIRST, _DATE_DOTTED):
            for match in self.each(pattern):
                if pattern is _DATE_YEAR_FIRST and match["sep"] == "." or pattern is _DATE_DOTTED:
                    if _VERSION_BEFORE.search(self.text, max(0, match.start() - 12), match.start()):
                        continue  # a version number, not a date
                year, month, day = int(match["year"]), int(match["month"]), int(match["day"])
                if pattern is _DATE_DOTTED and day <= 12 < month:  # 05.25.2026: month first after all
                    month, day = day, month
                if _valid_date(year, month, day):
                    self.claim(match.start(), match.end(), "date", (year, month, day))
        for match in self.each(_DATE_NUMERIC):
            month, day = int(match["month"]), int(match["day"])
            if month > 12 >= day:  # 25/5/2026: day first
                month, day = day, month
            year = int(match["year"]) if match["year"] else None
            if year is not None and year < 100:
                year += 2000
            if _valid_date(year, month, day):
                self.claim(match.start(), match.end(), "date", (year, month, day))

    def _times(self) -> None:
        for pattern in (_TIME_CLOCK, _TIME_HALF):
            for match in self.each(pattern):
                minutes = _clock(int(match["hour"]), int(match["minute"] or 0), match["half"])
                if minutes is not None:
                    self.claim(match.start(), match.end(), "time", minutes)
        for match in self.each(_TIME_WORD):
            self.claim(match.start(), match.end(), "time", 0 if match["word"].lower() == "midnight" else 720)

    def _money(self) -> None:
        for match in self.each(_MONEY_BEFORE):
            self.claim(match.start(), match.end(), "money", float(match["amount"].replace(",", "")))
        for match in self.each(_MONEY_AFTER):
            dollars = _amount(match["amount"])
            cents = _amount(match["cents"]) if match["cents"] else 0.0
            if dollars is not None and cents is not None:
                self.claim(match.start(), match.end(), "money", round(dollars + cents / 100, 2))
        for match in self.each(_CENTS):
            self.claim(match.start(), match.end(), "money", int(match["cents"]) / 100)

    def _durations(self) -> None:
        simple: list[tuple[Hashable, int, int]] = []
        for match in self.each(_DURATION):
            amount, upto = _amount(match["amount"]), _amount(match["upto"]) if match["upto"] else None
            if amount is None:
                continue
            self.claim(match.start(), match.end())
            simple.append((_duration(amount, match["unit"]), match.start(), match.end()))
            if upto is not None:  # a range, 5-7 days: two durations
                self.found.append(("duration", _duration(upto, match["unit"]), match.start("upto"), match.end()))
        simple.sort(key=lambda d: d[1])
        merged: list[tuple[Hashable, int, int]] = []
        for value, start, end in simple:
            if merged and _adds_to(merged[-1][0], value, self.text[merged[-1][2] : start]):
                previous, first, _ = merged.pop()
                value = ("seconds", previous[1] + value[1])  # type: ignore[index]
                start = first
            merged.append((value, start, end))
        self.found += [("duration", value, start, end) for value, start, end in merged]

    def _ids(self) -> None:
        for match in self.each(_ID):
            token = match["id"]
            alnum = re.sub(r"[-_]", "", token)
            if not any(c.isdigit() for c in token) or len(alnum) < 5 or _MEASURE.fullmatch(token):
                continue
            self.claim(match.start(), match.end(), "id", token.casefold())


def _adds_to(first: Hashable, second: Hashable, between: str) -> bool:
    """`4 hours and 55 minutes`: a larger unit then a smaller one, joined by `and`, a comma or nothing."""
    return (
        isinstance(first, tuple)
        and isinstance(second, tuple)
        and first[0] == second[0] == "seconds"
        and re.fullmatch(r"\s*,?\s*(?:and\s+)?", between) is not None
        and first[1] > second[1]
    )


# -- names ------------------------------------------------------------------------------------------

_NOT_NAMES = frozenset(
    {
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "although",
        "am",
        "an",
        "and",
        "another",
        "any",
        "anything",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "dear",
        "did",
        "do",
        "does",
        "done",
        "during",
        "each",
        "either",
        "even",
        "every",
        "everything",
        "few",
        "for",
        "from",
        "further",
        "good",
        "great",
        "had",
        "has",
        "have",
        "having",
        "he",
        "hello",
        "her",
        "here",
        "hers",
        "herself",
        "hey",
        "hi",
        "him",
        "his",
        "how",
        "however",
        "i",
        "i'd",
        "i'll",
        "i'm",
        "i've",
        "if",
        "in",
        "into",
        "is",
        "it",
        "it's",
        "its",
        "just",
        "let",
        "let's",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "neither",
        "no",
        "nor",
        "not",
        "note",
        "now",
        "of",
        "off",
        "ok",
        "okay",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "please",
        "regards",
        "same",
        "she",
        "should",
        "since",
        "so",
        "some",
        "sorry",
        "still",
        "such",
        "sure",
        "than",
        "thank",
        "thanks",
        "that",
        "that's",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "though",
        "through",
        "to",
        "today",
        "tomorrow",
        "too",
        "unfortunately",
        "until",
        "up",
        "upon",
        "very",
        "was",
        "we",
        "we're",
        "we've",
        "were",
        "what",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yes",
        "yesterday",
        "yet",
        "you",
        "you're",
        "you've",
        "your",
        "yours",
        "unless",
        "anyway",
        "meanwhile",
        "besides",
        "finally",
        "first",
        "next",
        "lastly",
        "summary",
        "total",
        "update",
        "updated",
        *MONTHS,
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        *WEEKDAYS,
        "mon",
        "tue",
        "tues",
        "wed",
        "thu",
        "thurs",
        "fri",
        "sat",
        "sun",
    }
)


def _names(text: str, claimed: bytearray) -> list[tuple[str, int, int]]:
    names = []
    for match in _NAME.finditer(text):
        words = [(m.start() + match.start(), m.end() + match.start()) for m in re.finditer(r"\S+", match.group())]
        words = [(s, e) for s, e in words if text[s:e].casefold() not in _NOT_NAMES and not any(claimed[s:e])]
        # a run split by a dropped word stays one name only where it was contiguous
        runs: list[list[tuple[int, int]]] = []
        for s, e in words:
            if runs and re.fullmatch(r"\s+", text[runs[-1][-1][1] : s]):
                runs[-1].append((s, e))
            else:
                runs.append([(s, e)])
        for run in runs:
            start, end = run[0][0], run[-1][1]
            names.append((" ".join(_unpossessed(w) for w in text[start:end].casefold().split()), start, end))
    return names


def _unpossessed(word: str) -> str:
    """`dana's` -> `dana` (but `it's` stays: it is a contraction, and short)."""
    return word[:-2] if word.endswith("'s") and len(word) > 4 else word


# -- the parsed answer ------------------------------------------------------------------------------

_WHOLE = re.compile(r"\b(?:out\s+of|of)(?:\s+(?:the|all|your|its|their|his|her))?\s+$", re.IGNORECASE)

_NEGATIONS = frozenset(
    {
        "not",
        "no",
        "nothing",  # "nothing has been cancelled"
        "nobody",
        "never",
        "cannot",
        "neither",
        "nor",
        "none",
        "without",
        "unable",
        "instead",
        "rather",
    }
)
_FUNCTION_WORDS = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "a",
        "an",
        "the",
        "any",
        "your",
        "my",
        "our",
        "their",
        "his",
        "her",
        "its",
        "this",
        "that",
        "these",
        "those",
        "yet",
        "even",
        "really",
        "actually",
        "exactly",
        "quite",
        "currently",
        "still",
        "ever",
        "anymore",
        "already",
        "just",
        "only",
        "longer",
        "at",
        "in",
        "on",
        "for",
        "of",
        "to",
        "by",
        "also",
        "again",
        "or",
        "nor",
        "due",
        "about",
        "around",
        "approximately",
        "roughly",
    }
)
_ID_NOUNS = frozenset(
    {  # `not order W123`: the noun an id stands after
        "order",
        "orders",
        "reservation",
        "reservations",
        "flight",
        "flights",
        "card",
        "cards",
        "number",
        "code",
        "account",
        "booking",
        "ticket",
        "tracking",
        "reference",
        "confirmation",
        "id",
    }
)
_FILLERS = _FUNCTION_WORDS | _ID_NOUNS
_CLAUSE_OPENERS = frozenset(
    {
        "and",
        "but",
        "because",
        "since",
        "as",
        "so",
        "while",
        "whereas",
        "although",
        "though",
        "however",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "then",
        "if",
        "unless",
        "until",
    }
)


@dataclass(frozen=True)
class Parsed:
    """An answer read once: its canonical text, words, typed mentions and names."""

    text: str
    words: tuple[Word, ...]
    mentions: tuple[Mention, ...]
    sentence_starts: tuple[int, ...]
    json_pairs: int
    valued: bytes  # 1 where a typed value stands
    word_ends: tuple[int, ...]

    def sentence(self, position: int) -> int:
        return bisect.bisect_right(self.sentence_starts, position) - 1

    def of_kind(self, kind: str) -> list[Mention]:
        return [m for m in self.mentions if m.kind == kind]

    def negated(self, start: int) -> bool:
        """Whether the words just before `start` negate what starts there (rule 1). The look-back
        passes over fillers, other values and `or` (`not $12 or $40` negates both)."""
        index = bisect.bisect_right(self.word_ends, start) - 1
        position = start
        for word in reversed(self.words[max(0, index - 9) : index + 1]):
            if not set(self.text[word.end : position]) <= _LOOKBACK_GAP:
                return False
            if word.text in _NEGATIONS or word.text.endswith("n't"):
                return True
            if word.text not in _FILLERS and not self.valued[word.start]:
                return False
            position = word.start
        return False

    def in_negated_clause(self, start: int) -> bool:
        """Whether a negation comes before `start` in its clause (clauses end at punctuation and
        at conjunctions such as `and`, `but`, `because`)."""
        index = bisect.bisect_right(self.word_ends, start) - 1
        position = start
        for word in reversed(self.words[: index + 1]):
            if not set(self.text[word.end : position]) <= _LOOKBACK_GAP or word.text in _CLAUSE_OPENERS:
                return False
            if word.text in _NEGATIONS or word.text.endswith("n't"):
                return True
            position = word.start
        return False

    def words_after(self, end: int, count: int) -> list[Word]:
        after = [w for w in self.words if w.start >= end][:count]
        kept, position = [], end
        for word in after:
            if not set(self.text[position : word.start]) <= _JOINERS | {","}:
                break
            kept.append(word)
            position = word.end
        return kept


def parse(answer: str) -> Parsed:
    """The answer read once; short texts (answers, phrases) are cached, long ones (pasted tool
    results) are not, so the cache stays small."""
    return _parse_cached(answer) if len(answer) <= CACHED_LENGTH else _parse(answer)


CACHED_LENGTH = 4096


def _parse(answer: str) -> Parsed:
    text = canonical(answer)
    words = tuple(Word(m.start(), m.end(), m.group().casefold()) for m in _WORD.finditer(text.replace("_", " ")))
    starts = (0, *(m.end() for m in _SENTENCE_END.finditer(text)))
    scanner = _Scanner(text)
    found = scanner.scan()
    found += [("name", value, start, end) for value, start, end in _names(text, scanner.claimed)]
    draft = Parsed(
        text, words, (), starts, len(_JSON_PAIR.findall(text)), bytes(scanner.claimed), tuple(w.end for w in words)
    )
    mentions = tuple(
        sorted(
            (
                Mention(kind, value, start, end, draft.negated(start), draft.sentence(start))
                for kind, value, start, end in found
            ),
            key=lambda m: (m.start, m.kind),
        )
    )
    return dataclasses.replace(draft, mentions=mentions)


_parse_cached = lru_cache(maxsize=1024)(_parse)


# -- phrases and their inflections ------------------------------------------------------------------


@lru_cache(maxsize=1)
def inflection_engine() -> Any:
    """inflect's engine, loaded on first use (`grading.grader` loads it when imported): importing
    inflect costs about a second, which a served episode (whose world imports its custom checks)
    should not pay at start-up."""
    import inflect

    return inflect.engine()


_IRREGULAR = {
    "paid": "pay",
    "sent": "send",
    "bought": "buy",
    "sold": "sell",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "got": "get",
    "gotten": "get",
    "made": "make",
    "held": "hold",
    "left": "leave",
    "found": "find",
    "told": "tell",
    "flew": "fly",
    "flown": "fly",
    "chose": "choose",
    "chosen": "choose",
    "went": "go",
    "gone": "go",
    "came": "come",
    "saw": "see",
    "seen": "see",
    "kept": "keep",
    "spent": "spend",
    "lost": "lose",
    "won": "win",
    "wrote": "write",
    "written": "write",
    "began": "begin",
    "begun": "begin",
    "broke": "break",
    "broken": "break",
}


@lru_cache(maxsize=65536)
def word_forms(word: str) -> frozenset[str]:
    """Base forms a word may stand for: itself, its singular, and its verb stem (`refunded` ->
    `refund`, `shipped` -> `ship`, `charges` -> `charge`, `paid` -> `pay`). Two words are the same
    word in another inflection when their forms meet."""
    forms = {word, _IRREGULAR.get(word, word), _unpossessed(word)}
    if len(word) < 4 or not word.isalpha() or word in _NOT_NAMES or word in _FUNCTION_WORDS:
        return frozenset(forms)
    singular = inflection_engine().singular_noun(word)
    if singular:
        forms.add(singular)
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            forms |= {stem, stem + "e"}
            if stem.endswith("i") and suffix == "ed":
                forms.add(stem[:-1] + "y")  # verified -> verify
            if len(stem) >= 4 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
                forms.add(stem[:-1])  # shipped -> ship
            if stem.endswith("ll"):
                forms.add(stem[:-1])  # cancelled -> cancel (British doubling)
    return frozenset(forms)


def _phrase_words(phrase: str) -> tuple[str, ...]:
    return tuple(m.group().casefold() for m in _WORD.finditer(canonical(phrase).replace("_", " ")))


def _find_words(parsed: Parsed, phrase: tuple[str, ...], inflected: bool) -> Iterator[tuple[int, int]]:
    """Spans where the phrase's words stand in a row (only spaces, hyphens or underscores between)."""
    words, n = parsed.words, len(phrase)
    for i in range(len(words) - n + 1):
        ok = True
        for j, want in enumerate(phrase):
            word = words[i + j]
            same = (
                word.text == want
                or _unpossessed(word.text) == want
                or (inflected and not word_forms(word.text).isdisjoint(word_forms(want)))
            )
            if not same or (j and not set(parsed.text[words[i + j - 1].end : word.start]) <= _JOINERS):
                ok = False
                break
        if ok:
            yield words[i].start, words[i + n - 1].end


# -- facts as alternatives --------------------------------------------------------------------------


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
                return self.noun is None or parsed is None or _noun_follows(parsed, mention, self.noun)
            case "date":
                year, month, day = cast(_Date, mention.value)
                fact_year, fact_month, fact_day = cast(_Date, self.value)
                if (month, day) != (fact_month, fact_day):
                    return False
                return year == fact_year or fact_year is None or (year is None and self.year_optional)
            case "name":
                return _name_in(self.value, mention.value)  # type: ignore[arg-type]
        return mention.value == self.value


def _name_in(name: str, mention: str) -> bool:
    return f" {name} " in f" {mention} " or f" {mention} " in f" {name} "


def _noun_follows(parsed: Parsed, mention: Mention, noun: str) -> bool:
    """The count's noun, of one word or more, within three words after the number (`3 checked
    bags`, `6 leave requests`), or just before it with only fillers between (`the capacity is 4`,
    `capacity: 4`)."""
    wanted = [word_forms(w) for w in _phrase_words(noun)]
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


_NOUN_GAP = _LOOKBACK_GAP | frozenset(":=")


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
        elif word.text not in _FUNCTION_WORDS:
            words = list(parsed.words[k - len(wanted) + 1 : k + 1]) if k + 1 >= len(wanted) else []
            joined = all(set(parsed.text[a.end : b.start]) <= _JOINERS for a, b in zip(words, words[1:], strict=False))
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
    words = _phrase_words(phrase)
    if words and all(w[:1].isupper() or any(c.isupper() for c in w) for w in canonical(phrase).split()):
        return Alternative("name", " ".join(words))
    return Alternative("phrase", words)


def _covers(parsed: Parsed, mention: Mention) -> bool:
    outside = parsed.text[: mention.start] + parsed.text[mention.end :]
    return not outside.strip(" .,;:!?\"'")


def alternatives(fact: Fact) -> tuple[Alternative, ...]:
    match fact:
        case MoneyFact(money=money, tolerance=tolerance):
            return (Alternative("money", money, tolerance),)
        case NumberFact(number=number, tolerance=tolerance):  # untyped (legacy): money or a plain number
            return Alternative("money", number, tolerance), Alternative("number", number, tolerance)
        case CountFact(count=count, noun=noun):
            return (Alternative("number", float(count), 0.0, noun),)
        case DateFact(date=day, year_optional=optional):
            year, month, dom = (int(part) for part in day.split("-"))
            return (Alternative("date", (year, month, dom), year_optional=optional),)
        case TimeFact(time=clock):
            hour, minute = (int(part) for part in clock.split(":"))
            return (Alternative("time", hour * 60 + minute),)
        case DurationFact(duration=duration, unit=unit):
            return (Alternative("duration", _duration(duration, unit)),)
        case IdFact(id=ident):
            return (Alternative("id", ident.removeprefix("#").casefold()),)
        case NameFact(name=name):
            return (Alternative("name", " ".join(_phrase_words(name))),)
        case PhraseFact(phrase=phrase, synonyms=synonyms):
            return tuple(phrase_alternative(p) for p in (phrase, *synonyms))
        case AnyFact(any=phrases):
            return tuple(phrase_alternative(p) for p in phrases)
        case str():
            return (phrase_alternative(fact),)
    raise TypeError(f"not a fact: {fact!r}")


# -- grading ----------------------------------------------------------------------------------------

ALLOWANCE = {"money": 4, "number": 3, "date": 2, "time": 2, "duration": 2, "percent": 2, "id": 4, "name": 8}
HEDGE_WORDS = 4  # `$39.98, or maybe even $40`; a longer stretch joins other things (`to your Visa or PayPal`)
DUMP_ALLOWANCE = 12  # extra typed values (all kinds but names) before an answer is a dump, not a reply
JSON_PAIRS = 3  # `"key": value` pairs before an answer is raw data
DUMP_WORDS = 400  # words before an answer is a document (a policy pasted whole), not a reply


@dataclass(frozen=True)
class Occurrence:
    """Where an alternative of a fact is stated: a mention, or a name or phrase span."""

    start: int
    end: int
    kind: str
    mention: Mention | None
    negated: bool


@dataclass
class Reading:
    """The answer read against one task's facts: which mentions answer a fact, how many extra
    values of each kind it states, and whether it is a dump."""

    parsed: Parsed
    asked: list[Alternative]
    extras: dict[str, int] = field(init=False)  # distinct values per kind that answer no fact
    dump_size: int = field(init=False)

    def __post_init__(self) -> None:
        extras: dict[str, set[Hashable]] = {kind: set() for kind in KINDS}
        for mention in self.parsed.mentions:
            if not mention.negated and not self.answers_a_fact(mention):
                extras[mention.kind].add(mention.value)
        self.extras = {kind: len(values) for kind, values in extras.items()}
        self.dump_size = sum(n for kind, n in self.extras.items() if kind != "name")

    def answers_a_fact(self, mention: Mention) -> bool:
        return any(alt.accepts(mention) for alt in self.asked)

    def dump(self) -> str | None:
        if len(self.parsed.words) > DUMP_WORDS:
            return f"the answer is {len(self.parsed.words)} words long: a document, not a reply (at most {DUMP_WORDS})"
        if self.parsed.json_pairs >= JSON_PAIRS:
            return f"the answer is raw data ({self.parsed.json_pairs} JSON key-value pairs), not a reply"
        if self.dump_size > DUMP_ALLOWANCE:
            return (
                f"the answer lists {self.dump_size} values that answer nothing asked "
                f"(at most {DUMP_ALLOWANCE} are allowed)"
            )
        return None

    def stuffed(self, kind: str) -> str | None:
        extra = self.extras.get(kind, 0)
        if extra > ALLOWANCE.get(kind, extra):
            return f"the answer states {extra} other {_KIND_NAMES[kind]} (at most {ALLOWANCE[kind]} are allowed)"
        return None

    def hedged(self, occurrence: Occurrence) -> Mention | None:
        """Another value of the same kind, in the same sentence, joined by a hedge (rule 2)."""
        if occurrence.kind == "phrase":
            return None
        sentence = self.parsed.sentence(occurrence.start)
        for other in self.parsed.of_kind(occurrence.kind):
            overlaps = other.start < occurrence.end and occurrence.start < other.end
            same = occurrence.mention is not None and other.value == occurrence.mention.value
            if other.negated or overlaps or same or self.answers_a_fact(other):
                continue
            low, high = sorted([(occurrence.start, occurrence.end), (other.start, other.end)])
            if self._joined(low[1], high[0], occurrence.kind, other.sentence == sentence):
                return other
        return None

    def rival_count(self, occurrence: Occurrence, noun: str) -> Mention | None:
        """Another count of the fact's noun anywhere in the answer, in any sentence (rule 2):
        `You have 3 bills. You have 4 bills.` and `14 visitors? 15 visitors?` are guesses. Not
        a rival: a count after the fact's that is a part of it (`3 bills: 1 bill is overdue and
        2 bills are paid`), or the one whole it is part of (`3 bills are unpaid, out of 10
        bills`). A list of guesses then passes only where its first count is the true one, as
        that count alone would."""
        mention = occurrence.mention
        if mention is None:
            return None
        wholes = 0
        for other in self.parsed.of_kind("number"):
            if other.negated or other.value == mention.value or self.answers_a_fact(other):
                continue
            if not _noun_follows(self.parsed, other, noun):
                continue
            later = other.start > occurrence.end
            if later and isinstance(other.value, int | float) and isinstance(mention.value, int | float):
                if other.value < mention.value:
                    continue  # a part of the count
                before = self.parsed.text[max(0, other.start - 16) : other.start]
                if wholes == 0 and _WHOLE.search(before):
                    wholes += 1
                    continue  # the whole it is part of
            return other
        return None

    def _joined(self, start: int, end: int, kind: str, one_sentence: bool) -> bool:
        """Whether the text between two values offers them as alternatives: a hedge word (or a
        `/`) among at most HEDGE_WORDS words of one sentence, or nothing but punctuation and
        other values (a bare list of candidates: `$39.98, $40`, or guesses `$39.98? $40?`)."""
        between = list(self.parsed.text[start:end])
        for mention in self.parsed.mentions:
            for i in range(max(mention.start, start), min(mention.end, end)):
                between[i - start] = " "
        rest = "".join(between)
        if kind != "name" and _BARE.fullmatch(rest) and (one_sentence or "?" in rest):  # names: prose lists
            return True
        return one_sentence and _HEDGE.search(rest) is not None and len(_WORD.findall(rest)) <= HEDGE_WORDS

    def occurrences(self, alt: Alternative) -> list[Occurrence]:
        parsed = self.parsed
        if alt.kind == "phrase":
            return [
                Occurrence(s, e, "phrase", None, parsed.negated(s))
                for s, e in _find_words(parsed, alt.value, inflected=True)  # type: ignore[arg-type]
            ]
        found = [
            Occurrence(m.start, m.end, m.kind, m, m.negated) for m in parsed.of_kind(alt.kind) if alt.accepts(m, parsed)
        ]
        if alt.kind == "name":  # a name inside a longer run, or in lower case
            spans = {(o.start, o.end) for o in found}
            found += [
                Occurrence(s, e, "name", None, parsed.negated(s))
                for s, e in _find_words(parsed, tuple(str(alt.value).split()), inflected=False)
                if (s, e) not in spans
            ]
        if alt.kind == "id":  # an id too short to be read as one (`4186`) is still that token
            found += [
                Occurrence(m.start(), m.end(), "id", None, parsed.negated(m.start()))
                for m in re.finditer(
                    rf"(?<![\w@.-])#?{re.escape(str(alt.value))}(?![\w@-]|\.\w)", parsed.text, re.IGNORECASE
                )
                if not any(o.start <= m.start() < o.end for o in found)
            ]
        return found


_KIND_NAMES = {
    "money": "amounts of money",
    "number": "numbers",
    "date": "dates",
    "time": "times of day",
    "duration": "durations",
    "percent": "percentages",
    "id": "ids",
    "name": "names",
}


@dataclass(frozen=True)
class FactResult:
    fact: Fact
    status: str  # stated, missing, negated, conflicting
    detail: str = ""

    @property
    def label(self) -> str:
        return state_fact(self.fact) + (f" ({self.detail})" if self.detail else "")


def judge(fact: Fact, reading: Reading) -> FactResult:
    """Whether the answer states `fact`: found, not negated, not hedged, not stuffed."""
    conflicts: list[str] = []
    negated = False
    for alt in alternatives(fact):
        for occurrence in reading.occurrences(alt):
            if occurrence.negated:
                negated = True
                continue
            problem = None
            if alt.kind != "phrase":
                other = reading.hedged(occurrence) or (alt.noun and reading.rival_count(occurrence, alt.noun))
                problem = reading.stuffed(alt.kind) or (
                    other and f"hedged with {reading.parsed.text[other.start : other.end]!r}"
                )
            if not problem:
                return FactResult(fact, "stated")
            conflicts.append(problem)
    if conflicts:
        return FactResult(fact, "conflicting", conflicts[0])
    return FactResult(fact, "negated" if negated else "missing")


def forbidden_stated(fact: Fact, parsed: Parsed) -> bool:
    """Whether the answer asserts a forbidden fact: stated in a clause with no negation at all
    (`it won't leave on time` does not assert `on time`; rule 1 alone would say it does)."""
    reading = Reading(parsed, [])
    return any(
        not o.negated and not parsed.in_negated_clause(o.start)
        for alt in alternatives(fact)
        for o in reading.occurrences(alt)
    )


def fact_stated(fact: Fact, answer: str) -> bool:
    """Whether `answer` states `fact` (as graded when it is the task's only fact)."""
    reading = Reading(parse(answer), list(alternatives(fact)))
    return reading.dump() is None and judge(fact, reading).status == "stated"


def grade_answer(facts: list[Fact], forbidden: list[Fact], answer: str | None) -> tuple[bool, str]:
    if not answer or not answer.strip():
        return False, "no final answer was given"
    parsed = parse(answer)
    reading = Reading(parsed, [alt for fact in facts for alt in alternatives(fact)])
    results = [judge(fact, reading) for fact in facts]
    dump = reading.dump()
    problems = [dump] if dump else []
    for status, title in (
        ("missing", "missing"),
        ("negated", "stated only under negation"),
        ("conflicting", "conflicting"),
    ):
        listed = [r.label for r in results if r.status == status]
        if listed:
            problems.append(f"{title}: " + ", ".join(listed))
    wrong = [state_fact(f) for f in forbidden if forbidden_stated(f, parsed)]
    if wrong:
        problems.append("states what is not so: " + ", ".join(wrong))
    return not problems, "; ".join(problems) or f"all {len(facts)} facts stated"


# -- for the cheating baselines ---------------------------------------------------------------------


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
                year, month, day = cast(_Date, mention.value)
                items[f"{year:04d}-{month:02d}-{day:02d}" if year else f"{month}/{day}"] = None
    return "I found: " + ", ".join(items) + "." if items else "I found nothing."
