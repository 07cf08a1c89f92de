"""The wording lint: known shapes of text no person would write, in a compiled world's task
instructions and user-visible text (tool descriptions, the policy, seeded text fields).

- `article`: "a appointment", "an booking" (inflect's choice of article for the next word);
- `column_phrase`: a column name used as a noun ("What is the enrolled of lesson block ...");
- `description_quoted`: an instruction that repeats a tool's description;
- `argument_dump`: an instruction that lists arguments as `name value; name value`, `key: value`
  pairs, `name=value` or a JSON-like object (`{"order_id": "OR1001"}`);
- `quoted_value`: an instruction that quotes what the agent is to find: an id in one of the world's
  id formats, or a gold argument the user does not know, in quotes or as a code with a digit;
- `lorem`: fake-data filler in seeded text ("Room institution east personal water.");
- `repeated_constant` (across worlds, `repeated_constants`): the same e-mail, phone number or
  text in the tasks or data of several worlds.

`wording_problems` gives one line per hit for the acceptance check `wording`; the hits of the
kinds in `ENFORCED` fail it, and so do argument dumps and quoted values in a task that is to make
the agent find things out (`finds_out`: a generated task of a kind in `FINDING_KINDS`, which names
its targets by a property); the others are counted in the report. `candidate_problems` is the same
lint on one generated candidate, before its audit: acceptance drops a candidate it refuses and
counts it under `wording` (`mcpsim.taskgen._generator.TaskGenerator`'s `screen`)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any, NamedTuple

import inflect
from faker.providers.company.en_US import Provider as Company
from faker.providers.lorem.en_US import Provider as Lorem

from mcpsim._nested import leaves
from mcpsim.engine import Episode
from mcpsim.specs import CompiledWorld
from mcpsim.tasks import Task

KINDS = (
    "article",
    "column_phrase",
    "description_quoted",
    "argument_dump",
    "quoted_value",
    "lorem",
    "repeated_constant",
)
# What fails acceptance in any text. The one-call kinds' instructions still state their arguments
# and paraphrase the tool (a write asked for by its details): counted there, not enforced.
ENFORCED = frozenset({"article", "column_phrase", "lorem"})
# What fails acceptance in the instruction of a task that is to make the agent find things out.
ENFORCED_WHEN_FINDING = frozenset({"argument_dump", "quoted_value"})
# The generated kinds (`mcpsim.taskgen`) whose tasks name their targets by a property: the agent
# searches, lists and reads to find the ids and values it acts on (tags[0] is the kind).
FINDING_KINDS = frozenset(
    {"pick", "branch", "sweep", "triage", "tally", "errand", "review", "ask", "change", "decline"}
)
PAGING_ARGS = frozenset({"limit", "offset", "cursor", "page", "page_token"})
QUOTED_RUN = 6  # words of a description in a row that count as quoting it
MIN_FILLER_WORDS = 3
_ARTICLE = re.compile(r"\b([Aa]n?) ([A-Za-z][a-z'-]*)\b")
_OF_PHRASE = re.compile(r"\bthe ([a-z]+(?: [a-z]+){0,2}) (?:of|on record for|for) ")
_COLON_PAIRS = re.compile(r"(?:\b[a-z][a-z_ ]{0,30}: [^,;:]+[,;] ?){2,}")
_ASSIGNMENTS = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*\s?=\s?[^\s,;=]+")
_OBJECT = re.compile(r"\{\s*[\"'][^\"']+[\"']\s*:[^{}]*\}")
_QUOTES = ('"{}"', "'{}'", "`{}`", "\u201c{}\u201d", "\u2018{}\u2019")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PHONE = re.compile(r"(?<![\w-])(?!\d{4}-\d\d-\d\d)(?:\+?\d[\d().x -]{8,}\d)(?![\w-])")
_FAKER_SENTENCES = re.compile(r"(?:[A-Z][a-z]+(?: [a-z]+)+\.\s*)+")
_NOUNS_IN_ED = frozenset({"bed", "need", "feed", "seed", "speed", "shed", "red", "fund", "creed", "breed"})


class Hit(NamedTuple):
    kind: str
    where: str  # a task's id, `tool NAME`, `policy`, `entity.field`
    text: str
    enforced: bool = False  # it fails acceptance where its kind alone would not (`ENFORCED_WHEN_FINDING`)


@cache
def _english() -> inflect.engine:
    return inflect.engine()


@cache
def _lorem() -> frozenset[str]:
    return frozenset(Lorem.word_list)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.casefold())


# -- one text -----------------------------------------------------------------------------------


def wrong_articles(text: str) -> list[str]:
    """`a appointment`, `an booking`: the article and word where inflect picks the other article."""
    found = []
    for m in _ARTICLE.finditer(text):
        article, word = m.group(1).lower(), m.group(2)
        if not word.isalpha() or len(word) < 2:
            continue
        right = _english().a(word.lower()).split(" ", 1)[0]
        if right != article:
            found.append(m.group(0))
    return found


def column_phrases(text: str, columns: Iterable[str]) -> list[str]:
    """`the enrolled of`: a column's name where a noun belongs (a participle, an adjective-like
    flag): the column is named as a noun phrase without being one."""
    wanted = {c.replace("_", " ") for c in columns}
    found = []
    for m in _OF_PHRASE.finditer(text):
        phrase = m.group(1)
        last = phrase.split()[-1]
        if phrase in wanted and (last.startswith(("is ", "has ")) or _not_a_noun(last)):
            found.append(m.group(0).strip())
    return found


def _not_a_noun(word: str) -> bool:
    return (word.endswith("ed") and word not in _NOUNS_IN_ED) or word in ("is", "has", "active", "open", "due")


def quoted_descriptions(text: str, descriptions: Iterable[str]) -> list[str]:
    """The descriptions whose first clause (or a run of `QUOTED_RUN` of its words) the text repeats."""
    have = " " + " ".join(_words(text)) + " "
    found = []
    for description in descriptions:
        clause = _words(re.split(r"[.;(]", description, maxsplit=1)[0])
        runs = [clause] if len(clause) >= 4 else []
        runs += [clause[i : i + QUOTED_RUN] for i in range(len(clause) - QUOTED_RUN + 1)]
        if any(f" {' '.join(run)} " in have for run in runs):
            found.append(description)
    return found


def argument_dumps(text: str, labels: Iterable[str]) -> list[str]:
    """Arguments listed as data: two or more `label value` items separated by semicolons, two or
    more `key: value` pairs, any `name=value`, or a JSON-like object (`{"order_id": "OR1001"}`)."""
    names = sorted({label.replace("_", " ").casefold() for label in labels}, key=len, reverse=True)
    found = [m.group(0) for m in _COLON_PAIRS.finditer(text)]
    found += [m.group(0) for m in _OBJECT.finditer(text)]
    found += [m.group(0) for m in _ASSIGNMENTS.finditer(_OBJECT.sub(" ", text))]
    if names:
        item = rf"(?:the )?(?:{'|'.join(map(re.escape, names))}) [^;]+"
        found += [m.group(0) for m in re.finditer(rf"{item}(?:; {item})+", text.casefold())]
    return found


def quoted_values(text: str, id_formats: Iterable[tuple[str, int]], values: Iterable[str] = ()) -> list[str]:
    """What an instruction quotes that the agent is to find: ids in one of the world's formats
    (`prefix` and `digits`: "OR1001"), wherever they stand, and the `values` (gold arguments the
    user does not know) in quotes, or anywhere when they hold a digit (a code, a date)."""
    found: list[str] = []
    for prefix, digits in id_formats:
        found += re.findall(rf"(?<![\w#]){re.escape(prefix)}\d{{{digits}}}(?!\w)", text)
    folded = text.casefold()
    for value in dict.fromkeys(v for v in values if len(v) >= 3):
        quoted = any(q.format(value).casefold() in folded for q in _QUOTES)
        coded = any(c.isdigit() for c in value) and re.search(rf"(?<!\w){re.escape(value.casefold())}(?!\w)", folded)
        if (quoted or coded) and value not in found:
            found.append(value)
    return found


def finds_out(task: Task) -> bool:
    """Whether `task` is to make the agent find things out: a generated kind of `FINDING_KINDS`."""
    return bool(task.tags) and task.tags[0] in FINDING_KINDS


def unknown_values(task: Task) -> list[str]:
    """The gold's string arguments (not paging) the simulated user does not know."""
    known = {str(v).casefold() for v in leaves(task.user.knows)}
    said = [str(v) for a in task.gold for k, v in a.args.items() if k not in PAGING_ARGS and isinstance(v, str)]
    return [v for v in said if v.casefold() not in known]


def is_filler(text: str) -> bool:
    """Whether a text is Faker's filler: its `sentence` or `text` (capitalised sentences of at least
    `MIN_FILLER_WORDS` lorem words: "Room institution east personal water."), or a `catch_phrase` or
    `bs` (one word from each of their lists: "Synergized bottom-line hierarchy"). Plain words in a
    person's order ("Weight check for the dog", "Get well soon") are not."""
    words = text.casefold().split()
    if _FAKER_SENTENCES.fullmatch(text.strip()):
        lorem = re.findall(r"[a-z]+", text.casefold())
        return len(lorem) >= MIN_FILLER_WORDS and all(w in _lorem() for w in lorem)
    return any(
        len(words) == len(lists)
        and all(w in {x.casefold() for x in group} for w, group in zip(words, lists, strict=True))
        for lists in (Company.catch_phrase_words, Company.bsWords)
    )


def constants(text: str) -> Iterator[str]:
    """The values in a text that one world's data should not share with another's: e-mail
    addresses and phone numbers."""
    yield from (m.group(0).casefold() for m in _EMAIL.finditer(text))
    yield from (re.sub(r"\D", "", m.group(0)) for m in _PHONE.finditer(text))


# -- a world ------------------------------------------------------------------------------------


def wording_hits(compiled: CompiledWorld, tasks: list[Task], episode: Episode) -> list[Hit]:
    """Every hit in a world's task instructions, tool descriptions, policy and seeded text."""
    hits: list[Hit] = []
    for task in tasks:
        hits += instruction_hits(compiled, task)
    for action in compiled.spec.actions:
        hits += [Hit("article", f"tool {action.name}", t) for t in wrong_articles(action.description)]
    hits += [Hit("article", "policy", t) for t in wrong_articles(compiled.world.policy)]
    for entity, model in compiled.models.items():
        for name, f in model.spec.fields.items():
            if f.type != "str" or f.pattern:
                continue
            for row in episode.query(f'SELECT DISTINCT "{name}" AS v FROM "{model.table.name}"'):
                value = row["v"]
                if isinstance(value, str) and is_filler(value):
                    hits.append(Hit("lorem", f"{entity}.{name}", value))
                elif isinstance(value, str):
                    hits += [Hit("article", f"{entity}.{name}", t) for t in wrong_articles(value)]
    return hits


def instruction_hits(compiled: CompiledWorld, task: Task) -> list[Hit]:
    """The hits in one task's instruction; argument dumps and quoted values are enforced when the
    task is to make the agent find things out (`finds_out`)."""
    spec = compiled.spec
    columns = {n for e in spec.entities.values() for n in e.fields}
    labels = columns | {spec.label_of(e).lower() for e in spec.entities} | {c.removesuffix("_id") for c in columns}
    descriptions = [a.description for a in spec.actions]
    formats = [(e.id.prefix, e.id.digits) for e in spec.entities.values()]
    text, finding = task.instruction, finds_out(task)
    hits = [Hit("article", task.id, t) for t in wrong_articles(text)]
    hits += [Hit("column_phrase", task.id, t) for t in column_phrases(text, columns)]
    hits += [Hit("description_quoted", task.id, t) for t in quoted_descriptions(text, descriptions)]
    hits += [Hit("argument_dump", task.id, t, finding) for t in argument_dumps(text, labels)]
    if finding:
        hits += [Hit("quoted_value", task.id, t, True) for t in quoted_values(text, formats, unknown_values(task))]
    return hits


def candidate_problems(compiled: CompiledWorld, task: Task) -> list[str]:
    """What the lint refuses in a generated candidate's instruction (`wording_problems`)."""
    return wording_problems(instruction_hits(compiled, task))


def wording_problems(hits: list[Hit]) -> list[str]:
    """The acceptance failures of a world's hits: one line per enforced hit."""
    return [f"{h.where}: {h.kind.replace('_', ' ')}: {h.text!r}" for h in hits if h.enforced or h.kind in ENFORCED]


def repeated_constants(worlds: dict[str, list[str]], least: int = 2) -> dict[str, list[str]]:
    """The constants (e-mails, phone numbers) found in the texts of at least `least` worlds, with
    those worlds: a generator that draws the same value for every world."""
    seen: dict[str, set[str]] = defaultdict(set)
    for world, texts in worlds.items():
        for text in texts:
            for value in constants(text):
                seen[value].add(world)
    return {value: sorted(found) for value, found in sorted(seen.items()) if len(found) >= least}


def counts(hits: Iterable[Hit]) -> dict[str, int]:
    """Hits per kind, every kind listed."""
    found: dict[str, Any] = dict.fromkeys(KINDS, 0)
    for hit in hits:
        found[hit.kind] += 1
    return found
