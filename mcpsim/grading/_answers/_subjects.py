"""The subject of a value: the words its clause binds it to ("the refund is $39.98", "Refund:
$39.98", "the $39.98 refund", "$74.83 is pending", "14:30 for Ravi", "9:10 AM ET").

A subject is read from two windows around the value, each ending at a clause boundary
(punctuation but a label's colon just before the value, a word such as `and`, `but`, `which`,
another value of the same kind) and holding at most WINDOW content words: the words before the
value in its clause, and the words after it. A coordinated value shares its neighbour's words
(`the $49.99 and $72.99 refunds`: both `refund`), and a value whose windows name nothing reads
across the commas before it (`the refund amount, $39.98`; `your other order, #W1, came to $12`);
a short label before a colon or a table's bar is its own (`Refund: $40`, `| Refund | $40 |`).
Content words are what is left once function words, pronouns, the words of reporting (`told`,
`said`, `the agent`), of hedging and negation, and words that name no subject (`amount`, `full`,
`today`, `comes`) are dropped; a few words that name one subject in several ways share a role
(`departs`, `departure`, `leaves`; `refund`, `refunded`, `back`, `get`; `now`, `currently`; `each`,
`per`). A value with no word around it at all (`It's $45.`) is an ellipsis (`Subject.bare`), which
`_claims` reads as the value before it. Ids and dates in a window are marks:
two values marked by different ids (`order #W1`, `order #W2`) or dates are about different
records.

Nothing here knows a fact: `_claims` gives each mention its subject, and the judging compares
subjects (`same_subject`, `words_within`, `marked_apart`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcpsim.grading._answers._parsed import CLAUSE_OPENERS, FUNCTION_WORDS, Mention, Parsed
from mcpsim.grading._answers._phrases import word_forms

WINDOW = 4  # content words each side: a clause's subject is a few words, not the whole sentence
_BOUNDARY = frozenset(".;!?,()[]{}:\n|")
_LABELS = (frozenset(":"), frozenset("|"))  # `Refund: $40`, a table's `| Refund | $40 |`
# the clause openers but `as`, with the words that join alternatives, comparisons and sums
_OPENERS = (CLAUSE_OPENERS - {"as"}) | {"or", "nor", "than", "whereby", "plus", "minus", "less", "equals"}
# Words that name no subject but show there is one (`the amount is $59` is no ellipsis).
_GENERIC = frozenset(
    {
        "amount",
        "amounts",
        "figure",
        "value",
        "number",
        "sum",
        "full",
        "whole",
        "entire",
        "actual",
        "time",
        "one",
        "money",
    }
)
_PRONOUNS = (
    "i me we us you he him she it they them what which there here some all both one ones yours mine ours "
    "i'm i've i'll i'd you'll you're you've you'd it's that's there's we've we'll we're they're"
)
_FRAME = (  # reporting and courtesy: the frame of a statement, not its subject
    "agent customer user told tell tells said say says stated states gave give gives listed named explained "
    "mentioned confirmed reported replied answered let know like want need please thanks thank hi hello dear "
    "sorry unfortunately afraid happy glad help see note found check checked"
)
_HOW = (  # hedges, negations and corrections: how a value is said, not what about
    "maybe perhaps possibly possible probably presumably likely plausible might think believe guess suppose sure "
    "certain unsure either again not no never instead rather mean meant actually correction corrected updated "
    "revised amended unconfirmed tentative tentatively thereabouts unless oops wrong incorrect right correct "
    "mistake hard exactly"
)
_PLAIN = (  # times, particles and interjections
    "today tomorrow yesterday then also so well just up out with from into onto as within over under around "
    "than hmm um uh oh ok okay yes yeah hey honestly frankly basically really anyway overall personally"
)
# Generic verbs name no subject but are no ellipsis either: `gets in at 9:10` has its own verb.
_VERBS = frozenset(
    "go goes going went come comes came coming make makes made end ends ended ending turn turns turned wind winds "
    "become becomes became appear appears appeared seem seems seemed stay stays stayed look looks looked".split()
)
_STOP = FUNCTION_WORDS | _GENERIC | _VERBS | frozenset(" ".join((_PRONOUNS, _FRAME, _HOW, _PLAIN)).split())
# Words that name one subject in several ways. Kept small and literal: a role joins only words
# that a reply uses interchangeably for the same value.
_ROLE_WORDS = {
    "refund": (
        *("refund", "refunds", "refunded", "refunding", "reimburse", "reimbursed", "reimbursement", "back"),
        *("get", "gets", "got", "getting", "receive", "receives", "received", "receiving"),
    ),
    "depart": ("depart", "departs", "departed", "departing", "departure", "departures", "leave", "leaves", "leaving"),
    "arrive": ("arrive", "arrives", "arrived", "arriving", "arrival", "arrivals", "land", "lands", "landing"),
    "cost": ("cost", "costs", "costing", "price", "priced", "prices", "fare", "fares"),
    "pay": ("pay", "pays", "paid", "paying", "payment", "charge", "charged", "charges", "owe", "owes", "owed"),
    "balance": ("balance", "balances", "remain", "remains", "remaining", "left", "available"),
}
ROLES = {word: f"@{role}" for role, words in _ROLE_WORDS.items() for word in words}
ROLES.update({word: "@each" for word in ("each", "per", "apiece", "every")})  # a share: `$50 each`
# A value said as of another time is another subject: `was $500 and is now $450`.
ROLES.update({word: "@now" for word in ("now", "currently", "presently")})
ROLES.update({word: "@before" for word in ("originally", "previously", "initially", "formerly", "earlier", "old")})
ROLES.update({word: "@total" for word in ("total", "totals", "totalling", "totaling", "totaled", "totalled")})


@dataclass(frozen=True, slots=True)
class Subject:
    """What a value is said about: content words (each as the set of forms it may stand for,
    or its role) and marks (`id:w1`, `date:5-25`)."""

    words: tuple[frozenset[str], ...] = ()
    marks: frozenset[str] = frozenset()
    said: frozenset[str] = frozenset()  # every noun-like word of its windows, generic ones too

    @property
    def empty(self) -> bool:
        return not self.words and not self.marks

    @property
    def bare(self) -> bool:
        """Nothing around the value names anything (`It's $45.`, `$45.`, `Or $45?`): an ellipsis."""
        return self.empty and not self.said

    def shown(self) -> str:
        return " ".join(sorted(min(w, key=len) for w in self.words))


NO_SUBJECT = Subject()


def word_key(word: str) -> frozenset[str]:
    """A content word as what it may stand for: its role, or its inflected forms."""
    role = ROLES.get(word)
    return frozenset({role}) if role else word_forms(word)


def subject_of(words: Iterable[str], marks: Iterable[str] = (), said: Iterable[str] = ()) -> Subject:
    keys: list[frozenset[str]] = []
    for word in words:
        key = word_key(word)
        if not any(key & k for k in keys):
            keys.append(key)
    return Subject(tuple(keys), frozenset(marks), frozenset(said))


def is_content(word: str) -> bool:
    return word not in _STOP and not word.isdigit() and len(word) > 1 and not word.endswith("n't")


# -- comparing subjects -------------------------------------------------------------------------------


def _matches(key: frozenset[str], keys: Iterable[frozenset[str]]) -> bool:
    return any(key & k for k in keys)


def words_within(inner: Subject, outer: Iterable[frozenset[str]]) -> bool:
    """Every content word of `inner` is one of `outer` (by form or role)."""
    outer = tuple(outer)
    return all(_matches(w, outer) for w in inner.words)


def overlaps(a: Subject, words: Iterable[frozenset[str]]) -> bool:
    words = tuple(words)
    return any(_matches(w, words) for w in a.words)


def marked_apart(a: Subject, b: Subject) -> bool:
    """Whether marks of one kind tell the two apart (`order #W1` and `order #W2`)."""
    for kind in ("id:", "date:"):
        ma = {m for m in a.marks if m.startswith(kind)}
        mb = {m for m in b.marks if m.startswith(kind)}
        if ma and mb and ma.isdisjoint(mb):
            return True
    return False


def same_subject(a: Subject, b: Subject) -> bool:
    """The same words (by form or role) and marks that do not tell them apart: two values said
    of one thing. Two values with no subject at all are the same too (a bare list)."""
    if marked_apart(a, b):
        return False
    if any(m.startswith("id:") for m in a.marks) != any(m.startswith("id:") for m in b.marks):
        return False  # one names a record, the other does not: `#W1 came to $12` and `the amount is $40`
    return words_within(a, b.words) and words_within(b, a.words)


# -- reading a subject out of a parsed text ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    """A word of the text, or a run of words that mentions cover (one token for all of them)."""

    start: int
    end: int
    text: str  # the word, casefolded; "" for a mention
    mentions: tuple[Mention, ...] = ()


def tokens(parsed: Parsed) -> list[Token]:
    """The text's words in order, each run of words inside mentions made one token."""
    spans = sorted(parsed.mentions, key=lambda m: (m.start, -m.end))
    found: list[Token] = []
    k = 0
    for word in parsed.words:
        while k < len(spans) and spans[k].end <= word.start:
            k += 1
        covering = [m for m in spans[k : k + 8] if m.start <= word.start < m.end]
        if not covering:
            found.append(Token(word.start, word.end, word.text))
            continue
        last = found[-1] if found else None
        if last is not None and last.mentions and set(covering) & set(last.mentions):
            merged = tuple(dict.fromkeys([*last.mentions, *covering]))
            found[-1] = Token(last.start, max(last.end, word.end, *(m.end for m in covering)), "", merged)
        else:
            start = min(word.start, *(m.start for m in covering))
            found.append(Token(start, max(word.end, *(m.end for m in covering)), "", tuple(covering)))
    return found


@dataclass
class _Window:
    words: list[str]
    marks: set[str]
    said: list[str]

    def full(self) -> bool:
        return len(self.words) >= WINDOW


class SubjectReader:
    """Reads the subject of each mention of one parsed text (its tokens computed once)."""

    def __init__(self, parsed: Parsed) -> None:
        self.text = parsed.text
        self.tokens = tokens(parsed)
        self.index: dict[int, int] = {}  # id(mention) -> its token
        for i, token in enumerate(self.tokens):
            for mention in token.mentions:
                self.index.setdefault(id(mention), i)

    def token_of(self, mention: Mention) -> int:
        return self.index.get(id(mention), -1)

    def subject(self, mention: Mention) -> Subject:
        at = self.token_of(mention)
        if at < 0:
            return NO_SUBJECT
        window = _Window([], set(), [])
        self._before(at, mention.kind, window, commas=False)
        self._after(at, mention.kind, window)
        if not window.words and not window.marks:  # `the refund amount, $39.98`; `your order, #W1, came to $12`
            self._before(at, mention.kind, window, commas=True)
        return subject_of(window.words, window.marks, window.said)

    def next_word(self, mention: Mention) -> str | None:
        """The word right after the mention in its clause, if a plain word follows."""
        at = self.token_of(mention)
        if at < 0 or at + 1 >= len(self.tokens) or set(self._gap(at, at + 1)) & _BOUNDARY:
            return None
        return self.tokens[at + 1].text or None

    def words_before(self, mention: Mention, count: int) -> list[str]:
        """The plain words right before the mention in its clause (a label's colon passed)."""
        at = self.token_of(mention)
        found: list[str] = []
        i = at - 1
        while i >= 0 and len(found) < count:
            gap = set(self._gap(i, i + 1)) & _BOUNDARY
            if gap and not (i == at - 1 and gap in _LABELS):
                break
            token = self.tokens[i]
            names = [str(m.value) for m in token.mentions if m.kind == "name"]
            if token.mentions and not names:
                break
            found += [token.text] if token.text else reversed(" ".join(names).split())
            i -= 1
        return found

    def _gap(self, left: int, right: int) -> str:
        return self.text[self.tokens[left].end : self.tokens[right].start]

    def _take(self, token: Token, kind: str, window: _Window) -> bool:
        """Adds a token's words or marks; False when it ends the window (a value of `kind`)."""
        if not token.mentions:
            if token.text in _OPENERS:
                return False
            if is_content(token.text):
                window.words.append(token.text)
            if token.text in _GENERIC or token.text in _VERBS or is_content(token.text):
                window.said.append(token.text)
            return True
        if any(m.kind == kind for m in token.mentions):
            return False
        for m in token.mentions:
            mark = _mark(m)
            if mark:
                window.marks.add(mark)
            if m.kind == "name":
                window.words.extend(w for w in str(m.value).split() if is_content(w))
        return True

    def _before(self, at: int, kind: str, window: _Window, commas: bool) -> None:
        """Words and marks before token `at` in its clause: a label's colon just before it
        (`Refund: $40`) is passed, and with `commas` (when nothing else names a subject) the
        commas before any word is taken (`the refund amount, $39.98`; `your other order, #W1,
        came to $12`)."""
        i = at - 1
        while i >= 0 and not window.full():
            gap = set(self._gap(i, i + 1))
            if gap & _BOUNDARY:
                label = i == at - 1 and gap & _BOUNDARY in _LABELS
                apposition = commas and not window.words and gap & _BOUNDARY == {","}
                if not (label or apposition):
                    return
            if not self._take(self.tokens[i], kind, window):
                return
            i -= 1

    def _after(self, at: int, kind: str, window: _Window) -> None:
        """Words and marks after token `at`, to its clause's end; a coordinated value of the
        same kind (`$49.99 and $72.99 refunds`) is passed over."""
        i = at + 1
        taken = len(window.words)
        while i < len(self.tokens) and not window.full():
            if set(self._gap(i - 1, i)) & _BOUNDARY:
                return
            token = self.tokens[i]
            if len(window.words) == taken and token.text in ("and", "or") and self._kind_at(i + 1, kind):
                i += 2  # `$49.99 and $72.99 refunds`: the coordinated value shares the words after it
                continue
            if not self._take(token, kind, window):
                return
            i += 1

    def _kind_at(self, i: int, kind: str) -> bool:
        return i < len(self.tokens) and any(m.kind == kind for m in self.tokens[i].mentions)


def _mark(mention: Mention) -> str | None:
    if mention.kind == "id":
        return f"id:{mention.value}"
    if mention.kind == "date":
        return f"date:{mention.value[1]}-{mention.value[2]}"  # type: ignore[index]
    return None
