"""Deprecated path, kept for one release: use `mcpsim.world.seeding` (the same module)."""

import sys
import warnings

from mcpsim.world import seeding as _moved

warnings.warn(
    "mcpsim.seeding moved to mcpsim.world.seeding; the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
