"""Confirmation turns: recognising an agent's request for the user's go-ahead, recognising the
user's agreement, and the scripted user's deterministic answer to such a request.

The policies of the retail, airline and bank worlds require an explicit "yes" before any change.
The scripted user says yes to a question about what it asked for, and no to one that mentions
something it did not ask for: an id, an amount of money or a name that appears nowhere in what
the task says the user wants (instruction, `user.wants`, `user.knows`, scripted turns, the gold
actions' arguments, a write's answer facts, the rubric's values) nor in what the agent read with the gold
solution's own calls (the user's order, as the agent looked it up). On a task that changes
something it also knows the amounts of its own records read with any other call (one naming an
identifier the task gives, answered without an error), except numbers the call itself carried,
and a rubric's whole numbers as cents. A task can script other answers (`user.confirmations`).

The user is no oracle for the answer: on a lookup (a task whose gold solution changes nothing)
it does not know the answer facts, which the agent must read (it recognises them only in what the
gold solution's own calls returned in the conversation); and it says no at most MAX_REFUSALS times
before it ends the conversation, so guess-and-check through confirmation requests is bounded.
`scripted_reply` is the whole rule, worked out from the conversation alone: the runner's
scripted user and the control plane's `POST /episodes/{id}/user` both call it.
"""

from __future__ import annotations

import fnmatch
import json
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcpsim.tasks._action_words import asks_another_action, named_actions, names_action, tool_actions
from mcpsim.tasks._asking import UNKNOWN_REPLY, detail_question, detail_reply, proposals, reveals
from mcpsim.tasks._places import canonical_places
from mcpsim.tasks._rubric import Confirmed
from mcpsim.tasks._task import Action, Say, Step, Task

CONFIRM_QUESTION = "Shall I go ahead? (yes/no)"  # how `confirmation_question` ends
YES_REPLY = "Yes, please go ahead."
NO_REPLY = "No, I did not ask for that."
# An agent that keeps asking for the go-ahead without acting gets no more yeses after this many.
MAX_CONFIRMATIONS_IN_A_ROW = 3
# After this many no's the user stops talking: confirmation requests are not a way to probe hidden values.
MAX_REFUSALS = 3

# A sentence asks for the go-ahead when it asks permission to act, or asks the user to confirm.
_PERMISSION = re.compile(
    r"\b(?:shall|should|may|can|could) i\b"
    r"|\b(?:do|would) you (?:like|want) me to\b|\bwant me to\b|\blike me to\b"
    r"|\bgo ahead\b|\bproceed\b"
    r"|\bconfirm\b|\bconfirmation\b"
    r"|\bis (?:that|this|everything|all (?:of )?that) (?:correct|right|ok(?:ay)?|fine)\b"
    r"|\byes\s*(?:/|or)\s*no\b",
    re.IGNORECASE,
)
# Without a question mark, only an explicit call for an answer counts ("please confirm").
_IMPERATIVE = re.compile(
    r"\b(?:please|kindly) (?:confirm|reply|respond|say|answer)\b|\breply (?:with )?\W?yes\b"
    r"|\blet me know if\b|\(yes/no\)",
    re.IGNORECASE,
)
# Offers of more help and requests for identity details are questions, not requests to act.
_NOT_A_REQUEST = re.compile(
    r"\banything else\b|\bsomething else\b|\bany other (?:questions?|requests?|help)\b|\bhelp you with\b"
    r"|\bconfirm (?:your|the) (?:full )?(?:e-?mail|name|zip|postal|identity|date of birth|birth ?date|phone|"
    r"user ?id|customer ?id|account number|pin|booking reference)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d))+[.!?]*")  # "$41.00" does not end a sentence

_NEGATIVE_START = re.compile(
    r"^\W*(?:no\b|nope\b|nah\b|not\b|never\b|don'?t\b|do not\b|cancel\b|stop\b|wait\b|hold on\b|"
    r"i (?:do not|don'?t|did not|didn'?t)\b)",
    re.IGNORECASE,
)
_AFFIRMATIVE_START = re.compile(
    r"^\W*(?:yes\b|yeah\b|yep\b|yup\b|sure\b|ok\b|okay\b|correct\b|confirmed?\b|absolutely\b|definitely\b|"
    r"of course\b|right\b|that'?s (?:right|correct|fine|good)\b|sounds good\b|please (?:do|go ahead|proceed)\b|"
    r"go ahead\b|proceed\b|do it\b|i confirm\b|i agree\b|affirmative\b|y\b)",
    re.IGNORECASE,
)
_AFFIRMATIVE_ANYWHERE = re.compile(r"\b(?:please (?:go ahead|proceed)|go ahead|i confirm|yes)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:no|not|don'?t|do not|never|didn'?t|did not)\b", re.IGNORECASE)
_HESITATION = re.compile(
    r"\b(?:but wait|wait|hold on|not yet|actually,? no|no,? (?:don'?t|wait|stop))\b", re.IGNORECASE
)

_MONEY = re.compile(r"(?:\$|\bUSD\s?)\s?(\d[\d,]*(?:\.\d+)?)|\b(\d[\d,]*(?:\.\d+)?)\s?(?:dollars|usd)\b", re.IGNORECASE)
# a time of day in any form: "14:30", "3:30 PM", "4pm", "4 p.m." (not an identifier or a name)
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s*[ap]\.?m\b\.?|\b\d{1,2}:\d{2}\b|\b[ap]\.?m\b\.?", re.IGNORECASE)
# An identifier: a token with a digit and a letter (W2378156, HAT123, cus_3673453, an email) or
# a run of four digits or more (an item id, a zip code, a card's last four).
_TOKEN = re.compile(r"#?[A-Za-z0-9][A-Za-z0-9_.@+-]*[A-Za-z0-9]|\d{4,}")
# A name: a capitalised word that does not start a sentence, a line or an item of a list ("- Cancel").
_NAME = re.compile(r"(?<![.!?:;\"'(\[\n*\u2022-]\s)(?<!^)\b[A-Z][a-zA-Z'-]+\b", re.MULTILINE)
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def is_confirmation_request(text: str | None) -> bool:
    """Whether the agent asks the user for the go-ahead ("Shall I go ahead?", "Please confirm
    (yes/no)"), as opposed to offering more help or asking for a detail."""
    for sentence in _sentences(text or ""):
        if _NOT_A_REQUEST.search(sentence):
            continue
        asks = sentence.endswith("?") or _IMPERATIVE.search(sentence)
        if asks and _PERMISSION.search(sentence):
            return True
    return False


def is_refusal(text: str | None) -> bool:
    """Whether the user says no ("No", "Don't", "Wait", "I did not ask for that")."""
    return bool(_NEGATIVE_START.search(text or ""))


def is_affirmative(text: str | None) -> bool:
    """Whether the user agrees: an answer that opens with yes (or the like), or one that says
    "go ahead" without a negation. "No", "don't" and "wait" are not agreement."""
    text = (text or "").strip()
    if not text or _NEGATIVE_START.search(text):
        return False
    if _AFFIRMATIVE_START.search(text):  # "Yes, but wait" / "Yes... no, hold on" are not agreement
        return not _HESITATION.search(text)
    first = _sentences(text)[0]
    return bool(_AFFIRMATIVE_ANYWHERE.search(first)) and not _NEGATION.search(first)


# -- the oracle's request for the go-ahead ----------------------------------------------------------


def confirmation_question(actions: Sequence[Action]) -> str:
    """The oracle's request for the go-ahead before `actions` (the writes a `confirmed` check
    wants asked about): each named with its arguments in words, then CONFIRM_QUESTION. The user
    knows every value in it (the gold actions' arguments), so the scripted user says yes."""

    def spoken(value: Any) -> str:
        if isinstance(value, Mapping):
            return ", ".join(f"{str(k).replace('_', ' ')} {spoken(v)}" for k, v in value.items())
        if isinstance(value, list | tuple):
            return " and ".join(f"({spoken(v)})" if isinstance(v, Mapping) else spoken(v) for v in value)
        if isinstance(value, bool):
            return str(value).lower()
        return str(value)

    def said(action: Action) -> str:
        what = action.tool.replace("_", " ")
        return f"{what} with {spoken(action.args)}" if action.args else what

    return f"Here is what I will do: {'; then '.join(said(a) for a in actions)}. {CONFIRM_QUESTION}"


# -- what the user asked for --------------------------------------------------------------------


def _walk(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k), str(k)
            yield from _walk(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _walk(v, key)
    elif hasattr(value, "model_dump"):
        yield from _walk(value.model_dump(exclude_defaults=True), key)
    elif value is not None:
        yield key, value


class Known:
    """What the user knows it asked for: its words, identifiers and amounts."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self._numbers: list[float] = []  # the values given as numbers (and their _cents in dollars)
        self._written: list[str] = []  # the text values, whose written amounts count too

    def add(self, value: Any, *, cents: bool = False) -> None:
        """Learn `value`'s words, identifiers and amounts. An integer under a `*_cents` key is an
        amount in cents; with `cents`, so may any whole number of 100 or more be (a factory
        world keeps money in cents in columns named for what they hold, such as `balance`)."""
        text, numbers, written = self.text, self._numbers, self._written
        for key, item in _walk(value):
            if isinstance(item, bool):
                continue
            if isinstance(item, int | float):
                numbers.append(round(float(item), 2))
                if key.endswith("_cents") or (cents and isinstance(item, int) and abs(item) >= 100):
                    numbers.append(round(item / 100, 2))
                text.append(str(item))
                continue
            item = str(item)
            text.append(item)
            written.append(item)

    def add_amounts(self, value: Any, echoed: set[float]) -> None:
        """Learn only the amounts `value` holds (its numbers, and amounts written in its text),
        except those in `echoed`: no identifier, name or word of it."""
        seen = Known()
        seen.add(value)
        self._numbers += [a for a in seen.amounts if not any(abs(a - e) < 0.005 for e in echoed)]

    @property
    def amounts(self) -> set[float]:
        """The numbers given, and every amount written in the text values (parsed in one pass:
        an amount never spans a line break, so joining the texts with one changes nothing)."""
        found = _NUMBER.findall("\n".join(self._written))
        return {*self._numbers, *(round(float(n.replace(",", "")), 2) for n in found)}

    def copy(self) -> Known:
        other = Known()
        other.text, other._numbers, other._written = list(self.text), list(self._numbers), list(self._written)
        return other

    def freeze(self) -> tuple[str, set[str]]:
        blob = "\n".join(self.text).lower()
        words = set(_WORD.findall(blob))
        return blob, words | {_singular(w) for w in words}


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _task_known(task: Task) -> Known:
    """What the task tells the user (a fresh copy to add to): worked out once per task object,
    which is frozen, and forgotten with it."""
    entry = _TASK_KNOWN.get(id(task))
    if entry is None or entry[0]() is not task:
        known = _read_task(task)
        key = id(task)
        _TASK_KNOWN[key] = (weakref.ref(task, lambda _ref: _TASK_KNOWN.pop(key, None)), known)
    else:
        known = entry[1]
    return known.copy()


_TASK_KNOWN: dict[int, tuple[weakref.ref[Task], Known]] = {}


def _read_task(task: Task) -> Known:
    known = Known()
    user = task.user
    known.add([task.instruction, user.wants, user.knows, list(user.turns)])
    for action in task.gold:
        known.add(action.tool.replace("_", " "))
        known.add(action.args)
    lookup = _changes_nothing(task)
    if not lookup:  # a write's consequences (the refund it gives) are what the user expects to hear
        known.add(list(task.answer))
    for check in task.rubric:
        if not (lookup and check.type == "answer_facts"):
            known.add(check.model_dump(exclude={"requirement", "weight", "noop_passes", "type"}), cents=not lookup)
    return known


def _changes_nothing(task: Task) -> bool:
    """Whether the task is a lookup: its rubric says a do-nothing agent leaves the gold state
    (`gold_state` with `noop_passes`, which `mcpsim check` verifies). Its answer is what the agent
    must find out, so the user never confirms it."""
    return any(check.type == "gold_state" and check.noop_passes for check in task.rubric)


def _gold_results(task: Task, messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The results of the conversation's calls that are gold actions (same tool, same arguments):
    what the user's own records say, as the agent read them."""
    gold = {(a.tool, json.dumps(a.args, sort_keys=True)) for a in task.gold}
    wanted: set[str] = set()
    results: list[Any] = []
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    continue
                if (fn.get("name"), json.dumps(args, sort_keys=True)) in gold:
                    wanted.add(call.get("id"))
        elif m.get("role") == "tool" and m.get("tool_call_id") in wanted:
            content = m.get("content") or ""
            try:
                results.append(json.loads(content))
            except ValueError:
                results.append(content)
    return results


def _own_records_read(blob: str, messages: Iterable[Mapping[str, Any]]) -> list[tuple[Any, set[float]]]:
    """The results of the conversation's calls whose arguments name one of the user's own
    records (an identifier the task gives, found in `blob`) and that were read without an error
    (a JSON value, not an error's text): what the user's records say, as the agent read them with
    any tool. Each with the amounts its call's own arguments carry, which the result may only
    echo."""
    wanted: dict[str, set[float]] = {}
    found: list[tuple[Any, set[float]]] = []
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or []:
                raw = (call.get("function") or {}).get("arguments") or "{}"
                try:
                    args = json.loads(raw)
                except ValueError:
                    continue
                _, ids, _ = _mentions(" ".join(str(v) for _, v in _walk(args)))
                if any(re.search(rf"(?<![a-z0-9]){re.escape(i.lower())}(?![a-z0-9])", blob) for i in ids):
                    said = Known()
                    said.add(args)
                    wanted[call.get("id")] = said.amounts
        elif m.get("role") == "tool" and m.get("tool_call_id") in wanted:
            try:
                value = json.loads(m.get("content") or "")
            except ValueError:
                continue
            if isinstance(value, dict | list):
                found.append((value, wanted[m["tool_call_id"]]))
    return found


# Capitalised words that are never names (the answer checks skip them too).
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def _mentions(question: str) -> tuple[list[float], list[str], list[str]]:
    """The amounts of money, identifiers and names a question mentions."""
    amounts = [float((a or b).replace(",", "")) for a, b in _MONEY.findall(question)]
    rest = _TIME.sub(" ", _MONEY.sub(" ", question))
    ids = [
        t.lstrip("#")
        for t in _TOKEN.findall(rest)
        if "@" in t or (re.search(r"\d", t) and (re.search(r"[A-Za-z]", t) or len(re.sub(r"\D", "", t)) >= 4))
    ]
    names = [n for n in _NAME.findall(rest) if n.lower() not in _COMMON]
    return amounts, ids, names


_COMMON = {
    "i",
    "i'm",
    "i'll",
    "i've",
    "i'd",
    "ok",
    "okay",
    "yes",
    "no",
    "please",
    "mr",
    "mrs",
    "ms",
    "dr",
    *WEEKDAYS,
    *MONTHS,
    *(day[:3] for day in WEEKDAYS),  # "Mon", "Tue": dates as people abbreviate them
    "tues",
    "thur",
    "thurs",
    *(month[:3] for month in MONTHS),  # "Jun", "Sep"
    "sept",
    "usd",
    *("am", "pm", "rsvp", "asap", "eta", "fyi", "utc", "gmt"),  # abbreviations everyone writes
}


_PHONE_RUN = re.compile(r"\+?\(?\d[\d\s().-]{5,}\d")


def _phone_digits(text: str) -> str:
    """A phone number's digits, without the country code 1 of a US number written with it."""
    digits = re.sub(r"\D", "", text)
    return digits[1:] if len(digits) == 11 and digits.startswith("1") else digits


def unasked(question: str, task: Task, messages: Iterable[Mapping[str, Any]] = ()) -> list[str]:
    """What the question mentions that the user did not ask for (empty when it asked for all).
    The conversation is read only as far as the question needs: not at all for a question that
    mentions no amount, identifier or name, and the user's own records (on a write) only for an
    amount the task and the gold reads do not account for."""
    amounts, ids, names = _mentions(question)
    if not (amounts or ids or names):
        return []
    messages = list(messages)
    known = _task_known(task)
    for result in _gold_results(task, messages):
        known.add(result)
    blob, words = known.freeze()

    def unknown(amounts: list[float]) -> list[float]:
        known_amounts = known.amounts
        return [a for a in amounts if not any(abs(a - k) < 0.005 for k in known_amounts)]

    strange = unknown(amounts)
    if strange and not _changes_nothing(task):  # a write: the amounts of its own records, read with any tool
        for value, echoed in _own_records_read(blob, messages):  # (amounts only: the text is unchanged)
            known.add_amounts(value, echoed)
        strange = unknown(strange)
    policy = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system").lower()
    vocabulary = words | set(_WORD.findall(policy))
    vocabulary |= set(canonical_places(blob).split()) if names else set()  # `Kansas` is `KS`, `Lane` is `Ln`

    def known_word(word: str) -> bool:
        return any(w in vocabulary or _singular(w) in vocabulary for w in (word, canonical_places(word)))

    missing = [f"${a:,.2f}" for a in strange]
    phones = {_phone_digits(run) for run in _PHONE_RUN.findall(blob)} if ids else set()
    missing += [
        i
        for i in ids
        if not re.search(rf"(?<![a-z0-9]){re.escape(i.lower())}(?![a-z0-9])", blob)
        and not (_PHONE_RUN.fullmatch(i) and _phone_digits(i) in phones)  # `512.555.0187` is `512-555-0187`
    ]
    missing += [n for n in names if not all(known_word(w) for w in _WORD.findall(n.lower()))]
    return missing


def confirmation_reply(question: str, task: Task, messages: Iterable[Mapping[str, Any]] = ()) -> str:
    """The scripted user's answer to a confirmation request: the task's scripted answer for the
    first of `user.confirmations` whose `match` the question contains; otherwise yes when the
    question is about what the user asked for, no when it mentions anything else or asks for
    another action than the user wants (`_action_words`). `messages`
    (the conversation so far, OpenAI-style dicts) lets the user recognise its own records in
    what the agent read with the gold solution's calls."""
    revealed = _detail(question, task)  # a question for a detail the task reveals when asked (`_asking`)
    if revealed is not None:
        return revealed
    lowered = question.lower()
    for scripted in task.user.confirmations:
        if scripted.match.lower() in lowered:
            return scripted.reply
    if _other_action(question, task):
        return NO_REPLY
    return NO_REPLY if unasked(question, task, messages) else YES_REPLY


def _other_action(question: str, task: Task) -> bool:
    """Whether the question asks for another action than any the user wants done (the gold
    solution's), or only denies them: "I'll change its address instead", "I won't cancel it". A
    gold write under confirmation whose name says no known action (`settle_invoice`,
    `publish_manuscript`) is read as the grader reads a request for it (`names_action`): its own
    verb ("publish") asks for it, a word that fits any write ("the change I'd like to make") does
    not ask for another action, "cancel" does. So one request per gold write, or one list of them
    all, in any order, gets a yes."""
    if _changes_nothing(task):
        return False
    wanted, verbless = _wanted_actions(task), _verbless_writes(task)
    if not verbless:
        return asks_another_action(question, wanted)
    if named_actions(question)[0] & wanted:
        return False
    return all(names_action(question, tool, verbless) is False for tool in verbless)


def _verbless_writes(task: Task) -> list[str]:
    """The gold's writes under confirmation whose names say no known action: the tools a
    `confirmed` check lists by name (a check of every write cannot tell the gold's writes from
    its reads, `get_order` from `settle_invoice`)."""
    listed = [p for c in task.rubric if isinstance(c, Confirmed) and c.tools != "writes" for p in c.tools]
    tools = dict.fromkeys(a.tool for a in task.gold)
    return [t for t in tools if not tool_actions(t) and any(fnmatch.fnmatchcase(t, p) for p in listed)]


# the verb of a request in the user's words: "Book 30 minutes ...", "please dispute ...", "I'd like to book ..."
_ASKED_VERB = re.compile(
    r"(?:^|[.!?]\s+|\bplease\s+|\b(?:can|could|would) you\s+(?:please\s+)?|\bi(?:'d| would) like (?:you )?to\s+|"
    r"\bi (?:want|need) (?:you )?to\s+)([A-Za-z]+)",
    re.IGNORECASE,
)


def _wanted_actions(task: Task) -> frozenset[str]:
    """The actions the user wants: those of the gold writes, narrowed by a choice argument that
    names one (`respond_to_invitation` with `response: accepted` accepts, it does not decline),
    and those the user's own instruction asks for in its words, a verb that opens a request ("Book
    30 minutes with Tom" for an event created; not "my flight has been cancelled")."""
    wanted: set[str] = {
        name for verb in _ASKED_VERB.findall(task.instruction) for name in named_actions(verb.lower())[0]
    }
    for action in task.gold:
        actions = tool_actions(action.tool)
        chosen = frozenset().union(
            *(named_actions(v)[0] for v in action.args.values() if isinstance(v, str) and " " not in v.strip())
        )
        wanted |= chosen & actions or actions
    return frozenset(wanted)


def scripted_reply(task: Task, messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The task's scripted user's next message after the agent's latest answer, or None when it
    has nothing more to say (the conversation is over). Worked out from the conversation alone
    (OpenAI-style dicts), so it is deterministic, a resumed rollout's user picks up where the first
    stopped, and any harness gets the same reply: a confirmation request of the agent's (its latest
    message, asking for the go-ahead) gets `confirmation_reply` (at most MAX_CONFIRMATIONS_IN_A_ROW
    in a row without a tool call between; after MAX_REFUSALS no's, the conversation ends), anything
    else the next of the task's scripted `user.turns`. Answering a confirmation uses up no
    scripted turn."""
    scripted = confirmed = refused = 0
    seen_instruction = False
    question: str | None = None  # the agent's latest words, while nothing came after them

    def asks(text: str | None) -> bool:
        return text is not None and is_confirmation_request(text) and confirmed < MAX_CONFIRMATIONS_IN_A_ROW

    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            if not seen_instruction:
                seen_instruction = True
            elif _detail(question, task) is not None:  # a detail asked for uses up no scripted turn
                refused += content == UNKNOWN_REPLY
            elif asks(question):
                confirmed += 1
                refused += content == NO_REPLY
            else:
                scripted += 1
            question = None
        elif role == "tool":
            confirmed, question = 0, None
        elif role == "assistant":
            question = content if isinstance(content, str) and content else None
    revealed = _detail(question, task)
    if revealed is not None or asks(question):
        assert question is not None
        if refused >= MAX_REFUSALS:
            return None
        return revealed or confirmation_reply(question, task, [dict(m) for m in messages])
    turns = task.user.turns
    return turns[scripted] if scripted < len(turns) else None


def _detail(question: str | None, task: Task) -> str | None:
    """The user's answer to a question for a detail (`_asking.detail_reply`); a request for the
    go-ahead that asks for no detail the task reveals is left to the confirmation rule."""
    revealed = detail_reply(question, task)
    return None if revealed == UNKNOWN_REPLY and is_confirmation_request(question) else revealed


def dialogue_steps(task: Task, steps: list[Step]) -> list[Step]:
    """`steps` (a gold solution's) with the task's dialogue (`_asking`): its questions for the
    details the user reveals when asked first, and its requests for the go-ahead the user turns
    down before the first request for the go-ahead of `steps` (or last, when there is none).
    Unchanged for a task without the dialogue entry."""
    topics, proposed = reveals(task), proposals(task)
    if not (topics or proposed):
        return steps
    at = next((i for i, s in enumerate(steps) if isinstance(s, Say)), len(steps))
    turned_down: list[Step] = [Say(say=confirmation_question([a])) for a in proposed]
    return [*(Say(say=detail_question(t)) for t in topics), *steps[:at], *turned_down, *steps[at:]]


__all__ = [
    "CONFIRM_QUESTION",
    "MAX_CONFIRMATIONS_IN_A_ROW",
    "MAX_REFUSALS",
    "NO_REPLY",
    "YES_REPLY",
    "confirmation_question",
    "confirmation_reply",
    "dialogue_steps",
    "is_affirmative",
    "is_confirmation_request",
    "is_refusal",
    "scripted_reply",
    "unasked",
]
