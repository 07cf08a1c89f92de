"""Whether an agent's request for the go-ahead says what it will do: the `confirmed` check's
`describe` rule (`mcpsim.grading._checks.confirmed`).

A request names the change when it states one value that tells this change apart:
- an argument the agent sent: an id, an amount, a date, a time, a new email or address, or a
  reason in its own words; not a single word ("economy", a first name);
- a value of a row the call changed: the row's key; a column the call changed, before or after;
  a value with a digit of its other columns (a card's last four, an amount) or a proper name
  ("remove David Rivera as a payee"); any column of a
  row it inserted or deleted (an item's name, a payee's name, a price).
The person's own ids (those the episode's first call, the identity lookup, answered with: the
customer's or user's id, which every change of theirs carries) name nothing unless they are the
key of a changed row; nor do bookkeeping times (`*_at` columns), people's first and last names
(the user's own, on every booking of theirs) and the day of the call.
Values are compared as the answer grader reads them (`mcpsim.grading._answers`): `#W0006911` and
`W0006911`; `2026-05-28` and "May 28" (a date said without its year is the call's year); `13:20`
and "1:20 PM"; `$1,000.00` and 1000; a whole number of cents in a money column said in dollars;
`512-555-0187` and "(512) 555.0187" or "+1 512 555 0187" (phone numbers by `phonenumbers`); an
address in other words: `895 Bauer Corner Apt. 990, Boise, Idaho` and "895 Bauer Cor #990, Boise,
ID" (street and unit words, US states and countries by `us` and `pycountry`: `mcpsim.tasks._places`).
An amount said with its currency ("$5") matches only money:
an argument or column named for it (amount, price, refund, balance, limit, ...) or a number with
cents; never a count, a flag or zero. A bare number under 100 ("10 business days", "seat 3")
names nothing. Proper names from the rows ("Yellow", "Ally Bank") count as written, so "Is that
right?" is not the option "Right". The verb is read by the `confirmed` check, not here: a
request must also assert the call's action (`mcpsim.tasks.names_action`), so naming the record
with another or a negated action ("I'll leave order #W1 as it is") does not ask for this change.

A request that pastes JSON or a Python dict, runs past REQUEST_LIMIT characters (the asking
turns together) or states more than STUFFED numbers and identifiers that the episode had not
shown is not a description, whatever it names.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcpsim.engine import Change
from mcpsim.grading._answers import Parsed, canonical, canonical_places, parse, place_code

REQUEST_LIMIT = 4000  # characters of the asking turns: a description is a few sentences, not a dump
STUFFED = 8  # numbers and identifiers a request may state that the episode had not shown
PARSED_VALUE_LIMIT = 500  # longer values (an email's body) are matched as text only
_SMALL = 100  # a bare number below this (a count, "24 hours") names nothing
_MONEY = re.compile(  # a name for money: `refund_cents`, `amount`, `price`; not `paid_bags` or `total_baggages`
    r"(?:^|_)(?:amount|price|cost|fee|refund|balance|limit|cents|charge|fare|deposit|credit)s?(?:_|$)|(?:^|_)total$"
)
_POINTER = re.compile(r"(?:^|_)id$")  # a row's own key, or an id it points to
_BOOKKEEPING = re.compile(r"_at$")  # created_at, updated_at: set by the world, not chosen
_PERSON = re.compile(r"(?:^|_)(?:first|last|middle|given|family)_?name$")  # the user's own, on every booking
_TOKEN = re.compile(r"(?<![a-z0-9])[a-z0-9]*\d[a-z0-9]*(?:[.,]\d+)*")  # in `_plain` text: w0006911, 1,000.50
_PHONE = re.compile(r"^\+?[\d\s().-]{7,}$")
_DIGIT_RUN = re.compile(r"\+?\d[\d\s().-]{5,}\d")
_PYTHON_DICT = re.compile(r"'[\w .-]+'\s*:\s*\S")


def _pairs(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    """(the name it goes by, value) for each value inside `value`; JSON texts (a row's JSON
    column) are decoded, and a list's items go by the list's name."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, Mapping):
        for k, item in value.items():
            yield from _pairs(item, str(k))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _pairs(item, key)
    elif value is not None and not isinstance(value, bool):
        yield key, value


def _plain(text: str) -> str:
    """Lower case, with every sign but `@ . , $ % +` read as a space."""
    return " ".join(re.sub(r"[^a-z0-9@.,$%+]", " ", text.lower()).split())


def _has_digit(value: Any) -> bool:
    return isinstance(value, int | float) or any(c.isdigit() for c in str(value))


def _digits(text: str) -> str:
    """A phone number's digits, without a leading country code 1."""
    digits = re.sub(r"\D", "", text)
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def owner_ids(first_result: Any) -> set[str]:
    """The ids the first call of an episode answered with (`customer_id`, `user_id`: the identity
    lookup a policy starts with): the person's own ids, which every change of theirs carries."""
    return {str(v) for k, v in _pairs(first_result) if _POINTER.search(k.lower())}


def change_values(
    arguments: Any, changes: Sequence[Change], today: str = "", owners: Iterable[str] = ()
) -> list[tuple[str, Any, bool]]:
    """(name, value, chosen by the agent) for every value that can name the change (see the
    module docstring); `today` is the call's date (ISO) and `owners` the person's own ids
    (`owner_ids`), which name nothing unless they are the key of a row the call changed."""
    keys: set[str] = set()
    rows: list[tuple[str, Any, bool]] = []
    for change in changes:
        if change.op == "fault":
            continue
        for _, key in _pairs(change.key, "id"):
            keys.add(str(key))
            rows.append(("id", key, False))
        before, after = change.before or {}, change.after or {}
        for column in {**before, **after}:
            if _BOOKKEEPING.search(column) or _PERSON.search(column):
                continue
            if change.op != "update":
                rows += [(k, v, False) for k, v in _pairs((after or before).get(column), column)]
            elif before.get(column) != after.get(column):
                rows += [(k, v, False) for side in (before, after) for k, v in _pairs(side.get(column), column)]
            else:
                rows += [(k, v, False) for k, v in _pairs(after.get(column), column) if _has_digit(v) or _proper(v)]
    others = set(owners) - keys
    if today:  # the rows' bookkeeping of the call's own day (an issue date) names nothing
        rows = [(k, v, c) for k, v, c in rows if not str(v).startswith(today)]
    sent = [(k, v, True) for k, v in _pairs(arguments)]
    return [(k, v, c) for k, v, c in sent + rows if str(v) not in others]


def _proper(value: Any) -> bool:
    """A proper name of the row (a payee's "David Rivera", a product's "Harbor Coffee Maker"): a
    text of two or more capitalised words, which names the record it belongs to."""
    words = str(value).split() if isinstance(value, str) else []
    return 1 < len(words) <= 6 and all(
        w[:1].isupper() and w[1:2].islower() for w in words
    )  # "Heather" alone: a first name


class _Change:
    """The change, read once: its typed values (as the answer grader reads them) and its texts."""

    def __init__(self, arguments: Any, changes: Sequence[Change], today: str, owners: Iterable[str]) -> None:
        self.year = int(today[:4]) if today[:4].isdigit() else None  # a date said without its year is this year's
        self.typed: set[tuple[str, Any]] = set()
        self.texts: set[str] = set()  # texts with a digit, or chosen by the agent, in `canonical_places` form
        self.proper: set[str] = set()  # a record's proper names, as written ("Harbor Coffee Maker")
        self.phones: set[str] = set()  # digits of phone-like values
        for name, value, chosen in change_values(arguments, changes, today, owners):
            self._add(name.lower(), value, chosen)

    def _add(self, name: str, value: Any, chosen: bool) -> None:
        if isinstance(value, int | float):
            if abs(value) > 1e15 or not math.isfinite(value):  # a huge int is compared, never made a float
                return
            number = round(float(value), 2)
            self.typed.add(("number", number))
            if number and (_MONEY.search(name) or not number.is_integer()):  # "$0" names nothing
                self.typed.add(("money", number))
                if isinstance(value, int) and (name.endswith("cents") or abs(value) >= _SMALL):
                    self.typed.add(("money", round(value / 100, 2)))  # cents, said in dollars
            return
        text = canonical(str(value)).strip()
        plain = _plain(text)
        if _PHONE.match(text) and sum(c.isdigit() for c in text) >= 7:
            self.phones.add(_digits(text))
        if len(text) <= PARSED_VALUE_LIMIT:
            for m in parse(text).mentions:
                if m.kind == "money" and not (_MONEY.search(name) or m.value != int(m.value)):  # type: ignore[call-overload]
                    continue
                if m.kind != "name":
                    self.typed.add((m.kind, _key(m.kind, m.value)))
        if len(plain) >= 3 and any(c.isdigit() for c in plain):
            self.texts.add(canonical_places(text))
        elif chosen:  # a reason, a new address or email; not a single word ("economy", a first name)
            if len(plain) >= 4 and (" " in plain or "@" in plain or "." in plain):
                self.texts.add(canonical_places(text))
        elif (len(plain) >= 3 and text[:1].isupper()) or (text.isupper() and place_code(text)):
            self.proper.add(text)  # as written: "Red", "Visa", "Ally Bank", a state's code "ID"

    def drop(self, other: _Change) -> None:
        """Forget the values `other` has too: they do not tell this change apart from it."""
        self.typed -= other.typed
        self.texts -= other.texts
        self.proper -= other.proper
        self.phones -= other.phones

    def named_by(self, request: Parsed) -> bool:
        """Whether `request` states one of the change's values."""
        text = request.text
        for m in request.mentions:
            if m.kind == "name":
                continue
            if m.kind == "date" and m.value[0] is None:  # type: ignore[index]  # "May 28": this year's
                dates = [v for k, v in self.typed if k == "date" and v[1:] == m.value[1:]]  # type: ignore[index]
                if any(self.year is None or v[0] == self.year for v in dates):
                    return True
                continue
            if m.kind == "number" and float(m.value).is_integer() and abs(float(m.value)) < _SMALL:  # type: ignore[arg-type]
                continue
            if m.kind == "number":
                value = _key("number", m.value)
                if ("number", value) in self.typed or ("money", value) in self.typed:
                    return True
                continue
            if (m.kind, _key(m.kind, m.value)) in self.typed:
                return True
        plain = canonical_places(text)  # `Apt. 990` and `#990`, `Idaho` and `ID`, `Street` and `St`
        for t in self.texts:
            if re.search(r"(?<![a-z0-9])" + r"\s+".join(map(re.escape, t.split())) + r"(?![a-z0-9])", plain):
                return True
        if any(re.search(rf"\b{re.escape(name)}\b", text) for name in self.proper):  # as written: not "right"
            return True
        codes = {place_code(name) for name in self.proper} - {None}
        if codes and any(_place_named(m, request, codes) for m in request.mentions if m.kind == "name"):
            return True  # a place by its other name or code: `Idaho` and `ID`, `Texas` and `TX`
        return any(_digits(run) in self.phones for run in _DIGIT_RUN.findall(text))

    @property
    def empty(self) -> bool:
        return not (self.typed or self.texts or self.proper or self.phones)


def _place_named(mention: Any, request: Parsed, codes: set[str | None]) -> bool:
    """A name of the request that is one of the places: written out (`Idaho`), or as a code in
    capitals (`ID`, as an address writes it; not `id`)."""
    written = request.text[mention.start : mention.end]
    if len(written) <= 3 and not written.isupper():
        return False
    return place_code(written) in codes


def _key(kind: str, value: Any) -> Any:
    if kind in ("number", "money", "percent"):
        return round(float(value), 2)
    if kind == "id":
        return str(value).lower().lstrip("#")
    return value


def names_the_change(
    request: str,
    arguments: Any,
    changes: Sequence[Change],
    seen: Any = None,
    today: str = "",
    owners: Iterable[str] = (),
    apart_from: Sequence[tuple[Any, Sequence[Change]]] = (),
) -> bool | None:
    """Whether `request` (the agent's words asking for the go-ahead) names the change a call made
    with `arguments` (as the agent sent them), whose change-log entries are `changes`; `seen` is
    what the episode's calls sent and returned, `today` the call's date (ISO), `owners` the
    person's own ids (`owner_ids`). None when the change has nothing to name. `apart_from` are
    other changes (arguments, change-log entries) the same request asked for: a value they share
    does not name this one, so one request that names one of several like writes (two orders
    cancelled for one reason) covers only the one it named."""
    change = _Change(arguments, changes, today, owners)
    if change.empty:
        return None
    for other_arguments, other_changes in apart_from:
        change.drop(_Change(other_arguments, other_changes, today, owners))
    if change.empty:  # the same change twice: no request tells them apart
        return False
    if len(request) > REQUEST_LIMIT or _PYTHON_DICT.search(request):
        return False
    parsed = parse(request)
    if parsed.json_pairs:
        return False
    said = set(_TOKEN.findall(_plain(request)))
    if len(said) > STUFFED:  # only then can it be stuffed: read what the episode showed
        known = _plain(json.dumps([arguments, [list(c) for c in changes], seen], default=str))
        if len(said - set(_TOKEN.findall(known))) > STUFFED:
            return False
    return change.named_by(parsed)


__all__ = ["PARSED_VALUE_LIMIT", "REQUEST_LIMIT", "STUFFED", "change_values", "names_the_change", "owner_ids"]
