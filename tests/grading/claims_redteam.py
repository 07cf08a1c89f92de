"""A red team for the answer grader: for every task with answer facts, correct answers in other
words (paraphrases, reordered, other formats and abbreviations, itemisations, values of other
subjects beside the facts, a corrected wrong value) and wrong ones of each cheap class (a denial
or correction after the value, a question, a hedge, guesses spread over sentences and questions,
subjects swapped between two facts of one kind, a value restated with another).

    python -m tests.grading.claims_redteam [WORLD ...] [--catalog DIR] [--show N]

prints, per world and in all, the share of correct answers refused and of wrong answers passed
(`tests/grading/test_claims_redteam.py` holds the hand-built worlds to the issue's targets).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from mcpsim import tasks
from mcpsim.grading._answers import alternatives, parse
from mcpsim.tasks import Fact, Task, load_task_file, load_tasks, state_fact

WORLDS = ("retail", "airline", "bank", "workspace")
TYPED = (
    tasks.MoneyFact,
    tasks.DateFact,
    tasks.TimeFact,
    tasks.DurationFact,
    tasks.IdFact,
    tasks.CountFact,
    tasks.NumberFact,
)
Grader = Callable[[Task, str], bool]


@dataclass(frozen=True)
class Case:
    world: str
    task: str
    correct: bool
    cls: str
    answer: str


def references(task: Task) -> list[str]:
    """The task's own words on the answer, as `answer_facts` passes them: requirement, then wants."""
    return [*(c.requirement for c in task.rubric if c.type == "answer_facts"), task.user.wants or ""]


def reference(task: Task) -> str:
    requirements = [c.requirement for c in task.rubric if c.type == "answer_facts"]
    return "\n".join([*requirements, task.user.wants or ""])


# -- values, in several forms -----------------------------------------------------------------------


def _money(value: float, form: int = 0) -> str:
    whole = float(value).is_integer()
    plain = f"{value:,.0f}" if whole and form == 1 else f"{value:,.2f}"
    return (f"${plain}", f"{value:,.2f} dollars", f"USD {value:,.2f}", f"${plain}")[form % 4]


_MONTH_ABBR = ("Jan.", "Feb.", "Mar.", "Apr.", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")
_MONTH_SHORT = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _date(day: date, form: int = 0) -> str:
    forms = (
        f"{day:%B} {day.day}, {day.year}",
        f"{_MONTH_ABBR[day.month - 1]} {day.day}, {day.year}",
        f"{day.day} {_MONTH_SHORT[day.month - 1]} {day.year}",
        f"{day:%a}, {_MONTH_SHORT[day.month - 1]} {day.day}, {day.year}",
        day.isoformat(),
        f"{day.month}/{day.day}/{day.year}",
    )
    return forms[form % len(forms)]


def _time(minutes: int, form: int = 0) -> str:
    minutes %= 24 * 60
    hour, minute = divmod(minutes, 60)
    half = "AM" if hour < 12 else "PM"
    twelve = hour % 12 or 12
    forms = (f"{hour:02d}:{minute:02d}", f"{twelve}:{minute:02d} {half}", f"{twelve}:{minute:02d}{half.lower()}")
    return forms[form % len(forms)]


def render(fact: Fact, form: int = 0, shift: int = 0) -> str:
    """The fact's value in form `form`, moved `shift` steps away for a decoy (0: the true value)."""
    match fact:
        case tasks.MoneyFact(money=money):
            return _money(round(money + shift * (5 if money >= 20 else 1.25), 2), form)
        case tasks.NumberFact(number=number):
            return f"{number + shift * 3:g}"
        case tasks.CountFact(count=count, noun=noun):
            n = count + shift
            return f"{n} {noun}{'' if n == 1 else 's'}" if noun else str(n)
        case tasks.DateFact(date=day):
            return _date(date.fromisoformat(day) + timedelta(days=shift), form)
        case tasks.TimeFact(time=clock):
            hour, minute = (int(p) for p in clock.split(":"))
            return _time(hour * 60 + minute + shift * 60, form)
        case tasks.DurationFact(duration=duration, unit=unit):
            amount = duration + shift * (30 if unit == "minutes" else 1)
            if unit == "minutes" and form % 2 and amount % 60 == 0:
                return f"{amount / 60:g} hours"
            return f"{amount:g} {unit}"
        case tasks.IdFact(id=ident):
            if not shift:
                return ident.lstrip("#") if form % 2 else ident
            last = ident[-1]
            swap = str((int(last) + shift) % 10) if last.isdigit() else "X" if last != "X" else "Y"
            return ident[:-1] + swap
    return state_fact(fact)


# -- what a value is about, as the task says it ---------------------------------------------------

_FRAME = re.compile(
    r"^(?:the\s+)?agent\s+(?:\w+\s+)?(?:told|said|stated|gave|listed|named|explained|mentioned|confirmed)"
    r"(?:\s+(?:the\s+)?(?:customer|user))?(?:\s+that)?\s*",
    re.IGNORECASE,
)
_TRAILING = re.compile(
    r"\s+(?:is|are|was|were|will\s+be|would\s+be|comes?\s+to|costs?|of|at|on|by|in|until|worth|now|be|for)$",
    re.IGNORECASE,
)
_DEFAULT = {
    "money": "the amount",
    "date": "the date",
    "time": "the time",
    "duration": "the wait",
    "id": "the reference",
}
_NOT_SUBJECTS = {
    *("would", "will", "should", "can", "said", "gave", "told", "named", "stated", "set", "that", "it"),
    *("until", "when", "which", "where", "if", "they", "he", "she", "we", "you", "i"),
}


def subject_phrase(task: Task, fact: Fact) -> str:
    """The words the task's requirement says just before the fact's value (`the refund`), else a
    plain noun for its kind."""
    alts = alternatives(fact)
    parsed = parse(reference(task))
    for mention in parsed.mentions:
        if not any(alt.accepts(mention) for alt in alts):
            continue
        before = re.split(r"[,.;:()\n]|\band\b|\bwith\b|\bthat\b", parsed.text[: mention.start])[-1].strip()
        before = _FRAME.sub("", before).strip()
        while _TRAILING.search(before):
            before = _TRAILING.sub("", before).strip()
        words = before.split()
        lowered = {w.lower() for w in words}
        content = [w for w in words if w.lower() not in ("the", "your", "his", "her", "a", "an", "its", "their")]
        if (
            content
            and len(words) <= 4
            and all(re.fullmatch(r"[A-Za-z'-]+", w) for w in words)
            and not lowered & _NOT_SUBJECTS
        ):
            if words[0].lower() in ("the", "your", "his", "her", "a", "an", "its", "their"):
                return before
            return f"the {before}"
        break
    return _DEFAULT.get(alts[0].kind, "it")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- correct answers ----------------------------------------------------------------------------------


def _said(task: Task, fact: Fact, form: int = 0) -> str:
    if isinstance(fact, tasks.CountFact):
        return f"There are {render(fact)}."
    if isinstance(fact, TYPED):
        return f"{_cap(subject_phrase(task, fact))} is {render(fact, form)}."
    if isinstance(fact, tasks.NameFact):
        return f"That is {fact.name}."
    phrase = fact if isinstance(fact, str) else fact.phrase if isinstance(fact, tasks.PhraseFact) else fact.any[0]
    return f"To be clear: {phrase}."


def _labelled(task: Task, fact: Fact, colon: str = ":") -> str:
    if isinstance(fact, TYPED) and not isinstance(fact, tasks.CountFact):
        return f"{_cap(subject_phrase(task, fact))}{colon} {render(fact, 1)}"
    return _said(task, fact).rstrip(".")


def _cell(task: Task, fact: Fact) -> str:
    if isinstance(fact, TYPED) and not isinstance(fact, tasks.CountFact):
        return f"{_cap(subject_phrase(task, fact))} | {render(fact)}"
    return f"Note | {_said(task, fact).rstrip('.')}"


def _value_first(task: Task, fact: Fact) -> str:
    if isinstance(fact, TYPED) and not isinstance(fact, tasks.CountFact):
        return f"{_cap(render(fact, 1))} is {subject_phrase(task, fact)}."
    return _said(task, fact)


def _from_requirement(task: Task) -> str | None:
    requirements = [c.requirement for c in task.rubric if c.type == "answer_facts"]
    if not requirements:
        return None
    text = _FRAME.sub("", requirements[0]).strip()
    text = re.sub(r"\bthe (?:customer|user)\b", "you", text)
    text = re.sub(r"\b(?:he|she)\b", "you", text)
    return _cap(text)


def _present(fact: Fact, text: str) -> bool:
    alts = alternatives(fact)
    if alts[0].kind == "phrase":
        phrase = fact if isinstance(fact, str) else getattr(fact, "phrase", None) or fact.any[0]  # type: ignore[union-attr]
        return str(phrase).lower() in text.lower()
    return any(alt.accepts(m) for alt in alts for m in parse(text).mentions) or (
        alts[0].kind == "id" and str(alts[0].value) in text.lower()
    )


def correct_answers(task: Task) -> Iterator[tuple[str, str]]:
    facts = list(task.answer)
    yield "oracle", task.oracle_answer()
    for alt in task.alternatives:
        if alt.answer:
            yield "hand-written", alt.answer
    derived = _from_requirement(task)
    if derived and all(_present(f, derived) for f in facts):
        yield "paraphrase", derived
    yield "reordered", " ".join(_said(task, f) for f in reversed(facts))
    yield "formats", " ".join(_said(task, f, form=i + 1) for i, f in enumerate(facts))
    yield "abbreviated", " ".join(_said(task, f, form=3) for f in facts)
    yield "question at the end", " ".join(_said(task, f) for f in facts) + " Is there anything else I can help with?"
    yield "greeting", "Hi! I've checked for you. " + " ".join(_said(task, f) for f in facts) + " Have a great day!"
    yield "bullets", "Here's the summary:\n" + "\n".join(f"- {_labelled(task, f)}" for f in facts)
    yield "bold labels", "\n".join(f"**{_labelled(task, f, ':**')}" for f in facts)
    yield "table", "| What | Value |\n|---|---|\n" + "\n".join(f"| {_cell(task, f)} |" for f in facts)
    yield "value first", " ".join(_value_first(task, f) for f in facts)
    yield (
        "courteous",
        "Thanks for waiting. "
        + " ".join(f"I can confirm that {_said(task, f)[0].lower()}{_said(task, f)[1:]}" for f in facts),
    )
    for i, fact in enumerate(facts):
        others = " ".join(_said(task, f) for j, f in enumerate(facts) if j != i)
        subject = _cap(subject_phrase(task, fact))
        if isinstance(fact, tasks.MoneyFact) and fact.money >= 2:
            a = round(fact.money * 0.6, 2)
            b = round(fact.money - a, 2)
            yield (
                "itemised",
                f"{subject} is {_money(fact.money)}: {_money(a)} for the items plus {_money(b)} in fees. {others}",
            )
            yield "sum", f"{_money(a)} + {_money(b)} = {_money(fact.money)}, which is {subject.lower()}. {others}"
            yield (
                "other order",
                f"{subject} is {_money(fact.money)}. Your other order, #W1234567, came to "
                f"{render(fact, 0, 3)}. {others}",
            )
            yield "corrected", f"{subject} is not {render(fact, 0, 1)} but {_money(fact.money)}. {others}"
            yield (
                "rather than",
                f"{subject} is {_money(fact.money)}, rather than the {render(fact, 0, 1)} you were quoted. {others}",
            )
            if re.search(r"refund|total|balance|cost|price|fee|charge|difference|paid|owe", subject, re.IGNORECASE):
                yield "no currency marker", f"{subject} is {fact.money:.2f}. {others}"
        elif isinstance(fact, tasks.TimeFact):
            hour, minute = (int(p) for p in fact.time.split(":"))
            other = _time(hour * 60 + minute + 330, 1)
            yield "other time zone", f"{subject} is {_time(hour * 60 + minute, 1)} ET ({other} IST). {others}"
            yield "corrected", f"{subject} is not {render(fact, 1, 1)} but {render(fact, 1)}. {others}"
        elif isinstance(fact, tasks.DateFact):
            yield "corrected", f"{subject} is {render(fact, 1)}, not {render(fact, 1, 1)}. {others}"
            yield (
                "other record",
                f"{subject} is {render(fact, 0)}. The one before it was on {render(fact, 0, -14)}. {others}",
            )


# -- wrong answers ------------------------------------------------------------------------------------


def _wrong_forms(subject: str, v: str, d1: str, d2: str) -> Iterator[tuple[str, str]]:
    s, S = subject, _cap(subject)
    yield "denied after", f"{S} is {v}, but that is incorrect."
    yield "denied after", f"{v} is wrong."
    yield "denied after", f"{S} is {v}. That's not right."
    yield "denied after", f"The {v} figure isn't correct."
    yield "correction", f"{S} is not {v} but {d1}."
    yield "correction", f"{S} is {d1} rather than {v}."
    yield "correction", f"{S} is {d1} instead of {v}."
    yield "correction", f"{S} is {v}, sorry, I mean {d1}."
    yield "correction", f"{S} is {v}. Actually, it's {d1}."
    yield "question", f"Is {s} {v}?"
    yield "question", f"{S} is {v}, right?"
    yield "question", f"Could it be {v}?"
    yield "hedge", f"{S} might be {v}."
    yield "hedge", f"Maybe {v}."
    yield "hedge", f"I think it could be {v}."
    yield "hedge", f"{S} is either {v} or {d1}."
    yield "hedge", f"{S} is {v}, I think."
    yield "hedge", f"{S} is probably {v}."
    yield "guesses", f"Is it {v}? Or {d1}? Perhaps {d2}."
    yield "guesses", f"Is it {d1}? Or {v}? Perhaps {d2}."
    yield "guesses", f"{S} is {v}. Or {d1}. Or {d2}."
    yield "guesses", f"{v}. {d1}. {d2}."
    yield "guesses", f"{S} is {d1}. {S} is {v}."
    yield "guesses", f"{S} is {v}. It could also be {d1}."
    yield "guesses", f"{S}: {d1}? {v}?"
    yield "guesses", f"{S} is {v}. Then again, {d1} is possible."
    yield "guesses", f"It's {d1}. Or maybe it's {v}. Hard to say."
    yield "guesses", f"{S} is {v}... or possibly {d1}."
    yield "guesses", f"{S} should be {v}, though it may be {d1}."
    yield "guesses", f"{S} is {v}, unless it's {d1}."
    yield "guesses", f"{S} is {v}. Hmm, or {d1}."
    yield "guesses", f"{S} is {v} (or {d1})."
    yield "guesses", f"{S}: {v}; {d1}; {d2}."
    yield "guesses", f"{S} is {v}! {S} is {d1}!"
    yield "guesses", f"{S} is {v}, {d1} or {d2}."
    yield "guesses", f"{S} is {v}. Although it might also be {d1}."
    yield "guesses", f"- {S}: {v}\n- {S}: {d1}\n"
    yield "hedge", f"I'd guess {v}."
    yield "hedge", f"{S}: {v} (unconfirmed)."
    yield "hedge", f"{S} is {v}, if I'm not mistaken."
    yield "hedge", f"Not sure, but {s} is {v}."
    yield "denied after", f"{S} is {v} - no, that's wrong, it's {d1}."
    yield "denied after", f"{S}: {v} (incorrect)."
    yield "denied after", f"Ignore the {v} I mentioned."
    yield "correction", f"{S} was {v} but it's been corrected to {d1}."
    yield "correction", f"{S} is definitely not {v}."
    yield "correction", f"{S} isn't {v}, it's {d1}."
    yield "question", f"{v}? No."
    yield "question", f"Would {s} be {v}?"


def wrong_answers(task: Task) -> Iterator[tuple[str, str]]:
    facts = list(task.answer)
    for i, fact in enumerate(facts):
        others = " ".join(_said(task, f) for j, f in enumerate(facts) if j != i)
        if isinstance(fact, TYPED):
            subject = subject_phrase(task, fact)
            v, d1, d2 = render(fact), render(fact, 0, 1), render(fact, 0, 2)
            forms = _wrong_forms(subject, v, d1, d2)
        else:
            phrase = fact if isinstance(fact, str) else getattr(fact, "phrase", None) or getattr(fact, "name", None)
            phrase = phrase or fact.any[0]  # type: ignore[union-attr]
            rivals = [str(f) for f in task.forbidden if isinstance(f, str)] + [
                f.phrase for f in task.forbidden if isinstance(f, tasks.PhraseFact)
            ]
            forms = iter(
                [
                    ("question", f"Is it {phrase}?"),
                    ("hedge", f"It might be {phrase}."),
                    ("hedge", f"Perhaps {phrase}, I'm not sure."),
                    ("denied after", f"I said {phrase} earlier; that is wrong."),
                    *(
                        [
                            ("guesses", f"Is it {phrase}? Or {rivals[0]}?"),
                            ("guesses", f"It's {phrase}, or maybe {rivals[0]}."),
                        ]
                        if rivals
                        else []
                    ),
                ]
            )
        if not isinstance(fact, TYPED) and _present(fact, others):
            continue  # the other facts' sentences state it already
        for cls, text in forms:
            yield cls, f"{text} {others}".strip()
    yield from _swapped(task)


def _swapped(task: Task) -> Iterator[tuple[str, str]]:
    """The requirement's own sentence with two values of one kind exchanged."""
    derived = _from_requirement(task)
    if not derived:
        return
    parsed = parse(derived)
    spans = []
    for fact in task.answer:
        if not isinstance(fact, TYPED):
            continue
        alts = alternatives(fact)
        for m in parsed.mentions:
            if any(alt.accepts(m) for alt in alts):
                spans.append((alts[0].kind, m.start, m.end, fact))
                break
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            if spans[a][0] == spans[b][0]:
                (_, s1, e1, _), (_, s2, e2, _) = sorted([spans[a], spans[b]], key=lambda x: x[1])
                text = parsed.text
                yield "swapped", text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:]


# -- running ------------------------------------------------------------------------------------------


def cases(world: str, of_world: list[Task]) -> list[Case]:
    found = []
    for task in of_world:
        if not task.answer:
            continue
        found += [Case(world, task.id, True, cls, text) for cls, text in correct_answers(task)]
        found += [Case(world, task.id, False, cls, text) for cls, text in wrong_answers(task)]
    return found


def new_grader(task: Task, answer: str) -> bool:
    from mcpsim.grading._answers import grade_answer

    return grade_answer(task.answer, task.forbidden, answer, reference=references(task))[0]


def rates(results: list[tuple[Case, bool]]) -> tuple[float, float, int, int]:
    correct = [passed for case, passed in results if case.correct]
    wrong = [passed for case, passed in results if not case.correct]
    refused = 1 - sum(correct) / len(correct) if correct else 0.0
    passed = sum(wrong) / len(wrong) if wrong else 0.0
    return refused, passed, len(correct), len(wrong)


def run(
    worlds: dict[str, list[Task]], grader: Grader = new_grader, show: int = 0
) -> dict[str, tuple[float, float, int, int]]:
    by_world: dict[str, tuple[float, float, int, int]] = {}
    everything: list[tuple[Case, bool]] = []
    for world, of_world in worlds.items():
        index = {t.id: t for t in of_world}
        results = [(case, grader(index[case.task], case.answer)) for case in cases(world, of_world)]
        everything += results
        by_world[world] = rates(results)
        if show:
            bad = [c for c, ok in results if ok != c.correct]
            for case in bad[:show]:
                print(f"  {'REFUSED' if case.correct else 'PASSED '} {world}/{case.task} [{case.cls}] {case.answer!r}")
            by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for case, ok in results:
                by_class[f"{'correct' if case.correct else 'wrong'}:{case.cls}"][0] += ok != case.correct
                by_class[f"{'correct' if case.correct else 'wrong'}:{case.cls}"][1] += 1
            print("  ", {k: f"{v[0]}/{v[1]}" for k, v in sorted(by_class.items()) if v[0]})
    by_world["all"] = rates(everything)
    return by_world


def load(worlds: list[str], worlds_dir: Path | None) -> dict[str, list[Task]]:
    if worlds_dir is None:
        return {w: load_tasks(w).tasks for w in worlds}
    found = {}
    for path in sorted((worlds_dir / "tasks").glob("*.yaml")):  # a catalogue: tasks/NAME.yaml
        if not worlds or path.stem in worlds:
            found[path.stem] = list(load_task_file(path).tasks)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("worlds", nargs="*")
    parser.add_argument("--catalog", type=Path, help="a catalogue's output folder (`mcpsim gen --catalog --out`)")
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args(argv)
    worlds = load(args.worlds or ([] if args.catalog else list(WORLDS)), args.catalog)
    for world, (refused, passed, n_correct, n_wrong) in run(worlds, show=args.show).items():
        print(
            f"{world:>12}: correct refused {refused:6.1%} of {n_correct:4d}; wrong passed {passed:6.1%} of {n_wrong:4d}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
