"""One root for every error a user can cause or act on.

Each subclass is raised where the problem is found (a bad setting, a server that is down, a missing
model, a bad ``--since`` revision, an unknown symbol, a malformed question file) and carries one line
of text. The CLI and the MCP server catch ``CgError`` alone: the message is printed as it is, and
``exit_code`` is the process's exit status. Anything else that escapes is a bug of ours.
"""

from __future__ import annotations


class CgError(Exception):
    """A problem the user can fix or act on: one line of text, a non-zero exit."""

    exit_code: int = 1


class UserError(CgError):
    """Bad input on the command line (a missing directory, an unknown format, a bad ``--param``)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C with something to say about what was kept (a KeyboardInterrupt still, so everything that
    stops on one stops on it): the CLI prints its line and exits 130."""
