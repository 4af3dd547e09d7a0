"""harness/spark/sitepath/sitecustomize.py: which Spark zips move behind the installed packages."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path
from types import ModuleType

from harness.spark.session import SITEPATH, ZIP_IMPORTS_ENV, spark_env


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("harness_sitecustomize", Path(SITEPATH) / "sitecustomize.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _zip(path: Path, package: str, version: str) -> str:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{package}/version.py", f"__version__ = {version!r}\n")
        z.writestr(f"{package}/__init__.py", "")
    return str(path)


def _installed(root: Path, package: str, version: str) -> str:
    (root / package).mkdir(parents=True)
    (root / package / "version.py").write_text(f"__version__ = {version!r}\n")
    return str(root)


def test_zips_of_the_installed_release_move_to_the_end(tmp_path: Path) -> None:
    site = _installed(tmp_path / "site", "pyspark", "4.3.0")
    _installed(tmp_path / "site", "py4j", "0.10.9.9")
    pz = _zip(tmp_path / "pyspark.zip", "pyspark", "4.3.0")
    qz = _zip(tmp_path / "py4j-0.10.9.9-src.zip", "py4j", "0.10.9.9")
    path = [pz, qz, "/repo", site]
    assert _load().prefer_installed(path) == ["/repo", site, pz, qz]


def test_a_zip_of_another_release_or_without_an_installed_twin_stays_first(tmp_path: Path) -> None:
    site = _installed(tmp_path / "site", "pyspark", "4.2.0")
    pz = _zip(tmp_path / "pyspark.zip", "pyspark", "4.3.0")
    qz = _zip(tmp_path / "py4j-0.10.9.9-src.zip", "py4j", "0.10.9.9")
    broken = tmp_path / "pyspark-broken.zip"
    broken.write_bytes(b"not a zip")
    path = [pz, qz, str(broken), site]
    assert _load().prefer_installed(path) == path


def test_spark_env_puts_the_sitepath_first_unless_opted_out() -> None:
    env = spark_env({"PYTHONPATH": f"/elsewhere:{SITEPATH}"})
    parts = env["PYTHONPATH"].split(":")
    assert parts[1] == SITEPATH and parts.count(SITEPATH) == 1 and parts[-1] == "/elsewhere"
    plain = spark_env({"PYTHONPATH": "/elsewhere", ZIP_IMPORTS_ENV: "1"})
    assert SITEPATH not in plain["PYTHONPATH"].split(":")
