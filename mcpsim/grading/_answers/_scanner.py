"""Typed values read out of text, each with its span:

- money: `$39.98`, `$ 39.98`, `US$39.98`, `USD 39.98`, `39.98 dollars`, `39.98 USD`, `39.98$`, `$1,006`,
  `forty dollars`, `39 dollars and 98 cents`, `98 cents`;
- dates: `2026-05-25`, `May 25`, `May 25th`, `May 25, 2026`, `25 May 2026`, `25th of May`,
  `5/25/2026`, `5/25`, `2026/05/25`, `25.05.2026`, `Monday, May 25`, `Sept. 30` (a year-less date
  is kept year-less);
- times: `14:30`, `2:30 pm`, `2:30 PM`, `2.30 p.m.`, `4pm`, `noon`, `midnight`;
- durations: `180 minutes`, `3 hours`, `180-minute`, `three hours`, `4h55m`, `4 hours and 55 minutes`
  (one duration of 295 minutes), `5-7 business days` (two);
- percentages: `4%`, `4 percent`;
- phone numbers: `(512) 555-0187`, `512.555.0187`, `+1 512 555 0187`, `+44 20 7946 0958`, read by
  `phonenumbers` (Google's libphonenumber) as one E.164 number; a run of digits with no separator
  is an id;
- ids: a token with a digit and five or more characters (`W6964978`, `#W6964978`, `2CVBG9`,
  `GC-2779-7012-7959`, `7029190570717`, `ronald_taylor_8832`), not a measure (`41mm`, `2-person`);
- numbers and counts: whatever digits or number words (`three`, `twenty-five`,
  `one hundred and five`) are left, never a digit inside any of the above.

No date library: dates are found by the patterns below and checked by `datetime.date`, so nothing
is ever filled in from today (dateutil's parser takes missing fields from the wall clock unless
given a default, and adds nothing once the span is found).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from datetime import date

import phonenumbers

from mcpsim.grading._answers._numbers import DIGITS, NUM, NUM_START, SPELLED_NUMBER, number_value, word_numbers

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
_WEEKDAY = r"(?:mon|tue(?:s)?|wed(?:s|nes)?|thu(?:r(?:s)?)?|fri|sat(?:ur)?|sun)(?:day)?\.?"
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
_AMOUNT = rf"{NUM_START}(?<![\w.,$])(?P<amount>{NUM})"  # a number, in digits or words, not glued to another
_MONEY_BEFORE = _rx(rf"(?:\bUSD\s?|\bUS\$\s?|\$\s?)-?(?P<amount>{DIGITS})(?![\d,]*\.?\d)")
_MONEY_AFTER = _rx(
    rf"{_AMOUNT}\s*(?:dollars?|USD|US\s+dollars|bucks|\$(?![\w$]))(?:\s+and\s+(?P<cents>\d{{1,2}}|{SPELLED_NUMBER})\s+cents?\b)?"
)
# A phone number: separators, brackets or a `+` (a bare run of digits is an id), read by phonenumbers.
_PHONE = _rx(
    r"(?<![\w.+/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)|\d{1,4})(?:[\s.-]\d{2,4}){1,3}(?![\w-]|\.\d)|\+\d{8,15}\b"
)
_CENTS = _rx(r"(?<![\w.,$])(?P<cents>\d{1,2})\s*(?:cents?\b|¢)")
_PERCENT = _rx(rf"{_AMOUNT}\s*(?:%|percent\b|per\s+cent\b)")
_DURATION = _rx(
    rf"{NUM_START}(?<![\w.,$:/])(?P<amount>{NUM})(?:(?:[^\S\n]*-|\s*to)\s*(?P<upto>{NUM}))?[\s-]*"
    rf"(?:(?:business|calendar|working)[\s-]+)?(?P<unit>{_UNIT})(?![\w])"
)
_DURATION_COMPACT = _rx(
    r"(?<![\w.:])(?:(?P<hours>\d{1,3})\s?h(?:rs?)?\s?(?P<minutes>\d{1,2})\s?m(?:in)?|(?P<only>\d{1,3})h)(?![\w:])"
)
_ORDINAL = _rx(r"\b\d+(?:st|nd|rd|th)\b")
_ID = _rx(r"(?<![\w@.#-])\#?(?P<id>[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*)(?![\w@-]|\.\w)")
_MEASURE = _rx(r"\d+(?:\.\d+)?[a-z]{1,3}|\d+(?:-[a-z]+)+")
_NUMBER = _rx(rf"(?<![\w.,$#/:])(?P<amount>{DIGITS})(?![\w%]|[.,:/]\d)|\b(?P<words>{SPELLED_NUMBER})\b")


def phone_number(text: str) -> str | None:
    """A phone number as E.164 (`(512) 555-0187` -> `+15125550187`; a number without a country
    code is read as a US one), or None when phonenumbers finds no possible number of 10 digits or
    more in it (a date, a price or a short code is none)."""
    if sum(c.isdigit() for c in text) < 10:
        return None
    try:
        number = phonenumbers.parse(text, "US")
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_possible_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


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


def duration_value(amount: float, unit: str) -> Hashable:
    unit = unit.lower().rstrip("s")
    if unit in ("month", "year", "yr"):
        return ("month" if unit == "month" else "year", amount)  # of no fixed length: never equal to days
    return ("seconds", amount * _DURATION_UNITS[unit])


class Scanner:
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
        """The pattern's matches on free text. A match over a claimed span is dropped and the
        search goes on from just after its start, so a value inside it is still found (in `USD
        90.00 - 24 hours`, `90.00 - 24 hours` is no range of durations, but `24 hours` is one)."""
        position = 0
        while position <= len(self.text):
            match = pattern.search(self.text, position)
            if match is None:
                return
            if match.end() > match.start() and self.free(match.start(), match.end()):
                yield match
                position = match.end()
            else:
                position = match.start() + 1

    def scan(self) -> list[tuple[str, Hashable, int, int]]:
        for match in self.each(_EMAIL):
            self.claim(match.start(), match.end())
        self._dates()
        self._phones()
        self._times()
        self._money()
        for match in self.each(_PERCENT):
            amount = number_value(match["amount"])
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
                for value, start, end in word_numbers(self.text, match.start(), match.end()):
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

    def _phones(self) -> None:
        for match in self.each(_PHONE):
            number = phone_number(match.group())
            if number is not None:
                self.claim(match.start(), match.end(), "phone", number)

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
            dollars = number_value(match["amount"])
            cents = number_value(match["cents"]) if match["cents"] else 0.0
            if dollars is not None and cents is not None:
                self.claim(match.start(), match.end(), "money", round(dollars + cents / 100, 2))
        for match in self.each(_CENTS):
            self.claim(match.start(), match.end(), "money", int(match["cents"]) / 100)

    def _durations(self) -> None:
        for match in self.each(_DURATION_COMPACT):  # `4h55m`, `4h 55m`, `2h`
            hours, minutes = int(match["hours"] or match["only"]), int(match["minutes"] or 0)
            self.claim(match.start(), match.end(), "duration", ("seconds", float(hours * 3600 + minutes * 60)))
        simple: list[tuple[Hashable, int, int]] = []
        for match in self.each(_DURATION):
            amount, upto = number_value(match["amount"]), number_value(match["upto"]) if match["upto"] else None
            if amount is None:
                continue
            self.claim(match.start(), match.end())
            simple.append((duration_value(amount, match["unit"]), match.start(), match.end()))
            if upto is not None:  # a range, 5-7 days: two durations
                self.found.append(("duration", duration_value(upto, match["unit"]), match.start("upto"), match.end()))
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
