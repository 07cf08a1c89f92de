"""Places and addresses as people write them, read to one form: US states by name or code (the
`us` package: `Texas` and `TX`), countries by name, common name or code (`pycountry`: `Germany`,
`DE`, `DEU`; `United States`, `USA`, `U.S.`), and the street and unit words of an address in their
USPS abbreviations (`Street` and `St`, `Avenue` and `Ave`; `Apartment 4`, `Apt. 4`, `Unit 4`,
`Suite 4` and `#4` are all the unit `4`).

`place_code` reads a name as a place (`tx`, `us`), `canonical_places` rewrites a text's words so
that two ways of writing one address read alike, and `ABBREVIATIONS` gives the word forms the
phrase matcher accepts (`_phrases.word_forms`). The tables are built on first use.
"""

from __future__ import annotations

import re
from functools import cache

# USPS street suffixes (Publication 28, the common ones) and directionals, by every spelling.
_STREET = {
    "st": ("street", "str"),
    "ave": ("avenue", "av", "aven"),
    "rd": ("road",),
    "blvd": ("boulevard", "boul"),
    "dr": ("drive", "drv"),
    "ln": ("lane",),
    "ct": ("court",),
    "pl": ("place",),
    "ter": ("terrace",),
    "cir": ("circle",),
    "pkwy": ("parkway", "pky"),
    "hwy": ("highway",),
    "sq": ("square",),
    "trl": ("trail",),
    "cor": ("corner",),
    "xing": ("crossing",),
    "hts": ("heights",),
    "mnr": ("manor",),
    "vw": ("view",),
    "pt": ("point",),
    "crk": ("creek",),
    "cv": ("cove",),
    "ctr": ("center", "centre"),
    "mt": ("mount",),
    "n": ("north",),
    "s": ("south",),
    "e": ("east",),
    "w": ("west",),
    "ne": ("northeast",),
    "nw": ("northwest",),
    "se": ("southeast",),
    "sw": ("southwest",),
}
ABBREVIATIONS = {long: short for short, longs in _STREET.items() for long in longs}
# Unit designators: before a number they name nothing but the unit (`Apt. 990`, `#990`).
UNIT_WORDS = frozenset({"apt", "apartment", "unit", "suite", "ste", "#", "no", "rm", "room", "fl", "floor"})
_WORD = re.compile(r"[a-z0-9#]+(?:['.][a-z0-9]+)*", re.IGNORECASE)


@cache
def _places() -> dict[str, str]:
    """Every name and code of a US state or a country, casefolded, to its code. `us` and
    `pycountry` are imported here, on first use, as `inflect` is (`_phrases`): together they cost
    about 0.1 s, which a served episode that never reads an address should not pay at start-up."""
    import pycountry
    import us

    found: dict[str, str] = {}  # US states first: an address's `Georgia` is GA, not the country
    for state in us.states.STATES_AND_TERRITORIES:
        code = state.abbr.casefold()
        found[state.name.casefold()] = found[code] = code
    found["washington dc"] = found["district of columbia"] = "dc"
    for country in pycountry.countries:
        code = country.alpha_2.casefold()
        for attr in ("name", "official_name", "common_name", "alpha_3"):
            name = getattr(country, attr, None)
            if name:
                found.setdefault(name.casefold(), code)
        found.setdefault(code, code)
    for name, code in {
        "usa": "us",
        "u.s": "us",
        "u.s.a": "us",
        "united states of america": "us",
        "america": "us",
        "uk": "gb",
        "u.k": "gb",
        "great britain": "gb",
        "britain": "gb",
        "england": "gb",
        "russia": "ru",
        "south korea": "kr",
    }.items():
        found.setdefault(name, code)
    return found


@cache
def _longest() -> int:
    return max(len(name.split()) for name in _places())


def place_code(name: str) -> str | None:
    """`Texas` -> `tx`, `TX` -> `tx`, `United Kingdom` -> `gb`, `USA` -> `us`; None if no place."""
    return _places().get(" ".join(name.casefold().split()))


def canonical_places(text: str) -> str:
    """The text's words, casefolded, with state and country names as their codes, street words
    as their abbreviations and unit words before a number dropped (`895 Bauer Corner, Apartment
    990, Boise, Idaho` -> `895 bauer cor 990 boise id`). Only words are kept."""
    words = [w.rstrip(".") for w in _WORD.findall(text.casefold().replace("#", " # "))]
    places = _places()
    out: list[str] = []
    i = 0
    while i < len(words):
        for n in range(min(_longest(), len(words) - i), 1, -1):  # several words: `new york`, `united states`
            code = places.get(" ".join(words[i : i + n]))
            if code is not None:
                out.append(code)
                i += n
                break
        else:
            word = words[i]
            following = words[i + 1] if i + 1 < len(words) else ""
            if word in UNIT_WORDS and any(c.isdigit() for c in following):
                i += 1
                continue
            out.append(ABBREVIATIONS.get(word, places.get(word, word) if len(word) > 3 else word))
            i += 1
    return " ".join(out)


__all__ = ["ABBREVIATIONS", "UNIT_WORDS", "canonical_places", "place_code"]
