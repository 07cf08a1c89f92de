"""Canonical text (accents dropped, quotes and dashes made ASCII) and the words it is read in."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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
WORD = re.compile(r"\w+(?:(?:'|(?<=\d)[.:](?=\d))\w+)*")
JOINERS = frozenset(" \t\r\n-_#")  # what may stand between two words of one phrase (`order #W1`)
LOOKBACK_GAP = frozenset(" \t\r\n-_'\"$#*`")  # what negation may look back across (not , ; . ( :)


@dataclass(frozen=True, slots=True)
class Word:
    start: int
    end: int
    text: str  # casefolded
