"""The `recordings` package."""

from mcpsim.twins.recordings._http import record_http
from mcpsim.twins.recordings._stdio import fidelity, learn, load_recording, record

__all__ = [
    "fidelity",
    "learn",
    "load_recording",
    "record",
    "record_http",
]
