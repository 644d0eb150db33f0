"""How the site is served: the one ``streamlit run`` command of ``procbench leaderboard``, the bench and the e2e tests.

The bench must measure the server users run, so the Streamlit settings live here, in the product, and
every caller builds its command from :func:`command`.  This module imports nothing heavy (the CLI imports
it to start the site).
"""

from __future__ import annotations

import sys
from pathlib import Path

from procbench.paths import PROJECT_ROOT
from procbench.runners.runtime.extras import require

APP = PROJECT_ROOT / "leaderboard" / "app.py"
DEFAULT_ADDRESS = "127.0.0.1"  # the Upload page writes to the store: listening beyond this machine is the operator's explicit choice

# Streamlit's settings for a served board (flags rather than a .streamlit/config.toml, which Streamlit reads
# from the working directory and ~/.streamlit: a wheel installed elsewhere would not find it).
SETTINGS: tuple[tuple[str, str], ...] = (
    ("server.headless", "true"),  # a server, never a browser tab opened on the host
    # The app's source does not change under a served board; Streamlit's default watcher polls every
    # module the app imports and costs each view several times the page's own CPU.
    ("server.fileWatcherType", "none"),
    ("server.runOnSave", "false"),
    ("browser.gatherUsageStats", "false"),  # no telemetry from a public board
)


def command(
    *, port: int, address: str = DEFAULT_ADDRESS, headless: bool = True, app: Path = APP
) -> list[str]:
    """The command line that serves the board on ``address:port`` (the store comes from ``PROCBENCH_DB``).

    ``app``: another script served with the same settings (the site bench's floor page); the board by default.

    Streamlit runs in a child process, where a missing module would end in its traceback: without the
    ``site`` extra this raises :class:`~procbench.runners.runtime.extras.MissingExtra` (one line naming it) instead.
    """
    require("site", "the leaderboard site (procbench leaderboard)", ("streamlit", "altair"))
    settings = {**dict(SETTINGS), "server.headless": str(headless).lower()}
    flags = [f"--{name}={value}" for name, value in settings.items()]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        f"--server.address={address}",
        f"--server.port={port}",
        *flags,
    ]
