"""Names the workspace tests share (a module with a unique name, so it never collides with
another folder's conftest on sys.path)."""

from __future__ import annotations

from typing import Any

ME = "maya.chen@larkspurlabs.com"
DOMAIN = "larkspurlabs.com"


def colleague(first: str) -> str:
    """The address of a story colleague by first name ("dana" -> dana.whitfield@...)."""
    return (
        {
            "dana": "dana.whitfield",
            "ravi": "ravi.iyer",
            "sofia": "sofia.marquez",
            "lukas": "lukas.becker",
            "hana": "hana.sato",
            "tom": "tom.okafor",
            "priya": "priya.nair",
            "ethan": "ethan.brooks",
            "grace": "grace.liu",
            "oliver": "oliver.grant",
            "chloe": "chloe.dubois",
            "jack": "jack.turner",
        }[first]
        + "@"
        + DOMAIN
    )


def meeting(title: str, day: str, start: str, end: str, **more: Any) -> dict[str, Any]:
    """Arguments for create_event: `title` on `day` from `start` to `end` (local times), plus `more`."""
    return {"title": title, "start": f"{day}T{start}", "end": f"{day}T{end}", **more}
