"""What every command shares: how a command refuses (one line on stderr, exit 2: no verdict)."""

from __future__ import annotations

import sys


def fail(message: str) -> int:
    """Print ``harness: message`` on stderr; the exit code of a command that could not give a verdict."""
    print(f"harness: {message}", file=sys.stderr)
    return 2
