"""The `specs` package."""

from mcpsim.specs._arguments import Arguments
from mcpsim.specs._compiler import CompiledWorld, compile_spec
from mcpsim.specs._lint import amount_field, id_arg, scope
from mcpsim.specs._operands import Path, message_pattern, parse_operand
from mcpsim.specs._spec import NAME, ActionSpec, SpecError, WorldSpec, json_schema, load_spec, parse_spec
from mcpsim.specs._tables import EntityModel

__all__ = [
    "ActionSpec",
    "Arguments",
    "CompiledWorld",
    "EntityModel",
    "NAME",
    "Path",
    "SpecError",
    "WorldSpec",
    "amount_field",
    "compile_spec",
    "id_arg",
    "json_schema",
    "load_spec",
    "message_pattern",
    "parse_operand",
    "parse_spec",
    "scope",
]
