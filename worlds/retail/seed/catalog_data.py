"""The shop's assortment, as templates the seed function draws products and variants from.

A product is a line name plus a product type ("Summit" + "Hiking Backpack"); its variants are
combinations of the type's options. The assortment is `catalog.yaml` in the world folder; this
module gives it its types.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from mcpsim.world import load_seed_data


class Axis(NamedTuple):
    name: str
    values: tuple[str, ...]
    surcharge: Mapping[str, int] = MappingProxyType({})  # dollars added to the base price by a value


class ProductType(NamedTuple):
    name: str
    category: str
    price: tuple[int, int]  # base price range in dollars
    axes: tuple[Axis, ...]
    blurb: str


def _axis(name: str, spec: list[str] | dict[str, Any]) -> Axis:
    """An axis written as its values, or as {values, surcharge}."""
    if isinstance(spec, list):
        return Axis(name, tuple(spec))
    return Axis(name, tuple(spec["values"]), MappingProxyType(spec["surcharge"]))


def _product_type(spec: dict[str, Any]) -> ProductType:
    axes = tuple(_axis(name, axis) for name, axis in spec["axes"].items())
    low, high = spec["price"]
    return ProductType(spec["name"], spec["category"], (low, high), axes, spec["blurb"])


_CATALOG = load_seed_data(Path(__file__).parents[1] / "catalog.yaml")

LINES: tuple[str, ...] = tuple(_CATALOG["lines"])
TYPES: tuple[ProductType, ...] = tuple(_product_type(spec) for spec in _CATALOG["types"])
