"""Deprecated path, kept for one release: use `mcpsim.world.registry` (the same module)."""

import sys
import warnings

from mcpsim.world import registry as _moved

warnings.warn(
    "mcpsim.registry moved to mcpsim.world.registry; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
