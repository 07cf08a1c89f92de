"""The `recordings` package."""

from mcpsim.twins.recordings._http import record_http
from mcpsim.twins.recordings._reading import CALLS_FILE, load_recording
from mcpsim.twins.recordings._stdio import fidelity, learn, record

__all__ = [
    "CALLS_FILE",
    "fidelity",
    "learn",
    "load_recording",
    "record",
    "record_http",
]
