"""An ASGI entry point for running mcpsim under any ASGI server, configured from the environment:

    MCPSIM_WORLD=retail uvicorn servers.asgi:app --host 127.0.0.1 --port 8000

The variables (MCPSIM_WORLD, MCPSIM_TOKEN, ...) are listed in `mcpsim.serve._app.ServeConfig.from_env`
and mean what the `mcpsim serve --http` options mean. The control plane is closed as with the CLI:
without MCPSIM_TOKEN a token is generated and printed to stderr (MCPSIM_NO_AUTH=1 opens it); set
MCPSIM_PUBLIC_URL to the address clients use, and MCPSIM_ALLOWED_HOSTS when binding 0.0.0.0
(docs/security.md).
"""

from __future__ import annotations

import os

from mcpsim.serve import ServeConfig, create_app


def __getattr__(name: str):
    # `app` is built on first access, so importing this module has no side effects.
    if name == "app":
        return create_app(ServeConfig.from_env(dict(os.environ)))
    raise AttributeError(name)
