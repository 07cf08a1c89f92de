"""Which action a sentence names: the verbs of writes ("cancel", "refund", "book") in the words
people use for them, and whether the sentence asserts the action or denies it ("I will not cancel
it", "instead of cancelling", "rather than refund it").

A tool's actions come from the words of its name (`cancel_pending_order` → cancel): a request for
the go-ahead names the action of the write that follows when it asserts one of those actions. A
tool whose name has no known action word (`settle_invoice`, `publish_manuscript`) has its own verb
(`own_verb`, its first word): a request for it need name nothing, but one that asserts a known
action other than a word that fits any write ("cancel the invoice"; not "the change I'd like to
make"), or another write's own verb, without the tool's own verb asks for another action. The
scripted user (`_dialogue`) and the confirmation check (`mcpsim.grading`) share this one reading,
so the user says no to the requests the grader would refuse for naming another action (the user
knows the verbs of the gold's writes; the grader those of every write of the world).

Words belong to classes of actions, not to tools: "change", "update", "modify" and "edit" are one
action; "swap" and "replace" are both a change and an exchange. The classes are deliberately
coarse (a person who says "change" for a modification names it); distinct actions a policy keeps
apart (cancel, return, exchange, refund) are distinct classes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache

# action class -> the verbs (and nouns) that name it; each verb also matches its inflections
_CLASSES: dict[str, tuple[str, ...]] = {
    "cancel": ("cancel", "cancellation", "call off", "void"),
    "change": tuple(
        "change update modify modification edit adjust amend alter correct rename switch swap replace set "
        "reschedule move upgrade downgrade new raise lower increase decrease reduce extend".split()
    ),
    "exchange": ("exchange", "swap", "replace", "replacement"),
    "return": ("return",),
    "refund": ("refund", "reimburse", "reimbursement"),
    "create": tuple(
        "create add open register submit make made enrol enroll place purchase buy bought order new save store".split()
    )
    + ("sign up",),
    "book": ("book", "booking", "reserve", "reservation", "schedule"),
    "delete": tuple("delete deletion remove removal erase drop discard clear trash revoke unshare".split()),
    "send": tuple("send sent notify notification forward reply resend invite invitation share".split()),
    "pay": tuple("pay paid payment transfer move deposit withdraw withdrawal charge redeem retry send sent".split()),
    "issue": tuple("issue grant give gave given credit compensate compensation award".split()),
    "accept": tuple("accept approve approval agree rsvp respond response".split()),
    "decline": tuple("decline reject rejection deny denial refuse rsvp respond response".split()),
    "assign": ("assign", "allocate", "hand over", "reassign"),
    "close": tuple("close closure resolve complete finish mark archive".split()),
    "reopen": ("reopen", "re-open", "restore", "unarchive"),
    "freeze": tuple("freeze froze frozen lock block suspend disable pause".split()),
    "unfreeze": tuple("unfreeze unlock unblock reactivate enable resume activate".split()),
    "ship": tuple("ship shipping shipment deliver delivery send sent redirect forward".split()),
    "dispute": ("dispute", "contest", "chargeback"),
    "tag": tuple("tag label flag categorize categorise".split()),
}


def _inflections(word: str) -> set[str]:
    """A verb's forms: "cancel" → cancels, cancelled, canceled, cancelling, canceling; "close" →
    closes, closed, closing; "pay" → pays, paying. Phrases and nouns pass through with a plural."""
    if " " in word:
        return {word}
    forms = {word, word + "s", word + "es", word + "ed", word + "ing", word + "d"}
    if word.endswith("e"):
        forms |= {word[:-1] + "ing", word[:-1] + "ed"}
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        forms |= {word[:-1] + "ies", word[:-1] + "ied"}
    if re.search(r"[^aeiou][aeiou][bdglmnprt]$", word):  # cancel → cancelled, drop → dropped
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return forms


_FORMS: dict[str, frozenset[str]] = {}
for _name, _words in _CLASSES.items():
    for _word in _words:
        for _form in _inflections(_word):
            _FORMS[_form] = _FORMS.get(_form, frozenset()) | {_name}
_NEGATOR = re.compile(
    r"\b(?:not|never|nothing|no longer|won'?t|wouldn'?t|shouldn'?t|can'?t|cannot|don'?t|didn'?t|isn'?t|instead of|"
    r"rather than|without|unable to|refrain from|avoid|skip|leave|keep)\b|n't\b",
    re.IGNORECASE,
)
# a clause ends at punctuation (not the point of "$25.68") and at a conjunction
_CLAUSE_BREAK = re.compile(r"[;:!?\n]|\.(?!\d)|\b(?:and|but|then|so|or)\b|,", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z'-]*")
_ORDER = {"order", "orders", "ordered", "ordering"}  # a verb only after a subject or an auxiliary
_BEFORE_A_VERB = {"i", "we", "i'll", "we'll", "will", "to", "shall", "can", "could", "should", "please", "just", "also"}
_NEGATION_REACH = 4  # words before the verb a negator can be in to deny it
STATUS_QUO = "keep"  # the class `named_actions` denies for "leave it as it is", "keep it unchanged"
_KEEP = re.compile(
    r"\b(?:leave|leaving|keep|keeping)\b[^.;!?]{0,40}?\b(?:as (?:it|they) (?:is|are|was|were)|as is|unchanged|"
    r"untouched|alone|in place)\b|\b(?:no|without any) changes?\b|\bnothing (?:will be|gets?) changed\b",
    re.IGNORECASE,
)
_FORMULA = re.compile(  # how a request asks for its answer: "reply yes or no", "respond with yes"
    r"\b(?:reply|respond|answer)\s+(?:with\s+)?\W?(?:a\s+)?(?:yes|no|y)\b|\b(?:by|with) (?:a )?(?:reply|response)\b",
    re.IGNORECASE,
)
_PATTERN = re.compile(
    r"(?<![\w-])(" + "|".join(re.escape(f) for f in sorted(_FORMS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)


# words that are the record, not the action, after a name's first word: `cancel_reservation` does
# not book, `modify_pending_order_payment` does not pay, `forward_message` does not message
_NOUNS_IN_NAMES = {
    *("order", "orders", "reservation", "reservations", "booking", "bookings", "payment", "payments"),
    *("message", "messages", "notification", "notifications", "invitation", "invitations", "transfer", "transfers"),
}


@cache
def tool_actions(tool: str) -> frozenset[str]:
    """The action classes the words of a tool's name say it performs (`issue_partial_refund` →
    issue, refund; `update_order_shipping_address` → change, ship); empty for a read (`get_order`)
    or a name with no known action word."""
    words = [w for w in re.split(r"[_\W]+", tool.lower()) if w]
    found: frozenset[str] = frozenset()
    for k, word in enumerate(words):
        if k and word in _NOUNS_IN_NAMES:
            continue
        found |= _FORMS.get(word, frozenset())
        if k + 1 < len(words):
            found |= _FORMS.get(f"{word} {words[k + 1]}", frozenset())
    return found


# An action word that only describes a record or stands for changes in general names no action:
# "the delivered order", "your cancelled flight" (a participle after a determiner); "the
# compensation certificate", "payment method", "the shipping address" (a noun or gerund modifying
# the noun after it); "any change", "make any changes" (changes in general: "make" takes the
# action of the word after it, as other light verbs do).
_DETERMINERS = {"the", "a", "an", "your", "my", "our", "their", "his", "her", "its", "this", "that", "these", "those"}
_GENERIC = {"any", "other", "further", "more"}
_NOMINAL = re.compile(r"(?:tion|sion|ment|al|ance|ence|ery|ure)s?$", re.IGNORECASE)
_FIELD_NOUNS = {
    *("address", "addresses", "method", "methods", "label", "fee", "fees", "cost", "costs", "details", "info"),
    *("information", "option", "options", "status", "policy", "window", "date", "time", "id", "number", "code"),
    *("reference", "restrictions", "class", "certificate", "certificates", "voucher", "confirmation", "history"),
}
_NOT_A_HEAD = {  # words after an action noun that show it is no modifier ("the cancellation of order #W1")
    *_DETERMINERS,
    *("of", "for", "to", "on", "in", "with", "from", "at", "by", "and", "or", "but", "as", "now", "today", "it"),
    *("them", "me", "you", "is", "are", "was", "were", "will", "would", "should", "shall", "can", "could", "be"),
    *("please", "request", "requests", "instead", "first", "then", "too", "also", "right", "away", "here", "there"),
    *("i", "we", "if", "so", "amount", "amounts", "order", "orders", "reservation", "reservations"),
}
# light verbs: they take the action of the action word after them ("make the booking", "submit the
# cancellation request", "complete the refund")
_LIGHT = {f for w in ("make", "submit", "place", "complete", "finish", "finalise", "finalize") for f in _inflections(w)}
_LABEL = re.compile(r"(?:\s+[a-z]+){0,2}\s*:(?!\d)", re.IGNORECASE)
# a setting's name and its value: "make default: yes", "send receipt: no" (the verb names the
# setting, not the action asked for; "cancel: yes or no?", with no word before the colon, still names it)
_SETTING = re.compile(r"(?:\s+[a-z]+){1,2}\s*:\s*(?:yes|no|true|false|on|off)\b", re.IGNORECASE)


_LEMMAS = {w for words in _CLASSES.values() for w in words}


def _describes(word: str, before: list[str], after: list[str], label: bool) -> bool:
    """Whether the action word `word` (lowercase) only describes a record, or stands for changes in
    general, given the words before it (in its clause) and after it, and whether a colon closes
    its phrase (a label: "changes: ..."); see `_DETERMINERS`."""
    if before and before[-1] in _GENERIC:
        return True
    if word in _LIGHT and any(_FORMS.get(w) and w not in _ORDER for w in after[:3]):
        return True
    if label and word not in _LEMMAS:  # "changes: itm_1", "refund amount: $5": a field's name
        return True
    head = after[0] if after else ""
    is_head = head.isalpha() and head not in _NOT_A_HEAD and not _FORMS.get(head)
    if word.endswith("ed") and ((before and before[-1] in _DETERMINERS) or is_head):
        return True  # "the delivered order", "airline cancelled flight"
    # the object of another action: "cancel the dispute", "cancel the partial refund"
    determiner = next(
        (k for k in range(len(before) - 1, max(len(before) - 3, -1), -1) if before[k] in _DETERMINERS), None
    )
    if determiner is not None and any(
        _FORMS.get(w) and w not in _LIGHT for w in before[max(0, determiner - 3) : determiner]
    ):
        return True
    if word.endswith("ing"):
        return head in _FIELD_NOUNS
    return bool(_NOMINAL.search(word)) and is_head


def named_actions(text: str, verbs: frozenset[str] = frozenset()) -> tuple[frozenset[str], frozenset[str]]:
    """The action classes `text` asserts and those it only denies: a verb is denied when a negator
    ("not", "won't", "instead of", "rather than", "leave") comes within a few words before it in its
    clause. A class both asserted somewhere and denied elsewhere counts as asserted. A request's
    own formula ("reply yes or no") names nothing; keeping things as they are denies every action
    (`STATUS_QUO`). `verbs` are more actions, each its own class (a tool's verb no class knows,
    `settle` of `settle_invoice`)."""
    text = _FORMULA.sub(" ", text)
    asserted: set[str] = set()
    denied: set[str] = {STATUS_QUO} if _KEEP.search(text) else set()
    for _, classes, negated in _read(text, verbs):
        (denied if negated else asserted).update(classes)
    return frozenset(asserted), frozenset(denied - asserted)


@lru_cache(maxsize=64)
def _vocabulary(verbs: frozenset[str]) -> tuple[re.Pattern[str], dict[str, frozenset[str]]]:
    """The pattern and the classes of every action word, with `verbs` added as classes of their own."""
    if not verbs:
        return _PATTERN, _FORMS
    forms = dict(_FORMS)
    for verb in verbs:
        for form in _inflections(verb):
            forms[form] = forms.get(form, frozenset()) | {verb}
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(r"(?<![\w-])(" + alternatives + r")(?![\w-])", re.IGNORECASE), forms


def _read(text: str, verbs: frozenset[str] = frozenset()) -> list[tuple[str, frozenset[str], bool]]:
    """Each action word of `text` that names an action (not a record it describes, a setting or
    changes in general): (the word in lower case, its classes, whether a negator denies it)."""
    text = _FORMULA.sub(" ", text)
    pattern, forms = _vocabulary(verbs)
    found: list[tuple[str, frozenset[str], bool]] = []
    for match in pattern.finditer(text):
        word = match.group(1).lower()
        before = text[: match.start()]
        clause = _CLAUSE_BREAK.split(before)[-1]
        words = _WORD.findall(clause.lower())
        if word in _ORDER and not (words and words[-1] in _BEFORE_A_VERB):
            continue  # "order #W1", "delivered order items": the record, not the action
        following = text[match.end() : match.end() + 80]
        if _SETTING.match(following):
            continue
        label = _LABEL.match(following) is not None and word not in verbs  # "Settle invoice: INV1" settles
        if _describes(word, words, _WORD.findall(following.lower()), label):
            continue
        near = " ".join(words[-_NEGATION_REACH:])
        found.append((word, forms[word], bool(_NEGATOR.search(near))))
    return found


def action_mentions(text: str) -> list[tuple[int, str, frozenset[str]]]:
    """Each word of `text` that names an action: (its offset, the word as written, its classes)."""
    return [(m.start(), m.group(1), _FORMS[m.group(1).lower()]) for m in _PATTERN.finditer(text)]


def asks_another_action(text: str, actions: frozenset[str]) -> bool:
    """Whether `text` asks for another action than `actions` (classes, `tool_actions`): it names
    some action, asserted or denied, and asserts none of them ("I'll change its address instead",
    "I won't cancel it", "I'll leave it as it is"). A request that names no action at all does not
    ask for another one. For an empty `actions` (a tool with no known verb) only a request to keep
    things as they are, asserting no action, asks for another: whatever the tool does changes
    something."""
    if not actions:
        return _keeps(text)
    asserted, denied = named_actions(text)
    return bool(asserted or denied) and not (asserted & actions)


# "leave the others alone", "no changes to your other orders": a keep about other records
_OTHERS = re.compile(r"\b(?:others?|rest|else|remaining)\b", re.IGNORECASE)


def _keeps(text: str) -> bool:
    """Whether `text` asks only to keep things as they are: a keep phrase, no action asserted, and
    the keep not about other records ("No changes to your other orders")."""
    asserted, denied = named_actions(text)
    if STATUS_QUO not in denied or asserted:
        return False
    return any(not _OTHERS.search(text[m.start() : m.end() + 40]) for m in _KEEP.finditer(text))


# Words that fit any write, so they tell no action apart when a tool's name says none: "the
# change I'd like to make", "update it", "set it to ...".
_FITS_ANY = frozenset({f for w in ("make", "made", *_CLASSES["change"]) for f in _inflections(w)})


def own_verb(tool: str) -> str | None:
    """The verb of a tool whose name says no known action: its first word (`settle` of
    `settle_invoice`, `write` of `write_off_invoice`); None for a tool with a known action, or
    whose first word is no word."""
    if tool_actions(tool):
        return None
    first = next((w for w in re.split(r"[_\W]+", tool.lower()) if w), "")
    return first if len(first) > 2 and first.isalpha() else None


def names_action(text: str, tool: str, world: Iterable[str] = ()) -> bool | None:
    """Whether `text` asserts `tool`'s action ("cancel" for `cancel_order`, in any of its words). A
    request that names the record but no action ("About order #W1: shall I go ahead?") does not
    name it. For a tool whose name says no known action (`settle_invoice`) the request names it
    when it asserts the tool's own verb (`own_verb`: "settle", "settled"); it asks for another
    action (False) when, without that verb, it asserts a known action ("cancel the invoice"; a
    word that fits any write, "the change I'd like to make", `_FITS_ANY`, tells nothing apart) or
    the own verb of another tool of `world` (the world's writes: "resubmit" for
    `resubmit_manuscript`), only denies actions ("I won't settle it"), or only keeps things as they are;
    otherwise None: the request need name nothing."""
    actions = tool_actions(tool)
    if actions:
        return bool(named_actions(text)[0] & actions)
    own = own_verb(tool)
    others = {v for t in world if (v := own_verb(t)) and v != own}
    verbs = frozenset(others | ({own} if own else set()))
    words = _read(text, verbs)
    if own and any(own in classes and not negated for _, classes, negated in words):
        return True
    if any(word not in _FITS_ANY and not negated for word, _, negated in words):
        return False
    if words and all(negated for _, _, negated in words):  # only denies: "I won't settle it"
        return False
    return False if _keeps(text) else None


__all__ = [
    "STATUS_QUO",
    "action_mentions",
    "asks_another_action",
    "named_actions",
    "names_action",
    "own_verb",
    "tool_actions",
]
