"""harness.engine.driver.open_run: a run directory names how the driver runs it (scenario spec or a handler)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.engine.driver import MOVED_HANDLERS, handler_class, open_run
from harness.engine.rundir import RunPaths


class FakeHandler:
    def __init__(self, paths: RunPaths, incarnation: int, spark: Any, progress: Any) -> None:
        self.args = (paths, incarnation, spark, progress)

    def run(self) -> dict[str, Any]:
        return {"event": "caught_up"}

    def check(self) -> dict[str, Any]:
        return {"event": "checked"}


def test_a_source_run_is_opened_with_the_handler_it_names(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path)
    paths.source_run.write_text(json.dumps({"kind": "rate", "handler": f"{__name__}:FakeHandler"}))
    handler = open_run(paths, 3, "spark", None)
    assert isinstance(handler, FakeHandler) and handler.args == (paths, 3, "spark", None)


@pytest.mark.parametrize("handler", ["", "no_colon", "module:"])
def test_a_source_run_without_a_usable_handler_names_its_file(tmp_path: Path, handler: str) -> None:
    paths = RunPaths(tmp_path)
    paths.source_run.write_text(json.dumps({"kind": "rate", "handler": handler}))
    with pytest.raises(ValueError, match=r"source_run\.json: 'handler' must name"):
        open_run(paths, 1, "spark", None)


def test_a_saved_run_naming_the_handler_before_the_regroup_still_opens(tmp_path: Path) -> None:
    """Source runs (and the bundles that copy them) saved before harness/conformance/ was regrouped name the
    handler ``harness.conformance.source_query:SourceQuery`` in ``source_run.json``."""
    from harness.conformance.source.query import SourceQuery
    from harness.conformance.source.run import HANDLER

    saved = json.dumps({"kind": "python", "handler": "harness.conformance.source_query:SourceQuery"})
    assert handler_class(json.loads(saved)["handler"]) is SourceQuery
    assert handler_class(HANDLER) is SourceQuery
    for old, new in MOVED_HANDLERS.items():
        assert handler_class(old) is handler_class(new)
