"""The fixed part of every workspace: the owner, the colleagues and outside people the tasks are
about, and their threads, events and files. It is the same at every scale (the filler around it
grows). The data is `story.yaml` in the world folder; this module gives it its types."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpsim.world import load_seed_data


@dataclass(frozen=True)
class Person:
    name: str
    title: str
    department: str
    time_zone: str
    work_start: str = "09:00"
    work_end: str = "17:30"

    @property
    def local_part(self) -> str:
        first, last = self.name.lower().split(" ", 1)
        return f"{first}.{last.replace(' ', '')}"


@dataclass(frozen=True)
class Outsider:
    name: str
    email: str
    company: str
    title: str
    phone: str = ""


@dataclass(frozen=True)
class FileSpec:
    key: str
    name: str
    kind: str
    folder: str
    owner: str  # "me", a colleague or an outsider key
    grants: dict[str, str] = field(default_factory=dict)  # person key -> role
    confidential: bool = False
    link_sharing: str = "off"
    size_kb: int = 120
    created: str = "2026-04-01T10:00"
    modified: str = "2026-05-10T10:00"


@dataclass(frozen=True)
class MessageSpec:
    sender: str
    to: list[str]
    at: str  # local wall time
    tz: str
    body: str
    cc: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    read: bool = True


@dataclass(frozen=True)
class ThreadSpec:
    key: str
    subject: str
    location: str
    messages: list[MessageSpec]
    labels: list[str] = field(default_factory=list)
    location_before_trash: str | None = None


@dataclass(frozen=True)
class EventSpec:
    key: str
    title: str
    organizer: str
    start: str  # local
    end: str
    tz: str
    attendees: dict[str, str] = field(default_factory=dict)  # person key -> response
    optional: tuple[str, ...] = ()
    freq: str = "none"
    weekdays: str = ""
    interval: int = 1
    count: int | None = None
    until: str | None = None  # last local date
    show_as: str = "busy"
    status: str = "confirmed"
    exceptions: tuple[str, ...] = ()  # local dates of cancelled occurrences
    location: str = ""
    description: str = ""


def _thread(spec: dict[str, Any]) -> ThreadSpec:
    return ThreadSpec(**{**spec, "messages": [MessageSpec(**message) for message in spec["messages"]]})


def _event(spec: dict[str, Any]) -> EventSpec:
    tuples: dict[str, tuple[str, ...]] = {
        name: tuple(spec[name]) for name in ("optional", "exceptions") if name in spec
    }
    return EventSpec(**{**spec, **tuples})


_STORY = load_seed_data(Path(__file__).parents[1] / "story.yaml")

OWNER = Person(**_STORY["owner"])
PASSCODE: str = _STORY["passcode"]
COLLEAGUES: dict[str, Person] = {key: Person(**person) for key, person in _STORY["colleagues"].items()}
OUTSIDERS: dict[str, Outsider] = {key: Outsider(**person) for key, person in _STORY["outsiders"].items()}
# Contacts of the owner's address book: (key, starred, notes).
STORY_CONTACTS: list[tuple[str, bool, str]] = [(c["key"], c["starred"], c["notes"]) for c in _STORY["contacts"]]
LABELS: list[str] = _STORY["labels"]
FILES: list[FileSpec] = [FileSpec(**spec) for spec in _STORY["files"]]
THREADS: list[ThreadSpec] = [_thread(spec) for spec in _STORY["threads"]]
EVENTS: list[EventSpec] = [_event(spec) for spec in _STORY["events"]]
