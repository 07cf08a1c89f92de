"""Names read as words: a tool's or argument's name split into words, singular nouns, the prefix
every tool name shares, and a world name from a server's."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from mcpsim._inflect import inflect


@cache
def inflect_engine() -> Any:
    return inflect.engine()


def singular(word: str) -> str:
    found = inflect_engine().singular_noun(word)
    return found if isinstance(found, str) and found else word


def words(name: str) -> list[str]:
    """`create_entities`, `createEntities`, `create-entities` -> ["create", "entities"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def common_prefix(names: list[str]) -> list[str]:
    """The leading words every tool name shares (`git_` in git_status, git_log, ...)."""
    split = [words(n) for n in names]
    prefix: list[str] = []
    for group in zip(*split, strict=False):
        if len(set(group)) != 1 or any(len(s) <= len(prefix) + 1 for s in split):
            break
        prefix.append(group[0])
    return prefix if len(names) > 1 else []


def world_name(server: str) -> str:
    name = "_".join(words(server)) or "twin"
    name = name if name[0].isalpha() else f"twin_{name}"
    return name[:40]
