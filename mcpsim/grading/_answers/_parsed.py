"""An answer read once: its canonical text, its words and sentences, and its typed mentions (the
values of `_scanner` and the names of `_names`), each with its place in the text, its sentence and
whether a negation directly qualifies it (the look-back of rule 1 in `_judging`, over the word lists
below).
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache

from mcpsim.grading._answers._names import find_names
from mcpsim.grading._answers._scanner import Scanner
from mcpsim.grading._answers._text import JOINERS, LOOKBACK_GAP, WORD, Word, canonical

DateValue = tuple[int | None, int, int]  # a mentioned date: (year or None, month, day)
KINDS = ("money", "number", "date", "time", "duration", "percent", "id", "phone", "name")


@dataclass(frozen=True, slots=True)
class Mention:
    """A typed value stated in the text, at [start, end)."""

    kind: str
    value: Hashable
    start: int
    end: int
    negated: bool = False
    sentence: int = 0


_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)|\n+")
# A period after these ends no sentence (`Sept. 30`, `123 Main St. Apt. 4`, `Dr. Lee`).
_ABBREVIATION = re.compile(
    r"\b(?:mr|mrs|ms|dr|st|ave|apt|ste|no|nos|vs|etc|inc|ltd|co|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|"
    r"dec|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun|approx|incl|est|dept|blvd|rd|ln|hwy|u\.s|e\.g|i\.e)$",
    re.IGNORECASE,
)
_JSON_PAIR = re.compile(r"\"[\w .-]+\"\s*:\s*(?:\"|-?\d|true\b|false\b|null\b|\[|\{)")

# Negation (rule 1): the words that negate, the fillers a look-back passes over (function words
# and the nouns an id stands after), and the words that open a new clause.
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
        "ignore",  # `ignore the $40 I mentioned`
        "disregard",
    }
)
FUNCTION_WORDS = frozenset(
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
        "definitely",
        "certainly",
        "surely",
        "obviously",
        "clearly",
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
_FILLERS = FUNCTION_WORDS | _ID_NOUNS
CLAUSE_OPENERS = frozenset(  # a word that opens a new clause, and with it maybe a new subject
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
        passes over fillers, other values and `or` (`not $12 or $40` negates both), and stops at
        an action done to a pronoun (`could not do that for PR7454` says what failed for PR7454)."""
        index = bisect.bisect_right(self.word_ends, start) - 1
        position, later = start, ""
        for word in reversed(self.words[max(0, index - 9) : index + 1]):
            if not set(self.text[word.end : position]) <= LOOKBACK_GAP:
                return False
            if word.text in _NEGATIONS or word.text.endswith("n't"):
                return True
            if word.text in ("than", "to") and self._after_rather(word):  # `rather than $40`, `as opposed to`
                return True
            if word.text not in _FILLERS and not self.valued[word.start]:
                return False
            if word.text in ("do", "does", "did") and later in ("that", "this"):
                return False  # `could not do that for PR7454`: the action is negated, not what it was for
            position, later = word.start, word.text
        return False

    def _after_rather(self, word: Word) -> bool:
        before = self.text[max(0, word.start - 12) : word.start].casefold().split()
        return bool(before) and (before[-1] in ("rather", "other") or before[-2:] == ["as", "opposed"])

    def in_negated_clause(self, start: int) -> bool:
        """Whether a negation comes before `start` in its clause (clauses end at punctuation and
        at conjunctions such as `and`, `but`, `because`)."""
        index = bisect.bisect_right(self.word_ends, start) - 1
        position = start
        for word in reversed(self.words[: index + 1]):
            if not set(self.text[word.end : position]) <= LOOKBACK_GAP or word.text in CLAUSE_OPENERS:
                return False
            if word.text in _NEGATIONS or word.text.endswith("n't"):
                return True
            position = word.start
        return False

    def words_after(self, end: int, count: int) -> list[Word]:
        after = [w for w in self.words if w.start >= end][:count]
        kept, position = [], end
        for word in after:
            if not set(self.text[position : word.start]) <= JOINERS | {","}:
                break
            kept.append(word)
            position = word.end
        return kept


def parse(answer: str) -> Parsed:
    """The answer read once; short texts (answers, phrases) are cached, long ones (pasted tool
    results) are not, so the cache stays small."""
    return _parse_cached(answer) if len(answer) <= CACHED_LENGTH else _parse(answer)


CACHED_LENGTH = 4096


def _mid_sentence(text: str, end: re.Match[str]) -> bool:
    """A period after an abbreviation and before more of the sentence (`Sept. 30`) ends nothing."""
    if end.group() != ".":
        return False
    following = text[end.end() : end.end() + 3].lstrip()
    return bool(_ABBREVIATION.search(text, max(0, end.start() - 6), end.start())) and following[:1].isalnum()


def _parse(answer: str) -> Parsed:
    text = canonical(answer)
    words = tuple(Word(m.start(), m.end(), m.group().casefold()) for m in WORD.finditer(text.replace("_", " ")))
    starts = (0, *(m.end() for m in _SENTENCE_END.finditer(text) if not _mid_sentence(text, m)))
    scanner = Scanner(text)
    found = scanner.scan()
    found += [("name", value, start, end) for value, start, end in find_names(text, scanner.claimed)]
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
