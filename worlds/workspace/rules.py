"""The workspace world's fixed rules and shared helpers: the company and its domain,
time zones and local times, email validation, the owner ("me"), lookups by id and file access."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import true
from sqlmodel import Session, select

from mcpsim.world import (
    ToolContext,
    WorldError,
    iso,  # noqa: F401  (re-exported)
)

from .tables import Contact, File, FilePermission, User

T = TypeVar("T")

COMPANY = "Larkspur Labs"
DOMAIN = "larkspurlabs.com"

ROLES = ("viewer", "commenter", "editor")
ROLE_RANK = {"viewer": 1, "commenter": 2, "editor": 3}
RESPONSES = ("accepted", "tentative", "declined")
LOCATIONS = ("inbox", "sent", "archived", "trash")
RESERVED_LABELS = {
    "inbox",
    "sent",
    "archived",
    "archive",
    "trash",
    "spam",
    "drafts",
    "starred",
    "all mail",
    "important",
}
MAX_RECIPIENTS = 20
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def get_by_id(ctx: ToolContext, model: type[T], raw_id: str) -> T:
    """`ctx.get` on an id given with stray spaces around it; the not-found error quotes the id as
    the agent gave it."""
    row = ctx.session.get(model, raw_id.strip())
    return row if row is not None else ctx.get(model, raw_id)


# -- time ----------------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`, or a WorldError an agent can act on. Needs the system's tz database
    (or the `tzdata` package): without one even "UTC"-free zones fail, and that is a setup bug."""
    cleaned = name.strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}", cleaned) or cleaned.startswith("/"):
        raise WorldError(f"{name!r} is not an IANA time zone name (such as 'Europe/London' or 'America/New_York')")
    try:
        return _zone(cleaned)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise WorldError(
            f"Unknown time zone {name!r}; use an IANA name such as 'Europe/London' or 'America/New_York'"
        ) from None


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def local_to_utc(local: str | datetime, tz: ZoneInfo) -> datetime:
    """A naive local wall time in `tz` to an aware UTC datetime. A wall time skipped by a
    daylight-saving jump does not exist and is refused; a repeated one means its first
    occurrence (fold 0)."""
    naive = datetime.fromisoformat(local) if isinstance(local, str) else local
    if naive.tzinfo is not None:
        raise WorldError(f"Give local times without an offset (such as '2026-05-19T14:00'), not {local!r}")
    aware = naive.replace(tzinfo=tz, fold=0)
    utc = aware.astimezone(UTC)
    if utc.astimezone(tz).replace(tzinfo=None) != naive:
        raise WorldError(
            f"{naive:%Y-%m-%d %H:%M} does not exist in {tz.key}: the clocks jump forward then "
            "(daylight saving time); choose another time"
        )
    return utc


def to_local(moment: datetime, tz: ZoneInfo) -> datetime:
    return moment.astimezone(tz)


def show_local(moment: datetime, tz: ZoneInfo) -> str:
    """`2026-05-19T14:00 (Tue) Europe/London`: what the agent reads."""
    local = moment.astimezone(tz)
    return f"{local:%Y-%m-%dT%H:%M} ({local:%a}) {tz.key}"


def utc_offset(moment: datetime, tz: ZoneInfo) -> str:
    offset = moment.astimezone(tz).utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def day_window(start: date, end: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[start 00:00, end+1 00:00) local, in UTC. A midnight skipped by DST moves forward."""
    lo = datetime.combine(start, time(0)).replace(tzinfo=tz).astimezone(UTC)
    hi = datetime.combine(end + timedelta(days=1), time(0)).replace(tzinfo=tz).astimezone(UTC)
    return lo, hi


def parse_date(text: str, what: str = "date") -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise WorldError(f"{text!r} is not a valid {what} (use YYYY-MM-DD)") from None


def hhmm(text: str) -> time:
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes))


# -- people --------------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"^[a-z0-9](?:[a-z0-9._%+'-]{0,62}[a-z0-9_'%+-])?"  # the local part
    r"@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}$"  # the domain
)


def normalize_email(raw: str) -> str:
    return raw.strip().lower()


def check_address(session: Session, raw: str) -> str:
    """A deliverable address in lower case, or a WorldError: the syntax must be valid, no dots
    may double up, and an address at the company's own domain must be a real account."""
    email = normalize_email(raw)
    if not _EMAIL.fullmatch(email) or ".." in email:
        raise WorldError(f"{raw!r} is not a valid email address; nothing was sent or shared")
    if email.endswith("@" + DOMAIN) and directory_user(session, email) is None:
        raise WorldError(
            f"There is no {COMPANY} account {email}: the address would bounce. Check the spelling in the directory "
            "(search_contacts)"
        )
    return email


def check_addresses(session: Session, raws: list[str]) -> list[str]:
    seen: list[str] = []
    for raw in raws:
        email = check_address(session, raw)
        if email not in seen:
            seen.append(email)
    return seen


def is_internal(email: str) -> bool:
    return email.endswith("@" + DOMAIN)


def directory_user(session: Session, email: str) -> User | None:
    return session.exec(select(User).where(User.email == normalize_email(email))).first()


def owner(session: Session) -> User:
    me = session.exec(select(User).where(User.is_owner == true())).first()
    if me is None:  # a seeding bug, never the agent's fault
        raise RuntimeError("the workspace has no owner")
    return me


def owner_zone(session: Session) -> ZoneInfo:
    return zone(owner(session).time_zone)


def working_hours(user: User) -> str:
    """`09:00-17:30 Mon-Fri (Europe/London)`."""
    return f"{user.work_start}-{user.work_end} Mon-Fri ({user.time_zone})"


def display_name(session: Session, email: str) -> str:
    user = directory_user(session, email)
    if user is not None:
        return user.name
    contact = session.exec(select(Contact).where(Contact.email == email)).first()
    return contact.name if contact else ""


# -- files ---------------------------------------------------------------------------------------


def role_of(session: Session, file: File, email: str) -> str | None:
    """`owner`, a granted role, `viewer` through link sharing, or None."""
    if file.owner_email == email:
        return "owner"
    grant = session.get(FilePermission, (file.id, email))
    if grant is not None:
        return grant.role
    if file.link_sharing == "viewer":
        return "viewer"
    return None


def visible_file(session: Session, file_id: str, me: str) -> File:
    """A file the owner can open (owns, has a grant on, or holds a link to a link-shared file);
    anything else is "not found"."""
    file = session.get(File, file_id.strip())
    if file is None or role_of(session, file, me) is None:
        raise WorldError(f"File {file_id} not found among the files you can open")
    return file
