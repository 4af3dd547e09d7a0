"""What the conformance commands' front ends share: a one-line refusal, progress on stderr, a comma list, a
JSON report written where asked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def fail(message: str) -> int:
    """Print ``harness: message`` on stderr; exit code 2 (the command could not run)."""
    print(f"harness: {message}", file=sys.stderr)
    return 2


def echo(message: str) -> None:
    """A progress line on stderr, flushed (stdout carries the report)."""
    print(message, file=sys.stderr, flush=True)


def ids(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``; none for ``None``."""
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def write_json(path: Path | None, doc: Any) -> None:
    """``doc`` as indented JSON at ``path`` (its directory made), if a path was given."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, default=str))
