"""Each real tool as the Python function a `World` registers: parameters whose JSON Schema is the
real input schema verbatim (checked with `jsonschema`), a return model whose schema is the real
output schema, and a body that runs the twin's operation."""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable
from typing import Annotated, Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import core_schema

from mcpsim.twins._operations import TwinTools
from mcpsim.twins._schemas import inline_refs, schema_validator
from mcpsim.twins._twin_spec import TwinTool
from mcpsim.world import ToolContext


class Verbatim:
    """An argument whose JSON Schema is exactly `schema`: published as is (no title or default
    added) and checked with `jsonschema`. A missing optional argument arrives as None."""

    def __init__(self, schema: dict[str, Any], ref: str) -> None:
        self.schema = schema
        self.ref = ref
        self.validator = schema_validator(schema)

    def _check(self, value: Any) -> Any:
        if value is None:
            return value
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(value))
        if error is not None:
            where = "/".join(map(str, error.absolute_path))
            raise ValueError(f"{where + ': ' if where else ''}{error.message}")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        # a schema with a ref gets no title from pydantic; the JSON Schema below replaces it whole
        return core_schema.no_info_after_validator_function(self._check, core_schema.any_schema(), ref=self.ref)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return dict(self.schema)


def verbatim_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model whose JSON Schema is exactly `schema` (an output schema), accepting any object."""

    def replace(published: dict[str, Any]) -> None:
        published.clear()
        published.update({k: v for k, v in schema.items() if k != "$schema"})

    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="allow", json_schema_extra=replace))
    return model


def python_names(names: list[str]) -> dict[str, str]:
    """A Python parameter name for each argument name (`from` -> `from_`, `repo-path` ->
    `repo_path_`); the argument keeps its real name as the parameter's alias."""
    found: dict[str, str] = {}
    for name in names:
        usable = name.isidentifier() and not keyword.iskeyword(name) and name != "ctx"
        candidate = name if usable else re.sub(r"\W|^(?=\d)", "_", name) + "_"
        while candidate in found.values() or (candidate != name and candidate in names):
            candidate += "_"
        found[name] = candidate
    return found


def _parameters(tool: TwinTool, names: dict[str, str]) -> list[inspect.Parameter]:
    schema = inline_refs(tool.input_schema)  # the SDK writes the top level: no shared $defs
    required = set(schema.get("required") or [])
    params = []
    for n, (name, prop) in enumerate((schema.get("properties") or {}).items()):
        field: dict[str, Any] = {} if name in required else {"default_factory": lambda: None}
        if names[name] != name:
            field["alias"] = name
        annotation: Any = Annotated[Any, Verbatim(prop, f"{tool.name}.{n}"), Field(**field)]
        params.append(inspect.Parameter(names[name], inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
    return params


def tool_function(runner: TwinTools, tool: TwinTool) -> Callable[..., Any]:
    defaults = {k: v["default"] for k, v in (tool.input_schema.get("properties") or {}).items() if "default" in v}
    output = verbatim_model(f"{tool.name}_output", inline_refs(tool.output_schema)) if tool.output_schema else None

    names = python_names(list(tool.input_schema.get("properties") or {}))
    real = {python: name for name, python in names.items()}

    def body(ctx: ToolContext, **arguments: Any) -> Any:
        args = defaults | {real.get(k, k): v for k, v in arguments.items() if v is not None}
        answer = runner.run(tool, ctx, args)
        return output.model_validate(answer) if output is not None and isinstance(answer, dict) else answer

    params = _parameters(tool, names)
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)
    returns: Any = output if output is not None else inspect.Signature.empty
    body.__signature__ = inspect.Signature([context, *params], return_annotation=returns)  # type: ignore[attr-defined]
    body.__annotations__ = {"ctx": ToolContext} | {p.name: p.annotation for p in params}
    if output is not None:
        body.__annotations__["return"] = output
    body.__name__ = body.__qualname__ = re.sub(r"\W", "_", tool.name)
    body.__doc__ = tool.description or tool.title or tool.name
    return body
