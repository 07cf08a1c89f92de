"""Words in their inflections, and phrases found word by word in a parsed text.

`inflect` gives singular and plural nouns with their irregular forms (`children`, `statuses`, and
`news` or `business` left alone), which suffix rules get wrong; verb forms are regular suffixes plus
a short table.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from mcpsim.grading._answers._names import NOT_NAMES, unpossessed
from mcpsim.grading._answers._parsed import FUNCTION_WORDS, Parsed
from mcpsim.grading._answers._text import JOINERS, WORD, canonical
from mcpsim.tasks import canonical_places, place_code


@lru_cache(maxsize=1)
def inflection_engine() -> Any:
    """inflect's engine, loaded on first use (`grading.grader` loads it when imported), without
    typeguard's import-time instrumentation (`mcpsim._inflect`): a served episode (whose world
    imports its custom checks) should not pay for it at start-up."""
    from mcpsim._inflect import inflect

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
    `refund`, `shipped` -> `ship`, `charges` -> `charge`, `paid` -> `pay`), and the short form of a
    street or unit word or a state or country (`street` -> `st`, `texas` -> `tx`). Two words are
    the same word in another form when their forms meet."""
    forms = {word, _IRREGULAR.get(word, word), unpossessed(word)}
    short = canonical_places(word)
    if short != word:  # `Street` and `St`
        forms.add(short)
    if canonical_places(f"{word} 1") == "1":  # a unit word before its number: `Apartment` and `Apt`
        forms.add("apt")
    if len(word) > 3 and word.isalpha():
        code = place_code(word)  # `Texas` and `TX`, `Germany` and `DE`
        if code:
            forms.add(code)
    if len(word) < 4 or not word.isalpha() or word in NOT_NAMES or word in FUNCTION_WORDS:
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


def phrase_words(phrase: str) -> tuple[str, ...]:
    return tuple(m.group().casefold() for m in WORD.finditer(canonical(phrase).replace("_", " ")))


def find_words(parsed: Parsed, phrase: tuple[str, ...], inflected: bool) -> Iterator[tuple[int, int]]:
    """Spans where the phrase's words stand in a row (only spaces, hyphens or underscores between)."""
    words, n = parsed.words, len(phrase)
    for i in range(len(words) - n + 1):
        ok = True
        for j, want in enumerate(phrase):
            word = words[i + j]
            same = (
                word.text == want
                or unpossessed(word.text) == want
                or (inflected and not word_forms(word.text).isdisjoint(word_forms(want)))
            )
            if not same or (j and not set(parsed.text[words[i + j - 1].end : word.start]) <= JOINERS):
                ok = False
                break
        if ok:
            yield words[i].start, words[i + n - 1].end
