"""The `specs` package."""

from mcpsim.specs._arguments import Arguments
from mcpsim.specs._compiler import CompiledWorld, compile_spec
from mcpsim.specs._lint import NUMERIC, amount_field, id_arg, scope
from mcpsim.specs._operands import Path, message_pattern, parse_operand
from mcpsim.specs._spec import NAME, ActionSpec, FieldSpec, SpecError, WorldSpec, json_schema, load_spec, parse_spec
from mcpsim.specs._tables import ISO_DATE, ISO_DATETIME, EntityModel

__all__ = [
    "ActionSpec",
    "Arguments",
    "CompiledWorld",
    "EntityModel",
    "FieldSpec",
    "ISO_DATE",
    "ISO_DATETIME",
    "NAME",
    "NUMERIC",
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
