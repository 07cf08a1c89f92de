"""The report check: every task's final message is graded against what the episode did, with no
hand-written fact. Derived for every task (hand-built and generated) from the transcript and the
change log, it fails a message that

- says nothing changed, or that the request failed, after a write took effect;
- claims an action no call took ("I've cancelled your order" after no cancel took effect: on a
  refusal task, the refused change; on a write task, another action than the one taken). A
  refund, a payment, a credit, a message or a delivery claimed after another change took effect
  is read as its consequence (`CONSEQUENCES`: a cancellation refunds), so only claimed after no
  change at all is it false;
- says an action was not done ("I couldn't cancel order #W1") when a call of that action took
  effect on that record (or, naming no record, when such a call took effect, none of that action
  failed and the message claims none done).

A claim is an action word (`mcpsim.tasks.action_mentions`) the message says the agent did: after
"I" or "we" ("I cancelled", "we've gone ahead and updated"), or with "now" or "successfully" ("is
now cancelled", "was successfully refunded"). A bare passive ("the refund has been issued") states
a record's history, which a lookup reports, so it claims nothing. The words of a tool's whole
name count as its actions here (`issue_partial_refund` refunds), so a report in any of them is
read as the action taken. Values and their subjects are the answer checks' business
(`_answers`); this check reads only what was done."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from mcpsim._nested import leaves
from mcpsim.engine import CallRecord, Episode
from mcpsim.grading._verdict import CheckResult
from mcpsim.tasks import action_mentions

REPORT_CHECK = "report"
REQUIREMENT = (
    "The final message does not contradict what the episode did: no failure claimed after a change took "
    "effect, no action claimed that no call took"
)
# Actions that follow from others (a cancellation refunds, a dispute credits, a booking pays): claimed
# after a change that took effect, they are its consequences; claimed after none, they are false.
CONSEQUENCES = frozenset({"refund", "pay", "send", "issue", "ship"})
WINDOW = 160  # characters read on either side of an action word (every pattern here reaches less)
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d)|\.(?=[a-z0-9]))+[.!?]*")
_ADVERB = r"(?:\s+(?:have|has|had|just|already|now|also|successfully|then|gone ahead and|went ahead and))*"
_AGENT = re.compile(rf"\b(?:i|we)(?:'ve|'d)?{_ADVERB}\s*$", re.IGNORECASE)
_NOW = re.compile(
    r"\b(?:(?:is|are|was|were|has been|have been)\s+(?:now|just|successfully)(?:\s+been)?|now|successfully)\s*$",
    re.IGNORECASE,
)
_AFTER_SUCCESS = re.compile(r"^\s+(?:\S+\s+){0,4}?successfully\b", re.IGNORECASE)
_UNABLE = re.compile(
    r"\b(?:(?:i|we)\s+(?:could not|couldn'?t|was unable to|were unable to|am unable to|wasn'?t able to|"
    r"was not able to|weren'?t able to|did not|didn'?t|have not|haven'?t|can ?not|can'?t|failed to)|"
    r"(?:has|have|was|were|is|are) not(?: yet)?(?: been)?|(?:has|have|was|were|is|are)n'?t(?: yet)?(?: been)?)"
    r"(?:\s+(?:yet|actually|be able to|go ahead and|get to|successfully))*\s*$",
    re.IGNORECASE,
)
_NOTHING_CHANGED = re.compile(
    r"\bnothing (?:was|has been|got|is|were) (?:changed|updated|done|modified|made)\b"
    r"|\bno changes? (?:was|were|have been|has been|had been) (?:made|applied|saved)\b"
    r"|\b(?:the|your|this|that|my) (?:request|change|update|operation|transaction|action|changes) "
    r"(?:has |have |was |were )?(?:failed|did ?n[o']t go through|"
    r"(?:was|were) not (?:applied|completed|processed|saved))\b"
    r"|\b(?:it|this|that) (?:has )?failed\b|\bdid ?n[o']t go through\b|\bunsuccessful\b"
    # the request itself not done, in any words: "I wasn't able to make the change", "we could not
    # complete your request" (an object of its own, "complete the refund", is the answer checks' business)
    r"|\b(?:i|we)\s+(?:could not|couldn'?t|was unable to|were unable to|am unable to|wasn'?t able to|was not able to|"
    r"weren'?t able to|failed to|did not|didn'?t|can ?not|can'?t)\s+(?:\w+\s+){0,2}?"
    r"(?:make|complete|process|apply|carry out|save|finish|submit|do|action|go through with)\s+"
    r"(?:(?:the|your|this|that|any) (?:change|changes|request|update|updates|operation|transaction|action)s?\b|"
    r"(?:it|that|this)\b(?!\s+\w))"
    # the records as they were: "your records are as they were", "your account remains unchanged"
    r"|(?<!rest of )(?<!remainder of )\b(?:your|the|my) (?:records?|details|information|data) "
    r"(?:is|are|was|were|remains?|remained|stays?|stayed|has been left|have been left|was left|were left)\s+"
    r"(?:still\s+|completely\s+|entirely\s+)?(?:unchanged|untouched|as (?:it|they) (?:was|were)|the same)\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"(?:ed|sent|paid|made|given|gave|set|froze|frozen|put|done|shared|opened|closed|added|moved|booked)$", re.I
)
_AND = re.compile(r"^(?:\s+\S+){0,8}?\s*,?\s+(?:and|then)(?:\s+(?:also|then))?\s*$")
_ID = re.compile(r"#?\b[a-z_-]*\d[\w-]*\b", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _ids(text: str) -> set[str]:
    return {m.group(0).lstrip("#").lower() for m in _ID.finditer(text) if len(m.group(0).lstrip("#")) >= 3}


def _walk(value: Any) -> Iterable[str]:
    """The values inside `value` as text, but for None."""
    return (str(v) for v in leaves(value) if v is not None)


def tool_words(tool: str) -> frozenset[str]:
    """Every action class a word of the tool's name names (`issue_partial_refund` → issue, refund)."""
    return frozenset().union(*(classes for _, _, classes in action_mentions(tool.replace("_", " "))))


class _Done:
    """What the episode did: per action class, the records its calls that took effect touched."""

    def __init__(self, episode: Episode, transcript: Sequence[CallRecord]) -> None:
        self.records: dict[str, set[str]] = {}
        self.failed: set[str] = set()  # classes of write calls that failed
        self.any = False  # a write took effect
        self.acted = False  # a write of a known action took effect (not bookkeeping such as `verify_identity`)
        for call in transcript:
            classes = tool_words(call.tool)
            if call.writes and not call.ok:  # refused, or an error the agent saw (a timeout that took effect)
                self.failed |= classes
            if call.call_seq is None:
                continue
            if not call.writes:
                continue
            changes = [c for c in episode.changes(call.call_seq) if c.op != "fault"]
            if not changes:
                continue
            self.any = True
            self.acted |= bool(classes)
            ids = {v.lstrip("#").lower() for v in _walk(call.arguments)}
            ids |= {str(k).lstrip("#").lower() for c in changes for k in _walk(c.key)}
            for name in classes or {"?"}:
                self.records.setdefault(name, set()).update(ids)

    @property
    def classes(self) -> set[str]:
        return set(self.records)


def _claims(sentence: str) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """The actions the sentence claims done and those it says were not done: per action word,
    the classes it can mean (a claim holds when any of them was done)."""
    done: list[frozenset[str]] = []
    undone: list[frozenset[str]] = []
    claimed_to = -1  # where the last claim's verb ended: "I've cancelled it and refunded you" claims both
    for start, word, classes in action_mentions(sentence):
        # each pattern reads a few words on either side: a bounded window keeps a long sentence linear
        before = sentence[max(0, start - WINDOW) : start]
        after = sentence[start + len(word) : start + len(word) + WINDOW]
        joined = (
            0 <= claimed_to and start - claimed_to <= WINDOW and _AND.search(sentence[claimed_to:start]) is not None
        )
        if _UNABLE.search(before):
            undone.append(classes)
        elif _PAST.search(word) and (
            joined or _AGENT.search(before) or _NOW.search(before) or _AFTER_SUCCESS.match(after)
        ):
            done.append(classes)
            claimed_to = start + len(word)
    return done, undone


def _contradiction(sentence: str, did: _Done, claimed_done: set[str]) -> str | None:
    done, undone = _claims(sentence)
    if did.acted and _NOTHING_CHANGED.search(sentence):
        return f"the report says the change failed or nothing changed ({sentence[:100]!r}), but a write took effect"
    for classes in done:
        if not classes & did.classes and (not did.acted or not classes <= CONSEQUENCES):
            what = "/".join(sorted(classes))
            return f"the report claims {what} ({sentence[:100]!r}), but no call that does it took effect"
    named = _ids(sentence)
    for classes in undone:
        for name in sorted(classes & did.classes):
            hit = named & did.records[name]
            if hit or (not named and not classes & claimed_done and not classes & did.failed):
                where = f" on {sorted(hit)[0]}" if hit else ""
                said = f"the report says {name} was not done ({sentence[:100]!r})"
                return f"{said}, but a call that does it took effect{where}"
    return None


def report_check(episode: Episode, transcript: Sequence[CallRecord], answer: str | None) -> CheckResult | None:
    """The derived report check of an episode (None without a final message: nothing is claimed)."""
    if not answer or not answer.strip():
        return None
    did = _Done(episode, transcript)
    sentences = _sentences(answer.replace("\u2019", "'"))
    claimed_done = {name for sentence in sentences for classes in _claims(sentence)[0] for name in classes}
    reason = None
    for sentence in sentences:
        reason = _contradiction(sentence, did, claimed_done)
        if reason:
            break
    return CheckResult(
        type=REPORT_CHECK,
        requirement=REQUIREMENT,
        weight=1.0,
        noop_passes=True,
        passed=reason is None,
        reason=reason or "the report does not contradict what the episode did",
    )


__all__ = ["CONSEQUENCES", "REPORT_CHECK", "report_check", "tool_words"]
