"""The `catalogue` package."""

from mcpsim.catalogue._hosting import spec_world_loader
from mcpsim.catalogue._loading import (
    loaded_sources,
    loaded_worlds,
    register_folder,
    register_shipped,
    register_spec,
    shipped_specs,
)
from mcpsim.catalogue._run import blueprint_table, run_catalogue

__all__ = [
    "blueprint_table",
    "loaded_sources",
    "loaded_worlds",
    "register_folder",
    "register_shipped",
    "register_spec",
    "run_catalogue",
    "shipped_specs",
    "spec_world_loader",
]
