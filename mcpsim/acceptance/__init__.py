"""The `acceptance` package."""

from mcpsim.acceptance._describe import DescribeError, ReplyCache, describe_world, json_object, prompt, response_format
from mcpsim.acceptance._validate import CRITERIA, DeterminismChecker, ValidationReport, validate

__all__ = [
    "CRITERIA",
    "DescribeError",
    "DeterminismChecker",
    "ReplyCache",
    "ValidationReport",
    "describe_world",
    "json_object",
    "prompt",
    "response_format",
    "validate",
]
