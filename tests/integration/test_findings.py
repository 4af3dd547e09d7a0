"""The findings catalogue (docs/findings.toml), each entry on both sides: the campaign finds the reported failure
on the affected release and its bundle replays 3/3; the same campaign holds on the other release.

Each release runs in a fresh environment with this checkout's wheel and ``pyspark==<release>``, set up without
Maven (tests/integration/userenv.py); an environment serves every entry on its release. Heavy: bin/test-findings
(about 3.5 minutes for the first entry, measured 2026-11-28; most of it building the two environments).
"""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ci_skips import missing
from tests.integration.userenv import ROOT, UserEnv, install_wheel, remove_heavy_parts, run

pytestmark = [pytest.mark.spark, pytest.mark.heavy]

ENTRIES: list[dict[str, Any]] = tomllib.loads((ROOT / "docs" / "findings.toml").read_text())["finding"]
#: ``harness setup``'s output per release: it names the connector patch it resolved.
SETUP: dict[str, str] = {}


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, UserEnv]]:
    """One set-up environment per PySpark release, made when an entry first needs it."""
    if shutil.which("java") is None:
        pytest.skip(missing("java"))
    roots: list[Path] = []

    class Envs(dict[str, UserEnv]):
        def __missing__(self, release: str) -> UserEnv:
            root = tmp_path_factory.mktemp(f"pyspark-{release}")
            roots.append(root)
            env = install_wheel(root, f"pyspark=={release}")
            setup = run([env.bin("harness"), "setup"], root, env.env, 1800)
            assert setup.returncode == 0, setup.stderr
            SETUP[release] = setup.stderr
            self[release] = env
            return env

    yield Envs()
    for root in roots:
        remove_heavy_parts(root)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_the_campaign_finds_it_where_reported_and_holds_where_not(
    entry: dict[str, Any], envs: dict[str, UserEnv], tmp_path: Path
) -> None:
    affected, held = entry["affected"], entry["held"]
    chaos = ["chaos", entry["scenario"], *entry["campaign"]]

    for ref in (entry["scenario"], held.get("scenario", "")):
        if ref.startswith("examples."):  # a user's own module, in the project directory the commands run in
            module = Path(*ref.partition(":")[0].split(".")).with_suffix(".py")
            (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / module, tmp_path / module)
            for package in module.parents[:-1]:
                (tmp_path / package / "__init__.py").touch()
    bad = envs[affected["pyspark"]]
    found = run([bad.bin("harness"), *chaos, "--work-dir", str(tmp_path / "affected")], tmp_path, bad.env, 3600)
    assert found.returncode == 1, found.stdout[-3000:]
    assert affected["connector"] in SETUP[affected["pyspark"]], SETUP[affected["pyspark"]]
    assert affected["verdict"] in found.stdout and affected["says"] in found.stdout, found.stdout[-3000:]
    assert "minimal schedule  seed" in found.stdout and entry["shrunk_to"] in found.stdout, found.stdout[-3000:]
    bundle = re.search(r"^replay: .* replay (\S+)$", found.stdout, re.M)
    assert bundle is not None, found.stdout[-2000:]
    replayed = run([bad.bin("harness"), "replay", bundle.group(1), "--times", "3"], tmp_path, bad.env, 1800)
    assert "reproduced 3/3 time(s)" in replayed.stdout + replayed.stderr, replayed.stdout[-2000:]

    good = envs[held["pyspark"]]
    assert held["connector"] in SETUP[held["pyspark"]], SETUP[held["pyspark"]]
    # A hazard by design holds on the same release with the documented workaround: the pipeline's twin.
    chaos = ["chaos", held.get("scenario", entry["scenario"]), *entry["campaign"]]
    holds = run([good.bin("harness"), *chaos, "--work-dir", str(tmp_path / "held")], tmp_path, good.env, 3600)
    assert holds.returncode == 0 and "no violation in" in holds.stdout, holds.stdout[-3000:]
    if held["verdict"] == "exactly-once":
        assert re.search(r"examples run +\d+ \(\d+ exactly-once\)$", holds.stdout, re.M), holds.stdout[-2000:]
    else:  # the fix is a refusal: the examples that met the damage have no verdict, and say why
        assert held["says"] in holds.stdout, holds.stdout[-2000:]
