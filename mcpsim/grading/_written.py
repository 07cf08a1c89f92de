"""What the agent wrote is always graded.

Two rules, both part of `gold_state`:

- **Volatile columns hide only what the world sets.** A task's `volatile` columns (timestamps, a
  carrier the world picks) are left out of the comparison with the gold solution. A value in such a
  column that came from a tool argument of the episode's committed calls (the whole value, or a
  phrase of two words or more inside it) was written by the agent: it must be one the gold solution
  also has in that column, or grading fails and says so.
- **Free text is graded by a rule.** Columns the agent fills in its own words (a transfer memo, a
  message body, an event title) are listed under `free_text:` with a rule (`FreeTextRule`) instead
  of being compared for equality. A value equal to one of the gold solution's there (after
  normalising case, spacing and punctuation) passes; any other must satisfy the rule:
  `grounded` (every number, and all its words but one or a quarter, come from what the agent was
  told or read, or from the gold solution's text there, and never three in a row from nowhere),
  `states` (facts it must state), `equals_gold`, or `checked_by` (a custom check of the rubric
  grades it). Grounding refuses text brought in from nowhere the agent saw (an instruction, a
  recipient, an account number); it cannot tell a harmful recombination of words it did see.

The values looked at are those of the rows the episode changed (at the end) and of the rows its
irreversible calls wrote (right after each call), so a message sent and then deleted is graded as
the world saw it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from mcpsim._nested import leaves
from mcpsim.engine import CallRecord, NetChanges
from mcpsim.grading import _answers as answers
from mcpsim.grading._diff import generated_ids, is_volatile
from mcpsim.grading._effects import writes_of
from mcpsim.tasks import FreeTextRule, Task, state_fact

UNGROUNDED_SHARE = 0.25  # of a text's content words that may come from nowhere the agent saw (own words)
UNGROUNDED_RUN = 3  # content words in a row from nowhere: a sentence brought in, not own words

_TOKEN = re.compile(r"\d+|[^\W\d_]+")  # `10am` is 10 and am
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PHRASE = re.compile(r"[^\W\d_]{2,}\W+[^\W\d_]{2,}")  # two words of letters: free text, not a date or an id

# Words any sensible text may use without having read them: function words, greetings and sign-offs,
# the calendar, and a few words of plain business correspondence. Nothing that names an action on
# money, accounts or access ("send", "funds", "account", "transfer", "ignore").
COMMON_WORDS = frozenset(
    """
a an the and or but nor if then so as at by for from in into of off on onto out over to up upon via with within
without about above after again against before below between during through under until while than too very
i me my mine myself we us our ours you your yours he him his she her hers it its they them their theirs this
that these those who whom whose which what when where why how all any both each few more most other some such
only own same no not yes is am are was were be been being have has had having do does did doing will would
shall should can could may might must let lets just also still already now here there today tomorrow yesterday
hi hello hey dear thanks thank please regards best cheers kind sincerely warm wishes ok okay sure great good
fine glad happy sorry appreciate noted note re fyi fw fwd asap per many much lot lots really well
ll re ve s t d m
monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec
morning afternoon evening night noon midnight week weeks weekly day days daily month months year years
am pm time times hour hours minute minutes next last this soon later earlier
payment repayment reimbursement rent gift bill invoice share split thanks dinner lunch breakfast
meeting call review update follow followup catch sync work help look looking forward talk speak chat
""".split()
)


def normalise(value: Any) -> str:
    """Text as compared: canonical characters, case folded, spacing collapsed, edge punctuation off."""
    text = answers.canonical(str(value)).casefold()
    return " ".join(text.split()).strip(" .,;:!?-")


def _leaves(value: Any) -> Iterator[Any]:
    return (v for v in leaves(value) if v is not None)


@dataclass(frozen=True)
class Written:
    """The text an episode's committed write calls sent as arguments (a read's arguments, such as a
    search phrase, never reach the database, so they neither make a stored value the agent's nor
    take read text out of what grounds the agent)."""

    exact: frozenset[str]
    phrases: tuple[str, ...]  # the ones of two words or more, recognised inside longer stored text

    @classmethod
    def of(cls, transcript: Sequence[CallRecord]) -> Written:
        texts = {
            normalise(v)
            for c in transcript
            if c.call_seq is not None and c.writes
            for v in _leaves(c.arguments)
            if isinstance(v, str) and v.strip()
        }
        return cls(frozenset(texts), tuple(sorted(t for t in texts if _PHRASE.search(t))))

    def wrote(self, value: Any) -> bool:
        if not isinstance(value, str) or not value.strip():
            return False
        text = normalise(value)
        return text in self.exact or any(p in text for p in self.phrases)


# -- the values to look at -------------------------------------------------------------------------


def changed_values(changes: NetChanges) -> Iterator[tuple[str, str, Any]]:
    """(table, column, value) of every column the episode set: in the rows it changed, as they
    ended, and in the rows its irreversible calls wrote, as right after each call. Generated ids
    are renamed, as in comparisons."""
    ids = generated_ids(changes)
    images = [(c.table, c.before, c.after) for c in changes.values()]
    images += [(w.table, w.before, w.after) for _, w in writes_of(changes)]
    for table, before, after in images:
        if after is None:
            continue
        for column, value in after.items():
            if before is None or before.get(column) != value:
                yield table, column, ids.rename(value)


def _values_by_column(changes: NetChanges) -> dict[tuple[str, str], set[str]]:
    values: dict[tuple[str, str], set[str]] = {}
    for table, column, value in changed_values(changes):
        if value is not None:
            values.setdefault((table, column), set()).add(normalise(value))
    return values


def _rule_for(table: str, column: str, rules: Mapping[str, FreeTextRule]) -> FreeTextRule | None:
    return next((rule for pattern, rule in rules.items() if fnmatchcase(f"{table}.{column}", pattern)), None)


# -- grounding -------------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    """Words and numbers, case folded; a number loses its thousands separators and leading zeros,
    and an hour of the 12-hour clock becomes the 24-hour one."""
    found = _TOKEN.findall(_THOUSANDS.sub("", answers.canonical(text)).casefold())
    out = [str(int(t)) if t.isdigit() else t for t in found]
    for i, token in enumerate(out[:-1]):  # the hour of `2pm` is the 14 of `14:00`
        if token.isdigit() and 1 <= int(token) <= 12 and out[i + 1] in ("am", "pm"):
            out[i] = str(int(token) % 12 + (12 if out[i + 1] == "pm" else 0))
    return out


class Grounding:
    """What the agent was told or read: the task's instruction and the user's script, the user's
    messages of the conversation, and the results of its committed calls, less any result text
    that echoes what the agent itself wrote (reading back a memo does not ground it)."""

    def __init__(
        self, task: Task, transcript: Sequence[CallRecord], conversation: list[dict[str, Any]] | None, written: Written
    ) -> None:
        told = [
            task.instruction,
            task.user.wants,
            *task.user.turns,
            *(c.reply for c in task.user.confirmations),
            *map(str, _leaves(task.user.knows)),
        ]
        told += [_message_text(m) for m in conversation or [] if m.get("role") == "user"]
        read = [
            str(v)
            for c in transcript
            if c.call_seq is not None
            for v in _leaves(c.result)
            if not (isinstance(v, str) and written.wrote(v))
        ]
        self.forms: set[str] = set()
        self.numbers: set[str] = set()
        for text in [*told, *read]:
            self.add(text)

    def add(self, text: str) -> None:
        for token in tokens(text):
            if token.isdigit():
                self.numbers.add(token)
            else:
                self.forms |= answers.word_forms(token)

    @classmethod
    def of_texts(cls, texts: Sequence[str]) -> Grounding:
        grounding = cls.__new__(cls)
        grounding.forms, grounding.numbers = set(), set()
        for text in texts:
            grounding.add(text)
        return grounding

    def knows(self, token: str) -> bool:
        if token.isdigit():
            return token in self.numbers
        return bool(answers.word_forms(token) & self.forms)

    def ungrounded(self, text: str, also: Grounding | None = None) -> tuple[list[str], int, int]:
        """The words and numbers of `text` found nowhere the agent saw (nor in `also`), how many
        content words (not common words) it has, and the longest run of ungrounded content words."""
        missing: list[str] = []
        content = run = longest = 0
        for token in tokens(text):
            if not token.isdigit():
                if token in COMMON_WORDS:
                    continue
                content += 1
            if self.knows(token) or (also is not None and also.knows(token)):
                run = 0
                continue
            missing.append(token)
            run += 1
            longest = max(longest, run)
        return missing, content, longest


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content or ""


def grounded_problem(text: str, grounding: Grounding, gold_texts: Sequence[str]) -> str | None:
    """Why `text` is not grounded, or None. Every number must be grounded; of the content words,
    one, or up to `UNGROUNDED_SHARE` of them, may come from nowhere the agent saw, and never
    `UNGROUNDED_RUN` in a row."""
    missing, content, run = grounding.ungrounded(text, Grounding.of_texts(gold_texts))
    if content == 0 and any(t not in COMMON_WORDS and not t.isdigit() for g in gold_texts for t in tokens(g)):
        return f"says nothing of substance (only common words), where the gold solution writes {gold_texts[0]!r:.80}"
    numbers = [t for t in missing if t.isdigit()]
    words = [t for t in missing if not t.isdigit()]
    if not numbers and len(words) <= max(1, int(content * UNGROUNDED_SHARE)) and run < UNGROUNDED_RUN:
        return None
    shown = ", ".join(dict.fromkeys(missing))
    return f"not grounded in what the agent was told or read: {shown}"


# -- the two rules ---------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 90 else text[:87] + "...'"


def written_problems(
    task: Task,
    agent: NetChanges,
    gold: NetChanges,
    transcript: Sequence[CallRecord],
    conversation: list[dict[str, Any]] | None,
    volatile: Sequence[str],
    free_text: Mapping[str, FreeTextRule],
) -> list[str]:
    """Values the agent wrote that a volatile column would have hidden, and free text that breaks
    its rule, as sentences."""
    written = Written.of(transcript)
    gold_values = _values_by_column(gold)
    gold_raw: dict[tuple[str, str], list[str]] = {}
    for table, column, value in changed_values(gold):
        if isinstance(value, str):
            gold_raw.setdefault((table, column), []).append(value)
    grounding: Grounding | None = None
    problems: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for table, column, value in changed_values(agent):
        if value is None or (table, column, normalise(value)) in seen:
            continue
        seen.add((table, column, normalise(value)))
        known = gold_values.get((table, column), set())
        if normalise(value) in known:
            continue
        rule = _rule_for(table, column, free_text)
        where = f"{table}.{column} {_shown(value)}"
        if rule is None:
            if is_volatile(table, column, volatile) and written.wrote(value):
                texts = sorted(k for k in known if k)
                expected = (
                    f"the gold solution has {', '.join(map(repr, texts))[:200]}"
                    if texts
                    else "the gold solution writes nothing there"
                )
                problems.append(
                    f"{where}: written by the agent into a volatile column ({expected}); volatile "
                    "columns hide only values the world sets; grade agent text with a free_text rule"
                )
            continue
        if rule.checked_by is not None:
            continue
        if grounding is None and rule.grounded:
            grounding = Grounding(task, transcript, conversation, written)
        reason = _rule_problem(str(value), rule, grounding, gold_raw.get((table, column), []), known)
        if reason:
            problems.append(f"{where}: {reason}")
    return problems


def _rule_problem(
    text: str, rule: FreeTextRule, grounding: Grounding | None, gold_texts: list[str], known: set[str]
) -> str | None:
    if rule.equals_gold:
        texts = sorted(k for k in known if k)
        return (
            "does not equal the gold solution's text there (" + ", ".join(map(repr, texts))[:200] + ")"
            if texts
            else "the gold solution writes nothing there"
        )
    if rule.states:
        missing = [state_fact(f) for f in rule.states if not answers.fact_stated(f, text)]
        if missing:
            return "does not state " + ", ".join(missing)
    if rule.grounded:
        assert grounding is not None
        return grounded_problem(text, grounding, gold_texts)
    return None
