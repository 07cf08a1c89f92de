"""The world API: declarations, derived schemas, isolation between worlds."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field
from sqlalchemy.orm import registry
from sqlmodel import Field as Column
from sqlmodel import SQLModel

from mcpsim.world import ToolContext, World


def make_world(name: str = "w") -> World:
    class Base(SQLModel, registry=registry()):
        pass

    class Thing(Base, table=True):
        __tablename__ = "thing"
        id: int = Column(primary_key=True)

    return World(name, title=name, description=name, metadata=Base.metadata, policy="p", scales={"default": {}})


def test_two_worlds_with_a_table_of_the_same_name_do_not_collide(ledger):
    a, b = make_world("a"), make_world("b")
    assert a.metadata is not b.metadata and a.metadata.tables["thing"] is not b.metadata.tables["thing"]
    assert "account" not in a.metadata.tables and "thing" not in ledger.metadata.tables
    assert not SQLModel.metadata.tables  # nothing leaked into the shared default registry


def test_a_tool_schema_and_hints_come_from_its_signature_and_docstring(ledger):
    spec = ledger.tools["transfer"]
    schema = spec.input_schema()
    assert schema["required"] == ["from_account", "to_account", "amount"]
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["properties"]["from_account"]["maxLength"] == 64
    assert spec.description.startswith("Move money between accounts.")
    assert (spec.read_only, spec.destructive) == (False, False)
    get = ledger.tools["get_account"]
    assert (get.read_only, get.idempotent) == (True, True)
    assert ledger.tools["close_account_buggy"].destructive


@pytest.mark.parametrize(
    ("fn_source", "message"),
    [
        ("def t(x: int) -> int:\n    'doc'\n    return x", "first parameter must be annotated ToolContext"),
        ("def t(ctx: ToolContext, x) -> int:\n    'doc'\n    return 1", "has no type annotation"),
        ("def t(ctx: ToolContext, x: int) -> int:\n    return 1", "docstring is required"),
        ("def t(ctx: ToolContext, *x: int) -> int:\n    'doc'\n    return 1", "*args and **kwargs"),
    ],
)
def test_a_malformed_tool_is_refused_at_registration(fn_source, message):
    namespace: dict = {"ToolContext": ToolContext}
    exec(fn_source, namespace)
    with pytest.raises(TypeError, match=message.replace("*", r"\*")):
        make_world().tool()(namespace["t"])


def test_a_tool_cannot_be_registered_twice_or_be_read_only_and_destructive():
    w = make_world()

    def t(ctx: ToolContext, x: Annotated[int, Field(ge=0)]) -> int:
        """doc"""
        return x

    w.tool()(t)
    with pytest.raises(ValueError, match="registered twice"):
        w.tool()(t)
    with pytest.raises(TypeError, match="cannot be destructive"):
        w.tool(read_only=True, destructive=True, name="u")(t)


def test_the_world_version_changes_with_a_tool_signature():
    w1, w2 = make_world(), make_world()

    def t(ctx: ToolContext, x: int) -> int:
        """doc"""
        return x

    def t2(ctx: ToolContext, x: str) -> str:
        """doc"""
        return x

    w1.tool(name="t")(t)
    w2.tool(name="t")(t2)
    assert w1.version != w2.version
    assert make_world().version == make_world().version


def test_a_world_must_have_a_default_scale():
    with pytest.raises(ValueError, match="must include 'default'"):
        World("x", title="x", description="x", metadata=make_world().metadata, policy="p", scales={"small": {}})
