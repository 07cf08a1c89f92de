"""Numbers in digits (`1,006`, `39.98`) and in words (`three`, `twenty-five`, `one hundred and
five`): the patterns that find them and the values they stand for.

Number words are a closed table of 28 words (zero to ninety, hundred, thousand), which is all
answers use and cannot misread ordinary words as numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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
SPELLED_NUMBER = rf"(?:{_NUMBER_WORD})(?:(?:[ -]|(?:(?<=hundred)|(?<=thousand))\s+and\s+)(?:{_NUMBER_WORD}))*"
DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
NUM = rf"(?:{DIGITS}|\b{SPELLED_NUMBER}\b)"
NUM_START = r"(?=[\dzotfsenh])"  # what a number starts with: a cheap first test


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


def word_numbers(text: str, start: int, end: int) -> Iterator[tuple[float, int, int]]:
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


def number_value(text: str) -> float | None:
    if text[0].isdigit():
        return float(text.replace(",", ""))
    value = _words_value(text)
    return None if value is None else float(value)
