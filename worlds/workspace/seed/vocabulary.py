"""The words the filler is drawn from: departments and titles, time zones with their weights,
projects, document types, and templates for subjects, message lines and event titles. The words
are `vocabulary.yaml` in the world folder; this module gives them their types."""

from __future__ import annotations

from pathlib import Path

from mcpsim.world import load_seed_data

from ..rules import DOMAIN

_WORDS = load_seed_data(Path(__file__).parents[1] / "vocabulary.yaml")

DEPARTMENTS: dict[str, list[str]] = _WORDS["departments"]
ZONES: list[tuple[str, int]] = list(_WORDS["zones"].items())  # (IANA zone, weight)
STARTS: list[str] = _WORDS["starts"]
PROJECTS: list[str] = _WORDS["projects"]
DOC_TYPES: list[tuple[str, str]] = list(_WORDS["doc_types"].items())  # (name, file kind)
FOLDERS: list[str] = _WORDS["folders"]
INTERNAL_SUBJECTS: list[str] = _WORDS["internal_subjects"]
INTERNAL_OPENERS: list[str] = _WORDS["internal_openers"]
INTERNAL_LINES: list[str] = _WORDS["internal_lines"]
REPLIES: list[str] = _WORDS["replies"]
EXTERNAL_SUBJECTS: list[str] = _WORDS["external_subjects"]
EXTERNAL_LINES: list[str] = _WORDS["external_lines"]
NEWSLETTERS: list[tuple[str, str, str]] = [  # (sender name, address, subject)
    (letter["name"], letter["email"].format(domain=DOMAIN), letter["subject"]) for letter in _WORDS["newsletters"]
]
EVENT_TITLES: list[str] = _WORDS["event_titles"]
