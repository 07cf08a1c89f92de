"""The twin spec's JSON Schema, published as `schemas/twin-spec.schema.json` (as the world spec's
is as `schemas/world-spec.schema.json`): what `mcpsim gen --from-mcp` writes and `load_twin` reads.

    python -m mcpsim.twins schema > schemas/twin-spec.schema.json

tests/twins/test_twin.py fails when the published file is not the one the models give."""

from __future__ import annotations

from typing import Any

from mcpsim.twins._twin_spec import TwinSpec

SCHEMA_ID = "https://mcpsim.dev/schemas/twin-spec.schema.json"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a twin spec (draft 2020-12), generated from `TwinSpec`."""
    schema = TwinSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema
