"""The `recordings` package."""

from mcpsim.twins.recordings._http import record_http
from mcpsim.twins.recordings._reading import load_recording
from mcpsim.twins.recordings._stdio import fidelity, learn, record

__all__ = [
    "fidelity",
    "learn",
    "load_recording",
    "record",
    "record_http",
]
