"""Builds a fresh workspace as plain rows: the fixed story (`story.py`) first, so its ids are the
same at every scale for a given seed, then filler colleagues, contacts, files, mail threads and
events drawn from the seeded Faker and random source (`vocabulary.py`). The rows are
bulk-inserted at the end, table by table."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from typing import Any

from mcpsim.world import SeedContext

from ..recurrence import Rule, expand
from ..rules import DOMAIN, WEEKDAYS, iso, local_to_utc, zone
from ..tables import (
    Contact,
    Event,
    EventAttendee,
    EventException,
    File,
    FilePermission,
    Label,
    Message,
    MessageAttachment,
    MessageRecipient,
    Thread,
    ThreadLabel,
    User,
)
from .story import (
    COLLEAGUES,
    EVENTS,
    FILES,
    LABELS,
    OUTSIDERS,
    OWNER,
    PASSCODE,
    STORY_CONTACTS,
    THREADS,
    EventSpec,
    FileSpec,
    ThreadSpec,
)
from .vocabulary import (
    DEPARTMENTS,
    DOC_TYPES,
    EVENT_TITLES,
    EXTERNAL_LINES,
    EXTERNAL_SUBJECTS,
    FOLDERS,
    INTERNAL_LINES,
    INTERNAL_OPENERS,
    INTERNAL_SUBJECTS,
    NEWSLETTERS,
    PROJECTS,
    REPLIES,
    STARTS,
    ZONES,
)

Row = dict[str, Any]
COMPANY_SUFFIXES = {"and", "llc", "inc", "ltd", "plc", "group", "sons"}  # left out of a made-up company's domain


def at(local: str, tz: str) -> str:
    return iso(local_to_utc(local, zone(tz)))


# Every table the seed fills, each after the tables its rows refer to (attachments refer to files).
INSERT_ORDER: tuple[type, ...] = (
    User,
    Contact,
    Label,
    File,
    FilePermission,
    Thread,
    Message,
    MessageRecipient,
    MessageAttachment,
    ThreadLabel,
    Event,
    EventAttendee,
    EventException,
)


class Builder:
    def __init__(self, ctx: SeedContext) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.faker = ctx.faker
        self.now = ctx.now
        self.rows: dict[type, list[Row]] = {table: [] for table in INSERT_ORDER}
        self.emails: dict[str, str] = {}  # story key -> email
        self.names: dict[str, str] = {}  # email -> name
        self.users: list[Row] = []
        self.used_emails: set[str] = set()
        self.label_ids: dict[str, str] = {}
        self.file_ids: dict[str, str] = {}
        self.grants: dict[tuple[str, str], str] = {}  # (file id, email) -> role
        self.files: dict[str, Row] = {}
        self.files_by_owner: dict[str, list[Row]] = {}
        self.my_busy: list[tuple[datetime, datetime]] = []
        self.user_emails: list[str] = []
        self.user_index: dict[str, int] = {}
        self.contact_emails: set[str] = set()
        self.me = f"{OWNER.local_part}@{DOMAIN}"
        self.story_names = {w.lower() for p in [OWNER, *COLLEAGUES.values()] for w in p.name.split()} | {
            w.lower() for o in OUTSIDERS.values() for w in o.name.split()
        }

    # -- helpers -----------------------------------------------------------------------------------

    def add(self, table: type, row: Row) -> Row:
        self.rows[table].append(row)
        return row

    def user(
        self, name: str, email: str, title: str, department: str, tz: str, start: str, end: str, owner: bool = False
    ) -> Row:
        row = self.add(
            User,
            {
                "id": self.ctx.ids.new("user"),
                "email": email,
                "name": name,
                "title": title,
                "department": department,
                "time_zone": tz,
                "work_start": start,
                "work_end": end,
                "is_owner": owner,
                "passcode": PASSCODE if owner else None,
            },
        )
        self.used_emails.add(email)
        self.names[email] = name
        if not owner:
            self.users.append(row)
        return row

    def email_of(self, key: str) -> str:
        return self.me if key == "me" else self.emails[key]

    def grant(self, file_id: str, email: str, role: str, granted_by: str, when: str) -> None:
        if (file_id, email) in self.grants or self.files[file_id]["owner_email"] == email:
            return
        self.grants[(file_id, email)] = role
        self.add(
            FilePermission,
            {"file_id": file_id, "email": email, "role": role, "granted_by": granted_by, "granted_at": when},
        )

    def thread(
        self,
        subject: str,
        location: str,
        messages: list[dict[str, Any]],
        labels: list[str],
        before_trash: str | None = None,
        trashed_at: str | None = None,
    ) -> str:
        thread_id = self.ctx.ids.new("thread")
        messages.sort(key=lambda m: m["sent_at"])
        self.add(
            Thread,
            {
                "id": thread_id,
                "subject": subject,
                "location": location,
                "location_before_trash": before_trash,
                "trashed_at": trashed_at,
                "last_message_at": messages[-1]["sent_at"],
            },
        )
        previous = None
        for m in messages:
            message_id = self.ctx.ids.new("message")
            self.add(
                Message,
                {
                    "id": message_id,
                    "thread_id": thread_id,
                    "from_email": m["from"],
                    "from_name": self.names.get(m["from"], ""),
                    "subject": subject if previous is None else f"Re: {subject}",
                    "body": m["body"],
                    "sent_at": m["sent_at"],
                    "is_read": m.get("read", True),
                    "in_reply_to": previous,
                    "forwarded_from": None,
                },
            )
            for kind in ("to", "cc"):
                for email in m.get(kind, []):
                    self.add(
                        MessageRecipient,
                        {"message_id": message_id, "email": email, "name": self.names.get(email, ""), "kind": kind},
                    )
            for file_id in m.get("attachments", []):
                self.add(MessageAttachment, {"message_id": message_id, "file_id": file_id})
            previous = message_id
        for label in labels:
            self.add(ThreadLabel, {"thread_id": thread_id, "label_id": self.label_ids[label]})
        return thread_id

    def event(
        self,
        *,
        title: str,
        organizer: str,
        start: str,
        end: str,
        tz: str,
        attendees: list[tuple[str, str, bool]],
        freq: str = "none",
        weekdays: str = "",
        interval: int = 1,
        count: int | None = None,
        until: str | None = None,
        show_as: str = "busy",
        status: str = "confirmed",
        exceptions: tuple[str, ...] = (),
        location: str = "",
        description: str = "",
    ) -> str:
        zone_ = zone(tz)
        start_utc, end_utc = local_to_utc(start, zone_), local_to_utc(end, zone_)
        until_utc = local_to_utc(datetime.combine(date.fromisoformat(until), time(23, 59)), zone_) if until else None
        days = tuple(sorted(WEEKDAYS.index(d) for d in weekdays.split(",") if d))
        rule = Rule(freq, interval, days, count, until_utc)
        occurrences = list(expand(start_utc, end_utc, zone_, rule))
        event_id = self.ctx.ids.new("event")
        created = iso(min(start_utc, self.now) - timedelta(days=self.rng.randint(2, 20)))
        self.add(
            Event,
            {
                "id": event_id,
                "organizer_email": organizer,
                "title": title,
                "description": description,
                "location": location,
                "start_utc": iso(start_utc),
                "end_utc": iso(end_utc),
                "time_zone": tz,
                "recur_freq": freq,
                "recur_interval": interval,
                "recur_weekdays": weekdays,
                "recur_count": count,
                "recur_until": iso(until_utc) if until_utc else None,
                "series_end_utc": iso(occurrences[-1].end),
                "show_as": show_as,
                "status": status,
                "created_at": created,
                "updated_at": iso(self.now - timedelta(days=5)) if status == "cancelled" else created,
                "cancelled_at": iso(self.now - timedelta(days=5)) if status == "cancelled" else None,
            },
        )
        if (
            status == "confirmed"
            and show_as == "busy"
            and (organizer == self.me or any(e == self.me and r != "declined" for e, r, _ in attendees))
        ):
            cancelled = {date.fromisoformat(d) for d in exceptions}
            self.my_busy.extend(
                (o.start, o.end) for o in occurrences if o.start.astimezone(zone_).date() not in cancelled
            )
        for email, response, optional in attendees:
            self.add(
                EventAttendee,
                {
                    "event_id": event_id,
                    "email": email,
                    "name": self.names.get(email, ""),
                    "optional": optional,
                    "response": response,
                    "responded_at": None if response == "needs_action" else created,
                },
            )
        for day in exceptions:
            match = next(o for o in occurrences if o.start.astimezone(zone_).date() == date.fromisoformat(day))
            self.add(
                EventException,
                {"event_id": event_id, "occurrence_start_utc": iso(match.start), "cancelled_at": created},
            )
        return event_id

    # -- the story ---------------------------------------------------------------------------------

    def story(self) -> None:
        self.user(
            OWNER.name,
            self.me,
            OWNER.title,
            OWNER.department,
            OWNER.time_zone,
            OWNER.work_start,
            OWNER.work_end,
            owner=True,
        )
        for key, person in COLLEAGUES.items():
            email = f"{person.local_part}@{DOMAIN}"
            self.emails[key] = email
            self.user(
                person.name,
                email,
                person.title,
                person.department,
                person.time_zone,
                person.work_start,
                person.work_end,
            )
        for key, other in OUTSIDERS.items():
            self.emails[key] = other.email
            self.names[other.email] = other.name
            self.used_emails.add(other.email)
        for key, starred, notes in STORY_CONTACTS:
            email = self.emails[key]
            self.contact_emails.add(email)
            colleague = COLLEAGUES.get(key)
            outsider = OUTSIDERS.get(key)
            created = iso(self.now - timedelta(days=self.rng.randint(40, 700)))
            self.add(
                Contact,
                {
                    "id": self.ctx.ids.new("contact"),
                    "name": self.names[email],
                    "email": email,
                    "phone": outsider.phone if outsider else self.faker.numerify("+44 20 7946 0###"),
                    "company": outsider.company if outsider else "Larkspur Labs",
                    "job_title": outsider.title if outsider else (colleague.title if colleague else ""),
                    "notes": notes,
                    "starred": starred,
                    "created_at": created,
                    "updated_at": created,
                },
            )
        for name in LABELS:
            label_id = self.ctx.ids.new("label")
            self.label_ids[name] = label_id
            self.add(
                Label,
                {
                    "id": label_id,
                    "name": name,
                    "name_key": name.lower(),
                    "created_at": iso(self.now - timedelta(days=300)),
                },
            )
        for file_spec in FILES:
            self.story_file(file_spec)
        for thread_spec in THREADS:
            self.story_thread(thread_spec)
        for event_spec in EVENTS:
            self.story_event(event_spec)

    def story_file(self, spec: FileSpec) -> None:
        file_id = self.ctx.ids.new("file")
        self.file_ids[spec.key] = file_id
        owner_email = self.email_of(spec.owner)
        modified = at(spec.modified, "Europe/London")
        row = self.add(
            File,
            {
                "id": file_id,
                "name": spec.name,
                "kind": spec.kind,
                "folder": spec.folder,
                "owner_email": owner_email,
                "size_bytes": spec.size_kb * 1024 + self.rng.randint(0, 1023),
                "confidential": spec.confidential,
                "link_sharing": spec.link_sharing,
                "created_at": at(spec.created, "Europe/London"),
                "modified_at": modified,
            },
        )
        self.files[file_id] = row
        self.files_by_owner.setdefault(row["owner_email"], []).append(row)
        for key, role in spec.grants.items():
            self.grant(file_id, self.email_of(key), role, owner_email, modified)

    def story_thread(self, spec: ThreadSpec) -> None:
        messages = [
            {
                "from": self.email_of(m.sender),
                "to": [self.email_of(k) for k in m.to],
                "cc": [self.email_of(k) for k in m.cc],
                "sent_at": at(m.at, m.tz),
                "body": m.body,
                "read": m.read,
                "attachments": [self.file_ids[k] for k in m.attachments],
            }
            for m in spec.messages
        ]
        trashed = iso(self.now - timedelta(days=3)) if spec.location == "trash" else None
        self.thread(spec.subject, spec.location, messages, spec.labels, spec.location_before_trash, trashed)

    def story_event(self, spec: EventSpec) -> None:
        required = [(self.email_of(k), r, False) for k, r in spec.attendees.items() if k not in spec.optional]
        optional = [(self.email_of(k), r, True) for k, r in spec.attendees.items() if k in spec.optional]
        self.event(
            title=spec.title,
            organizer=self.email_of(spec.organizer),
            start=spec.start,
            end=spec.end,
            tz=spec.tz,
            attendees=required + optional,
            freq=spec.freq,
            weekdays=spec.weekdays,
            interval=spec.interval,
            count=spec.count,
            until=spec.until,
            show_as=spec.show_as,
            status=spec.status,
            exceptions=spec.exceptions,
            location=spec.location,
            description=spec.description,
        )

    # -- filler ------------------------------------------------------------------------------------

    def person_name(self) -> tuple[str, str]:
        while True:
            first, last = self.faker.first_name(), self.faker.last_name()
            if first.lower() not in self.story_names and last.lower() not in self.story_names:
                return first, last

    def unique_email(self, local: str, domain: str) -> str:
        local = re.sub(r"[^a-z0-9.]", "", local.lower())
        email, n = f"{local}@{domain}", 1
        while email in self.used_emails:
            n += 1
            email = f"{local}{n}@{domain}"
        self.used_emails.add(email)
        return email

    def filler(self) -> None:
        params = self.ctx.params
        colleagues = [self.colleague() for _ in range(params["colleagues"])]
        everyone = [u["email"] for u in self.users]
        companies = self.companies(max(4, params["contacts"] // 6))
        drawn = [self.contact(companies, colleagues) for _ in range(params["contacts"])]
        outsiders = [o for o in drawn if o is not None]
        for _ in range(params["files"]):
            self.filler_file(everyone, outsiders)
        for _ in range(params["threads"]):
            self.filler_thread(everyone, outsiders, companies)
        for _ in range(params["events"]):
            self.filler_event()

    def colleague(self) -> Row:
        first, last = self.person_name()
        department = self.rng.choice(sorted(DEPARTMENTS))
        tz = self.rng.choices([z for z, _ in ZONES], weights=[w for _, w in ZONES])[0]
        start = self.rng.choice(STARTS)
        hours, minutes = map(int, start.split(":"))
        end_minutes = hours * 60 + minutes + self.rng.choice([480, 510, 540])
        end = f"{end_minutes // 60:02d}:{end_minutes % 60:02d}"
        email = self.unique_email(f"{first}.{last}", DOMAIN)
        return self.user(f"{first} {last}", email, self.rng.choice(DEPARTMENTS[department]), department, tz, start, end)

    def companies(self, count: int) -> list[tuple[str, str]]:
        found: dict[str, str] = {}
        while len(found) < count:
            name = self.faker.company()
            words = [w for w in re.split(r"[^A-Za-z]+", name) if w and w.lower() not in COMPANY_SUFFIXES]
            domain = "".join(words[:2]).lower() + self.rng.choice([".com", ".co.uk", ".io", ".com", ".net"])
            if domain not in found.values() and len(domain) > 5:
                found[name] = domain
        return sorted(found.items())

    def contact(self, companies: list[tuple[str, str]], colleagues: list[Row]) -> str | None:
        created = iso(self.now - timedelta(days=self.rng.randint(10, 900), minutes=self.rng.randint(0, 1439)))
        if colleagues and self.rng.random() < 0.3:
            user = self.rng.choice(colleagues)
            if user["email"] in self.contact_emails:
                return None
            self.contact_emails.add(user["email"])
            self.add(
                Contact,
                {
                    "id": self.ctx.ids.new("contact"),
                    "name": user["name"],
                    "email": user["email"],
                    "phone": self.faker.numerify("+44 20 7946 0###"),
                    "company": "Larkspur Labs",
                    "job_title": user["title"],
                    "notes": "",
                    "starred": self.rng.random() < 0.1,
                    "created_at": created,
                    "updated_at": created,
                },
            )
            return None
        first, last = self.person_name()
        company, domain = self.rng.choice(companies)
        email = self.unique_email(self.rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}"]), domain)
        self.names[email] = f"{first} {last}"
        self.add(
            Contact,
            {
                "id": self.ctx.ids.new("contact"),
                "name": f"{first} {last}",
                "email": email,
                "phone": self.faker.numerify(
                    self.rng.choice(["+44 20 7946 0###", "+1 415 555 01##", "+1 212 555 01##"])
                ),
                "company": company,
                "job_title": self.faker.job()[:100],
                "notes": self.rng.choice(
                    ["", "", "", "Met at the logistics summit.", "Prefers calls to email.", "Billing contact."]
                ),
                "starred": self.rng.random() < 0.05,
                "created_at": created,
                "updated_at": created,
            },
        )
        return email

    def filler_file(self, colleagues: list[str], outsiders: list[str]) -> None:
        project = self.rng.choice(PROJECTS)
        doc, kind = self.rng.choice(DOC_TYPES)
        mine = self.rng.random() < 0.45
        owner = self.me if mine else self.rng.choice(colleagues)
        modified = self.now - timedelta(days=self.rng.randint(0, 200), minutes=self.rng.randint(0, 1439))
        file_id = self.ctx.ids.new("file")
        confidential = self.rng.random() < 0.1
        row = self.add(
            File,
            {
                "id": file_id,
                "name": f"{project} {doc}",
                "kind": kind,
                "folder": self.rng.choice(FOLDERS) if mine else "",
                "owner_email": owner,
                "size_bytes": self.rng.randint(8, 9000) * 1024,
                "confidential": confidential,
                "link_sharing": "viewer" if not confidential and self.rng.random() < 0.08 else "off",
                "created_at": iso(modified - timedelta(days=self.rng.randint(0, 60))),
                "modified_at": iso(modified),
            },
        )
        self.files[file_id] = row
        self.files_by_owner.setdefault(row["owner_email"], []).append(row)
        when = iso(modified)
        if not mine:
            self.grant(file_id, self.me, self.rng.choice(["viewer", "commenter", "editor"]), owner, when)
        for email in self.rng.sample(colleagues, k=min(len(colleagues), self.rng.randint(0, 4))):
            self.grant(file_id, email, self.rng.choice(["viewer", "viewer", "commenter", "editor"]), owner, when)
        if not confidential and outsiders and self.rng.random() < 0.15:
            self.grant(file_id, self.rng.choice(outsiders), "viewer", owner, when)

    def attachable(self, sender: str, recipients: list[str]) -> list[str]:
        """A file the sender owns (made openable by every recipient), sometimes."""
        if self.rng.random() > 0.15:
            return []
        own = [f for f in self.files_by_owner.get(sender, []) if not f["confidential"]]
        if not own:
            return []
        file = self.rng.choice(own)
        for email in recipients:
            self.grant(file["id"], email, "viewer", sender, file["modified_at"])
        return [file["id"]]

    def filler_thread(self, colleagues: list[str], outsiders: list[str], companies: list[tuple[str, str]]) -> None:
        rng = self.rng
        project = rng.choice(PROJECTS)
        start = self.now - timedelta(days=rng.randint(0, 75), minutes=rng.randint(0, 1439))
        kind = rng.choices(["internal", "external", "newsletter", "sent"], weights=[55, 15, 15, 15])[0]
        day = (start + timedelta(days=rng.randint(2, 9))).strftime("%A")
        fill = {"p": project, "d": day, "k": rng.randint(2, 9), "c": rng.choice(companies)[0]}
        messages: list[dict[str, Any]] = []
        if kind == "newsletter":
            name, email, subject = rng.choice(NEWSLETTERS)
            self.names.setdefault(email, name)
            subject = subject.format(**fill)
            messages.append(
                {
                    "from": email,
                    "to": [self.me],
                    "sent_at": iso(start),
                    "read": rng.random() < 0.5,
                    "body": f"{subject}.\n\n" + " ".join(rng.sample(EXTERNAL_LINES, 2)),
                }
            )
            location = rng.choices(["inbox", "archived", "trash"], weights=[60, 30, 10])[0]
            labels = ["Newsletters"] if rng.random() < 0.4 else []
        else:
            if kind == "external" and outsiders:
                other = rng.choice(outsiders)
                subject = rng.choice(EXTERNAL_SUBJECTS).format(**fill)
                lines = EXTERNAL_LINES
                cc: list[str] = []
            else:
                other = rng.choice(colleagues)
                subject = rng.choice(INTERNAL_SUBJECTS).format(**fill)
                lines = INTERNAL_LINES
                cc = [c for c in rng.sample(colleagues, k=min(len(colleagues), rng.choice([0, 0, 1, 2]))) if c != other]
            first_from = self.me if kind == "sent" or rng.random() < 0.2 else other
            count = 1 if kind == "sent" else rng.choice([1, 1, 2, 2, 3, 4])
            moment = start
            sender = first_from
            for n in range(count):
                to = [other] if sender == self.me else [self.me]
                greeting = rng.choice(INTERNAL_OPENERS).format(n=self.names.get(to[0], "there").split()[0])
                text = " ".join(line.format(**fill) for line in rng.sample(lines, 2)) if n == 0 else rng.choice(REPLIES)
                signature = self.names.get(sender, "").split()[0] if self.names.get(sender) else ""
                messages.append(
                    {
                        "from": sender,
                        "to": to,
                        "cc": cc,
                        "sent_at": iso(moment),
                        "body": f"{greeting}\n\n{text}\n\n{signature}".strip(),
                        "read": sender == self.me or moment < self.now - timedelta(days=2) or rng.random() < 0.5,
                        "attachments": self.attachable(sender, to + cc) if n == 0 else [],
                    }
                )
                moment += timedelta(hours=rng.randint(1, 30), minutes=rng.randint(0, 59))
                if moment >= self.now:
                    break
                sender = other if sender == self.me else self.me
            if all(m["from"] == self.me for m in messages):
                location = rng.choices(["sent", "archived", "trash"], weights=[80, 15, 5])[0]
            else:
                location = rng.choices(["inbox", "archived", "trash"], weights=[55, 40, 5])[0]
            labels = []
            if rng.random() < 0.25:
                labels = [rng.choice(["Finance", "Follow up", "Hiring", "Clients", "Travel"])]
        before = None
        trashed = None
        if location == "trash":
            before = "archived" if rng.random() < 0.5 else "inbox"
            trashed = iso(self.now - timedelta(days=rng.randint(1, 20)))
        self.thread(subject, location, messages, labels, before, trashed)

    def filler_event(self) -> None:
        rng = self.rng
        organizer_row = self.rng.choice(self.users) if rng.random() < 0.92 else None
        organizer = organizer_row["email"] if organizer_row else self.me
        tz = organizer_row["time_zone"] if organizer_row else OWNER.time_zone
        work_start = organizer_row["work_start"] if organizer_row else OWNER.work_start
        day = (self.now + timedelta(days=rng.randint(-21, 35))).astimezone(zone(tz)).date()
        while day.weekday() >= 5:
            day += timedelta(days=1)
        hours, minutes = map(int, work_start.split(":"))
        start_minutes = hours * 60 + minutes + 30 * rng.randint(0, 13)
        length = rng.choice([30, 30, 45, 60, 60, 90])
        start = datetime.combine(day, time(start_minutes // 60, start_minutes % 60))
        end = start + timedelta(minutes=length)
        if len(self.user_emails) != len(self.users):
            self.user_emails = [u["email"] for u in self.users]
            self.user_index = {e: i for i, e in enumerate(self.user_emails)}
        at_ = self.user_index.get(organizer)
        pool = self.user_emails if at_ is None else self.user_emails[:at_] + self.user_emails[at_ + 1 :]
        invitees = rng.sample(pool, k=min(len(pool), rng.randint(1, 5)))
        if organizer != self.me and rng.random() < 0.15:
            invitees.append(self.me)
        fill = {
            "p": rng.choice(PROJECTS),
            "c": self.faker.company(),
            "a": self.names[organizer].split()[0],
            "b": self.names[invitees[0]].split()[0],
        }
        title = rng.choice(EVENT_TITLES).format(**fill)
        attendees = []
        for email in invitees:
            response = rng.choices(["accepted", "tentative", "declined", "needs_action"], weights=[60, 10, 10, 20])[0]
            attendees.append((email, response, rng.random() < 0.1))
        recurring = rng.random() < 0.12
        status = "cancelled" if rng.random() < 0.04 else "confirmed"
        count = rng.randint(4, 10) if recurring else None
        if organizer == self.me or self.me in invitees:
            # The owner's own calendar is kept free of double bookings, so that the story stays readable.
            zone_ = zone(tz)
            rule = Rule("weekly" if recurring else "none", 1, (), count, None)
            first = (local_to_utc(start, zone_), local_to_utc(end, zone_))
            spans = [(o.start, o.end) for o in expand(*first, zone_, rule)]
            if any(s < e2 and s2 < e for s, e in spans for s2, e2 in self.my_busy):
                return
            self.my_busy.extend(spans)
        self.event(
            title=title,
            organizer=organizer,
            start=start.isoformat(timespec="minutes"),
            end=end.isoformat(timespec="minutes"),
            tz=tz,
            attendees=attendees,
            freq="weekly" if recurring else "none",
            count=count,
            status=status,
            location=rng.choice(["", "Video call", "Room 3.01", "Room 2.14", "Cafe"]),
        )

    # -- writing -----------------------------------------------------------------------------------

    def insert(self) -> None:
        for table in INSERT_ORDER:
            self.ctx.insert(table, self.rows[table])
