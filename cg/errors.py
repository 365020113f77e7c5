"""One root for every error a user can cause or act on.

Each subclass is raised where the problem is found (a bad setting, a server that is down, a missing
model, a bad ``--since`` revision, an unknown symbol, a malformed question file) and carries one line
of text. The CLI and the MCP server catch ``CgError`` alone: the message is printed as it is, and
``exit_code`` is the process's exit status. Anything else that escapes is a bug of ours.
"""

from __future__ import annotations

import threading


class CgError(Exception):
    """A problem the user can fix or act on: one line of text, a non-zero exit."""

    exit_code: int = 1


class UserError(CgError):
    """Bad input on the command line (a missing directory, an unknown format, a bad ``--param``)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C with something to say about what was kept (a KeyboardInterrupt still, so everything that
    stops on one stops on it): the CLI prints its line and exits 130."""


# Ctrl-C as a fact, not only an exception. Python raises KeyboardInterrupt at whatever bytecode runs
# when SIGINT lands, and one landing in a destructor (Kùzu's ``QueryResult.__del__`` closing a result
# the collector freed) is printed as "Exception ignored" and lost: a CI run saw ``cg index`` go on
# waiting for a precise-pass indexer after Ctrl-C. The CLI's handler (``on_ctrl_c``) also sets this
# event, and the places a run waits or moves on (``PreciseJob.result``, the end of each stage) ask
# ``stop_if_interrupted``, so a lost KeyboardInterrupt is raised again there.
CTRL_C = threading.Event()


def on_ctrl_c(signum: int, frame: object) -> None:  # noqa: ARG001 - a signal handler's signature
    """SIGINT handler: remember it, then raise KeyboardInterrupt as Python's own handler does."""
    CTRL_C.set()
    raise KeyboardInterrupt


def stop_if_interrupted() -> None:
    """Raise KeyboardInterrupt when Ctrl-C was pressed (see ``CTRL_C``)."""
    if CTRL_C.is_set():
        raise KeyboardInterrupt
