"""``harness setup`` refusing bad input the way a user meets it: one line on stderr, exit 2, nothing half-done
in the cache. Real JVMs (Ivy from PySpark's jars) against a real HTTP registry on loopback and against Maven
Central."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.clirun import harness

pytestmark = pytest.mark.spark


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A registry that answers every request 403 Forbidden, as a mirror without credentials does."""

    def do_GET(self) -> None:
        self.send_response(403)
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_registry() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maven2/"
    finally:
        server.shutdown()


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("harness:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_registry_that_refuses_is_named_with_its_answer(tmp_path: Path, refusing_registry: str) -> None:
    cache = tmp_path / "cache"
    rc, _, err = harness("setup", "--cache-dir", str(cache), "--repository", refusing_registry, "--no-cds")
    assert rc == 2, err
    line = _one_line(err)
    assert "jar set kafka-connector: the registry refused " + refusing_registry in line and "Forbidden" in line
    assert "resolver log: " in line and not list((cache / "jars").rglob("*.jar"))


def test_a_package_no_registry_serves_is_named(tmp_path: Path) -> None:
    # The user's cache: its built-in sets are there after set-up, so only the package is resolved.
    rc, _, err = harness("setup", "--packages", "org.example.nowhere:no-such-connector_2.13:0.0.1", "--no-cds")
    assert rc == 2, err
    line = _one_line(err)
    assert "jar set packages: org.example.nowhere:no-such-connector_2.13:0.0.1 is not served by" in line, line
