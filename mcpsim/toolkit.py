"""Deprecated path, kept for one release: use `mcpsim.world.toolkit` (the same module)."""

import sys
import warnings

from mcpsim.world import toolkit as _moved

warnings.warn(
    "mcpsim.toolkit moved to mcpsim.world.toolkit; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
