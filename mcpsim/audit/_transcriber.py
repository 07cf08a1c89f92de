"""The transcriber of the `transcriber` baseline: an agent that copies the instruction into tool
calls without reading anything.

It picks the tools whose name and description share words with the instruction, fills their
arguments with values copied from the instruction (quoted strings, e-mail addresses, dates,
identifiers, numbers, enum values the instruction names), asks the go-ahead where the rubric wants
one, makes the calls and answers "Done." It never reads a result. A task it passes asks for
nothing but transcription; `mcpsim check` and the factory's acceptance hold its pass rate per
world under `TRIVIAL_LIMIT`. The one-step greedy agent (`_greedy`) shares the matching and the
filling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcpsim._patterns import pattern_problem, searches
from mcpsim.audit._conversation import call_messages
from mcpsim.engine import CallResult, Episode, TemplateCache
from mcpsim.tasks import (
    MONTHS,
    Action,
    Say,
    Task,
    gold_steps,
    is_affirmative,
    result_text,
    scripted_reply,
    task_episode,
)
from mcpsim.world import ToolSpec, World

__all__ = [
    "TRANSCRIBER_READS",
    "TRIVIAL_LIMIT",
    "Played",
    "Value",
    "fill_arguments",
    "fillable_calls",
    "best_calls",
    "instruction_values",
    "matching_tools",
    "play",
    "transcribe",
    "words",
]

TRIVIAL_LIMIT = 0.05  # the highest share of a world's tasks a transcribing agent may pass
TRANSCRIBER_READS = 3  # the reads it makes at most, before its one write

_STOPWORDS = frozenset(
    "the and for with from that this then than into your you our are was were has have had not but can "
    "will would please could should its all any one each per via use used using get set new also "
    "want need like just about what when which who whom how there their them they her his him she "
    "hello thanks thank given".split()
)
_WORD = re.compile(r"[a-z][a-z0-9]*")
_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|(?<![\w])\'([^\'\n]{2,200})\'(?![\w])')
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?\b")
_LONG_DATE = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.IGNORECASE)
_PHONE = re.compile(r"\(?\b\d{3}\)?[ .-]?\d{3}[ .-]\d{4}\b")
_TOKEN = re.compile(r"#?[A-Za-z0-9][\w#/-]*[A-Za-z0-9]")
_NUMBER = re.compile(r"(?<![\w.,-])\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w-]|[.,]\d)")
_LABEL_TAIL = r"s?\b\s*(?::|=|\bis\b|\bof\b|\bto\b)?\s*([^\s;()?!,][^;()\n?!]*?)(?=\s*(?:[;()\n?!]|,\s|\.\s|\.$|$))"
_ID_NAME = re.compile(r"(?:^|_)(?:id|ids|code|number|ref|reference|key|sku|slug)$")


@dataclass(frozen=True)
class Value:
    """A value the instruction states: its text or number, its kind, where it starts and the
    words just before it (what it is called: "order #W123", "reason 'damaged'")."""

    value: str | int | float
    kind: str  # quoted, email, date, phone, id, number
    start: int
    context: frozenset[str]


def words(text: str) -> set[str]:
    """The content words of `text`, lower case, a plural's s dropped."""
    found = set()
    for word in _WORD.findall(text.lower().replace("_", " ")):
        if len(word) < 3 or word in _STOPWORDS:
            continue
        found.add(word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word)
    return found


def instruction_values(text: str) -> list[Value]:
    """Every value `text` states, in order: quoted strings, e-mail addresses, dates (ISO, or a
    month's name, day and year), phone numbers, numbers ($ and thousands separators read) and
    identifiers (a token with a digit and a letter or separator)."""
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def add(value: str | int | float, kind: str, start: int, end: int) -> None:
        if any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        clause = re.split(r"[;:,(.!?]", text[:start])[-1]
        found.append(Value(value, kind, start, frozenset(words(" ".join(clause.split()[-2:])))))

    for m in _QUOTED.finditer(text):
        add(next(g for g in m.groups() if g is not None), "quoted", m.start(), m.end())
    for m in _EMAIL.finditer(text):
        add(m.group(), "email", m.start(), m.end())
    for m in _ISO.finditer(text):
        add(m.group(), "date", m.start(), m.end())
    for m in _LONG_DATE.finditer(text):
        add(_long_date(m), "date", m.start(), m.end())
    for m in _PHONE.finditer(text):
        add(m.group(), "phone", m.start(), m.end())
    for m in _TOKEN.finditer(text):
        if re.search(r"\d", m.group()) and re.search(r"[A-Za-z_#-]", m.group().strip("-")):
            add(m.group(), "id", m.start(), m.end())
    for m in _NUMBER.finditer(text):
        add(_number(m), "number", m.start(), m.end())
    return sorted(found, key=lambda v: v.start)


def _long_date(m: re.Match[str]) -> str:
    month = [x.lower() for x in MONTHS].index(m.group(1).lower()) + 1
    return f"{int(m.group(3)):04d}-{month:02d}-{int(m.group(2)):02d}"


def _number(m: re.Match[str]) -> int | float:
    digits = m.group(1).replace(",", "")
    return float(digits + m.group(2)) if m.group(2) else int(digits)


def matching_tools(world: World, instruction: str) -> list[tuple[int, str]]:
    """The tools sharing words with the instruction, as (words shared, name), most shared first."""
    said = words(instruction)
    scored = [(len(said & words(f"{name} {spec.description}")), name) for name, spec in world.tools.items()]
    return sorted(((n, name) for n, name in scored if n), key=lambda s: (-s[0], s[1]))


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        schema = root.get("$defs", {}).get(schema["$ref"].rsplit("/", 1)[-1], {})
    options = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    return _resolved(options[0], root) if options else schema


def _enum_named(enum: list[Any], text: str) -> Any:
    """The enum value `text` names first (underscores read as spaces), or None."""
    lowered = text.lower()
    named = [
        (m.start(), v)
        for v in enum
        if isinstance(v, str)
        and (m := re.search(r"\b" + re.escape(v.lower().replace("_", " ")) + r"\b", lowered)) is not None
    ]
    return min(named, key=lambda n: n[0])[1] if named else None


def _labelled(name: str, text: str) -> str | None:
    """What the instruction says right after the parameter's own name ("city Brownberg;",
    "publisher SU4257", "reason: damaged"), up to the end of the clause; the last such place."""
    label = re.sub(r"[ _](?:id|ids)$", "", name).replace("_", " ").strip()
    if len(label) < 3:
        return None
    pattern = r"\b" + r"[\s_-]+".join(map(re.escape, label.split())) + _LABEL_TAIL
    spans = [m.group(1).strip(" '\"") for m in re.finditer(pattern, text, re.IGNORECASE)]
    return next((s for s in reversed(spans) if 0 < len(s) <= 120), None)


def _from_span(name: str, schema: dict[str, Any], span: str) -> Any:
    """The value of type `schema` for parameter `name` that a labelled span states, or None: an
    identifier is one token with a digit, an e-mail address has its @."""
    kind = schema.get("type")
    if kind == "string" and "email" in name:
        email = _EMAIL.search(span)
        return email.group() if email else None
    if kind == "string" and _ID_NAME.search(name) and not schema.get("pattern"):
        return span if re.fullmatch(r"\S*\d\S*", span) else None
    if kind in ("integer", "number"):
        number = _NUMBER.search(span)
        value = _number(number) if number else None
        return None if value is None or (kind == "integer" and not isinstance(value, int)) else value
    if kind != "string":
        return None
    if schema.get("format") in ("date", "date-time"):
        date = _ISO.search(span) or _LONG_DATE.search(span)
        return None if date is None else date.group() if date.re is _ISO else _long_date(date)
    if schema.get("pattern") and not _matches(schema["pattern"], span):
        return next((t for t in span.split() if _matches(schema["pattern"], t)), None)
    return span


def _matches(pattern: str, text: str) -> bool:
    """A schema's pattern (a spec's, a real server's) searched in linear time; one the linear
    engine cannot run (look-around, backreferences) matches nothing."""
    return pattern_problem(pattern) is None and searches(pattern, text)


def _candidates(name: str, schema: dict[str, Any], values: list[Value]) -> list[Value]:
    """The values that could fill parameter `name`, best first."""
    kind = schema.get("type")
    if kind == "integer":
        return [v for v in values if v.kind == "number" and isinstance(v.value, int)]
    if kind == "number":
        return [v for v in values if v.kind == "number"]
    if kind != "string":
        return []
    if schema.get("pattern"):
        return [v for v in values if _matches(schema["pattern"], str(v.value))]
    wanted = (
        ["date"]
        if schema.get("format") in ("date", "date-time") or "date" in name
        else ["email"]
        if "email" in name
        else ["phone"]
        if "phone" in name
        else ["id", "phone", "quoted"]
        if _ID_NAME.search(name)
        else ["quoted", "id", "email", "date", "phone"]
    )
    return sorted((v for v in values if v.kind in wanted), key=lambda v: wanted.index(v.kind))


def _argument(
    name: str, item: dict[str, Any], instruction: str, values: list[Value], used: set[int], required: bool
) -> tuple[Any, bool]:
    """One parameter's value and whether the instruction names it for this parameter: an enum
    value it says (after the parameter's name, else anywhere); a value right after the
    parameter's words; what follows the parameter's name; else, if the parameter is required,
    the first unused value of a fitting kind. (None, False) if nothing fits."""
    span = _labelled(name, instruction)
    if "enum" in item:
        value = _enum_named(item["enum"], span or "")
        value = _enum_named(item["enum"], instruction) if value is None else value
        return value, value is not None
    own = words(re.sub(r"_(?:id|ids)$", "", name))
    pool = [v for v in _candidates(name, item, values) if v.start not in used]
    near = [v for v in pool if own & v.context]
    if near:
        used.add(near[0].start)
        return near[0].value, True
    if span is not None and (value := _from_span(name, item, span)) is not None:
        return value, True
    if required and pool:
        used.add(pool[0].start)
        return pool[0].value, False
    return None, False


def fill_arguments(spec: ToolSpec, instruction: str, values: list[Value]) -> tuple[dict[str, Any], int] | None:
    """The tool's arguments copied from the instruction (each value used once; `_argument`): the
    arguments and how many the instruction names for their parameter; None if a required
    parameter has nothing that fits. An optional parameter is filled only when named."""
    root = spec.input_schema()
    required = set(root.get("required", []))
    used: set[int] = set()
    args: dict[str, Any] = {}
    named_args = 0
    for name, raw in root.get("properties", {}).items():
        schema = _resolved(raw, root)
        item = _resolved(schema.get("items", {}), root) if schema.get("type") == "array" else schema
        value, named = _argument(name, item, instruction, values, used, name in required)
        if value is None or (name not in required and not named):
            if name in required:
                return None
            continue
        args[name] = [value] if schema.get("type") == "array" else value
        named_args += named
    return args, named_args


def fillable_calls(world: World, instruction: str) -> list[tuple[int, Action]]:
    """A call of every tool that shares words with the instruction and whose arguments it can
    fill, with its score (the words shared, plus two for each argument the instruction names),
    best first; reads before writes of the same score."""
    values = instruction_values(instruction)
    ranked: list[tuple[int, bool, str, dict[str, Any]]] = []
    for shared, name in matching_tools(world, instruction):
        filled = fill_arguments(world.tools[name], instruction, values)
        if filled is not None:
            ranked.append((shared + 2 * filled[1], world.tools[name].writes, name, filled[0]))
    ranked.sort(key=lambda r: (-r[0], r[1], r[2]))
    return [(score, Action(tool=name, args=args)) for score, _, name, args in ranked]


@dataclass
class Played:
    """A cheating agent's run: the episode (its caller closes it), the conversation, its final
    answer, what it did, and the last call's result (None if it made none)."""

    episode: Episode
    conversation: list[dict[str, Any]]
    answer: str
    what: str
    last: CallResult | None = None


def play(world: World, task: Task, templates: TemplateCache, actions: list[Action]) -> Played:
    """Make `actions` on a fresh episode of `task`, asking the go-ahead first where the rubric
    wants one (as the gold solution does) and stopping at a no; whatever the calls return. Its
    answer is "Done."."""
    episode = task_episode(world, task, templates=templates)
    conversation: list[dict[str, Any]] = [{"role": "user", "content": task.instruction}]
    last = None
    for step in gold_steps(task.model_copy(update={"gold": actions}), world):
        if isinstance(step, Say):
            conversation.append({"role": "assistant", "content": step.say})
            reply = scripted_reply(task, conversation)
            conversation.append({"role": "user", "content": reply or ""})
            if not is_affirmative(reply):
                break
            continue
        last = episode.call(step.tool, step.args)
        conversation += call_messages(step.tool, step.args, f"call_{len(conversation)}", result_text(last))
    shown = "; ".join(f"{a.tool}({', '.join(a.args)})" for a in actions) or "no call"
    return Played(episode, conversation, "Done.", shown, last)


def best_calls(world: World, instruction: str) -> tuple[list[Action], Action | None]:
    """The fillable reads, best first, and the best fillable write if it scores above every read
    (a question is not a request for a change)."""
    calls = fillable_calls(world, instruction)
    reads = [(score, a) for score, a in calls if not world.tools[a.tool].writes]
    writes = [(score, a) for score, a in calls if world.tools[a.tool].writes]
    best_read = max((score for score, _ in reads), default=0)
    return [a for _, a in reads], next((a for score, a in writes[:1] if score > best_read), None)


def transcribe(world: World, task: Task, templates: TemplateCache) -> Played:
    """The transcriber on `task`: the best reads it can fill (at most TRANSCRIBER_READS), then
    the best write (`best_calls`); its answer is "Done." whatever happened."""
    reads, write = best_calls(world, task.instruction)
    return play(world, task, templates, reads[:TRANSCRIBER_READS] + ([write] if write else []))
