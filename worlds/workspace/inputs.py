"""Argument types shared by the workspace tools: bounded strings, ids, local times and zones."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

ThreadId = Annotated[str, Field(description="A thread id, such as 'thr_01234567'.", min_length=4, max_length=40)]
MessageId = Annotated[str, Field(description="A message id, such as 'msg_01234567'.", min_length=4, max_length=40)]
EventId = Annotated[str, Field(description="An event id, such as 'evt_01234567'.", min_length=4, max_length=40)]
FileId = Annotated[str, Field(description="A file id, such as 'fil_0123456'.", min_length=4, max_length=40)]
ContactId = Annotated[str, Field(description="A contact id, such as 'con_0123456'.", min_length=4, max_length=40)]
Email = Annotated[str, Field(description="An email address.", min_length=3, max_length=254)]
EmailList = Annotated[list[Email], Field(max_length=20)]
LabelName = Annotated[
    str, Field(description="A label name, such as 'Clients/Acme' (nested labels use '/').", min_length=1, max_length=60)
]
TimeZone = Annotated[
    str,
    Field(
        description="An IANA time zone name, such as 'Europe/London', 'America/New_York' or 'Asia/Kolkata'.",
        min_length=3,
        max_length=64,
    ),
]
OptionalTimeZone = Annotated[
    str | None,
    Field(description="An IANA time zone name; the owner's own time zone if omitted.", min_length=3, max_length=64),
]
LocalTime = Annotated[
    str,
    Field(
        description="A local wall time without offset, 'YYYY-MM-DDTHH:MM', such as '2026-05-19T14:00'.",
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$",
    ),
]
LocalDate = Annotated[str, Field(description="A date, 'YYYY-MM-DD'.", pattern=r"^\d{4}-\d{2}-\d{2}$")]
Subject = Annotated[str, Field(description="The subject line.", min_length=1, max_length=200)]
Body = Annotated[str, Field(description="The message text.", min_length=1, max_length=5000)]
FileIds = Annotated[
    list[FileId], Field(description="Files to attach by reference (ids from search_files).", max_length=10)
]
Role = Literal["viewer", "commenter", "editor"]
Response = Literal["accepted", "tentative", "declined"]
Limit = Annotated[int, Field(description="At most this many results (1 to 50).", ge=1, le=50)]
Offset = Annotated[int, Field(description="Skip this many results (paging).", ge=0, le=100_000)]
