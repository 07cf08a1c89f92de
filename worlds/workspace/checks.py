"""Custom rubric checks for workspace tasks: what the built-in checks cannot say without knowing
the ids an agent's run happened to draw (a new message's id, a new event's id), or without a join
("the file is shared with exactly the people invited to the meeting").

Each is called as `fn(ctx, **params)` with a `mcpsim.grading.GradingContext` and returns
`(passed, reason)`. They read the episode's final rows and its net changes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from mcpsim.grading import GradingContext, grade_answer
from mcpsim.tasks import DateFact, Fact, TimeFact

from . import world
from .recurrence import event_rule, expand
from .tables import Event

OWNER = "maya.chen@larkspurlabs.com"


def _inserted(ctx: GradingContext, table: str) -> list[dict[str, Any]]:
    """Rows of `table` this episode created (and did not delete again)."""
    return [c.after for (name, _), c in ctx.changes.items() if name == table and c.before is None and c.after]


def _mentions(text: str, phrases: list[str]) -> bool:
    normal = " ".join(text.lower().split())
    return any(" ".join(p.lower().split()) in normal for p in phrases)


def _emails(values: list[str] | None) -> set[str] | None:
    return None if values is None else {v.strip().lower() for v in values}


@world.check("message_sent")
def message_sent(
    ctx: GradingContext,
    to: list[str],
    cc: list[str] | None = None,
    thread_id: str | None = None,
    forwarded_from: str | None = None,
    attachments: list[str] | None = None,
    body_mentions: list[list[str]] | None = None,
    subject_mentions: list[str] | None = None,
    count: int = 1,
) -> tuple[bool, str]:
    """Exactly `count` messages sent by the owner in this episode (in `thread_id`, or forwarding
    `forwarded_from`, when given), and one of them goes to exactly `to` (and `cc`, when given;
    never bcc unless listed), carries exactly `attachments` (when given), and its text mentions
    one phrase of each group of `body_mentions` (case-insensitive)."""
    sent = [m for m in _inserted(ctx, "messages") if m["from_email"] == OWNER]
    if thread_id is not None:
        sent = [m for m in sent if m["thread_id"] == thread_id]
    if forwarded_from is not None:
        sent = [m for m in sent if m["forwarded_from"] == forwarded_from]
    where = f" in thread {thread_id}" if thread_id else f" forwarding {forwarded_from}" if forwarded_from else ""
    if len(sent) != count:
        return False, f"{len(sent)} message(s) sent{where}, expected {count}"
    problems = []
    for message in sent:
        rcpts = ctx.episode.select("message_recipients", {"message_id": message["id"]})
        got = {kind: {r["email"] for r in rcpts if r["kind"] == kind} for kind in ("to", "cc", "bcc")}
        files = {a["file_id"] for a in ctx.episode.select("message_attachments", {"message_id": message["id"]})}
        wrong = []
        if got["to"] != _emails(to):
            wrong.append(f"to {sorted(got['to'])}")
        if cc is not None and got["cc"] != _emails(cc):
            wrong.append(f"cc {sorted(got['cc'])}")
        if got["bcc"]:
            wrong.append(f"bcc {sorted(got['bcc'])}")
        if attachments is not None and files != set(attachments):
            wrong.append(f"attachments {sorted(files)}")
        for group in body_mentions or []:
            if not _mentions(message["body"], group):
                wrong.append(f"text mentions none of {group}")
        if subject_mentions and not _mentions(message["subject"], subject_mentions):
            wrong.append(f"subject {message['subject']!r} mentions none of {subject_mentions}")
        if not wrong:
            return True, f"message {message['id']}{where} goes to the right people with the right content"
        problems.append(f"{message['id']}: " + ", ".join(wrong))
    return False, "; ".join(problems)


@world.check("event_scheduled")
def event_scheduled(
    ctx: GradingContext,
    title_mentions: list[str],
    start_utc: str,
    end_utc: str,
    attendees: list[str],
    optional_attendees: list[str] | None = None,
    recur_freq: str = "none",
    recur_count: int | None = None,
    occurrences_utc: list[str] | None = None,
) -> tuple[bool, str]:
    """Exactly one event created in this episode, organized by the owner, confirmed, whose title
    mentions one of `title_mentions`, at these UTC times, inviting exactly `attendees` as
    required (and `optional_attendees` as optional), with this recurrence."""
    created = [e for e in _inserted(ctx, "events") if e["organizer_email"] == OWNER]
    if len(created) != 1:
        return False, f"{len(created)} events created, expected 1"
    event = created[0]
    wrong = []
    if not _mentions(event["title"], title_mentions):
        wrong.append(f"title {event['title']!r}")
    if (event["start_utc"], event["end_utc"]) != (start_utc, end_utc):
        wrong.append(f"time {event['start_utc']} - {event['end_utc']}")
    if event["status"] != "confirmed":
        wrong.append(f"status {event['status']}")
    rows = ctx.episode.select("event_attendees", {"event_id": event["id"]})
    required = {r["email"] for r in rows if not r["optional"]}
    optional = {r["email"] for r in rows if r["optional"]}
    if required != _emails(attendees):
        wrong.append(f"required attendees {sorted(required)}")
    if optional != (_emails(optional_attendees) or set()):
        wrong.append(f"optional attendees {sorted(optional)}")
    if event["recur_freq"] != recur_freq or (recur_count is not None and event["recur_count"] != recur_count):
        wrong.append(f"recurrence {event['recur_freq']} x{event['recur_count']}")
    if occurrences_utc is not None:
        start, end, tz, rule = event_rule(Event(**event))
        got = [o.start.isoformat(timespec="seconds") for o in expand(start, end, tz, rule)]
        if got != occurrences_utc:
            wrong.append(f"occurrences {got}")
    if wrong:
        return False, f"event {event['id']}: " + "; ".join(wrong)
    return True, f"event {event['id']} '{event['title']}' is scheduled as asked"


@world.check("file_access_exactly")
def file_access_exactly(
    ctx: GradingContext,
    file_id: str,
    grants: dict[str, str] | None = None,
    event_title_mentions: list[str] | None = None,
    role: str | None = None,
    link_sharing: str = "off",
) -> tuple[bool, str]:
    """The file's grants are exactly `grants` ({email: role}), or, with `event_title_mentions`,
    exactly the invitees of the event the owner created in this episode, each with `role`; and
    link sharing is `link_sharing`. "Share with exactly the invitees" allows no extra grant."""
    files = ctx.episode.select("files", {"id": file_id})
    if not files:
        return False, f"file {file_id} does not exist"
    if event_title_mentions is not None:
        created = [
            e
            for e in _inserted(ctx, "events")
            if e["organizer_email"] == OWNER and _mentions(e["title"], event_title_mentions)
        ]
        if len(created) != 1:
            return False, f"{len(created)} new events mention {event_title_mentions}, expected 1"
        invitees = [r["email"] for r in ctx.episode.select("event_attendees", {"event_id": created[0]["id"]})]
        grants = {email: role or "viewer" for email in invitees}
    expected = {k.lower(): v for k, v in (grants or {}).items()}
    actual = {r["email"]: r["role"] for r in ctx.episode.select("file_permissions", {"file_id": file_id})}
    problems = []
    extra = sorted(set(actual) - set(expected))
    missing = sorted(set(expected) - set(actual))
    wrong_role = sorted(e for e in set(actual) & set(expected) if actual[e] != expected[e])
    if extra:
        problems.append(f"extra grants for {extra}")
    if missing:
        problems.append(f"no grant for {missing}")
    if wrong_role:
        problems.append("wrong role for " + ", ".join(f"{e} ({actual[e]}, expected {expected[e]})" for e in wrong_role))
    if files[0]["link_sharing"] != link_sharing:
        problems.append(f"link sharing is {files[0]['link_sharing']}, expected {link_sharing}")
    if problems:
        return False, "; ".join(problems)
    return True, f"{file_id} is shared with exactly {sorted(expected.items())}, link sharing {link_sharing}"


@world.check("answer_gives_event_time")
def answer_gives_event_time(
    ctx: GradingContext, title_mentions: list[str], time_zone: str = "Europe/London"
) -> tuple[bool, str]:
    """The final answer gives the local day and start time of the event the owner created in this
    episode (the time only the run decides: the first free slot), graded as typed date and time
    facts: any common format, not under negation, not hedged or buried among other times."""
    created = [e for e in _inserted(ctx, "events") if _mentions(e["title"], title_mentions)]
    if len(created) != 1:
        return False, f"{len(created)} new events mention {title_mentions}"
    local = datetime.fromisoformat(created[0]["start_utc"]).astimezone(ZoneInfo(time_zone))
    facts: list[Fact] = [DateFact(date=f"{local:%Y-%m-%d}"), TimeFact(time=f"{local:%H:%M}")]
    passed, reason = grade_answer(facts, [], ctx.answer)
    if passed:
        return True, f"the answer gives the start, {local:%a %d %b %H:%M} ({time_zone})"
    return False, f"the answer does not give the start, {local:%a %d %b %H:%M} ({time_zone}): {reason}"
