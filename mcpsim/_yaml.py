"""Parsing the YAML files shipped with worlds and written by their operators (task files, world
manifests, seed data, fault profiles, catalogue blueprints) with libyaml's C parser when PyYAML
was built with it, else the pure-Python one: both build the same data through the same safe
constructor, but the C parser is about ten times faster. Untrusted specs do not come here: they
go through `mcpsim.specs`' bounded loader."""

from __future__ import annotations

from typing import Any

import yaml

TrustedLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_trusted(text: str) -> Any:
    """`yaml.safe_load(text)` through the fastest safe loader available."""
    return yaml.load(text, Loader=TrustedLoader)
