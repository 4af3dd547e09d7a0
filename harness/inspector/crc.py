"""Checksum sidecars in a checkpoint, verified (Spark itself does not verify them).

Two kinds exist on a local file system (both measured on PySpark 4.3):

- Hadoop ``ChecksumFileSystem`` sidecars, hidden: ``.<name>.crc``. Layout:
  magic ``b"crc\\0"``, a big-endian int ``bytesPerChecksum`` (512), then one
  big-endian CRC-32 (zlib polynomial) per chunk of the main file. Written for every
  log, state and sink file that goes through Hadoop's local file system.
- Spark ``ChecksumCheckpointFileManager`` sidecars, visible: ``<name>.crc``, one
  JSON object ``{"algorithm": "CRC32C", "value": <signed int>, "mainFileSize": ...}``.
  Written for RocksDB state files when ``checkpointFormatVersion=2``.

Leftover temp files of ``CheckpointFileManager.createAtomic`` are named
``.<name>.<uuid>[.TID<n>].tmp`` (plus their own ``..<name>...tmp.crc``). A SIGKILL
between renaming the temp file and renaming its sidecar leaves ``<name>`` without
``.<name>.crc`` but with ``..<name>.<uuid>.tmp.crc``, which still matches it (seen in
harness runs); :func:`scan_tree` verifies ``<name>`` against that sidecar.
"""

from __future__ import annotations

import json
import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

HADOOP_MAGIC = b"crc\x00"
#: ``..<name>.<uuid>[.TID<n>].tmp.crc``: the Hadoop sidecar of a ``createAtomic`` temp file.
_TEMP_SIDECAR = re.compile(r"^\.\.(.+)\.[0-9a-fA-F-]{36}(?:\.TID\d+)?\.tmp\.crc$")


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data`` as an unsigned int (pure Python, ~10 MB/s)."""
    crc = 0xFFFFFFFF
    table = _CRC32C
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def hadoop_crc_bytes(data: bytes, bytes_per_checksum: int = 512) -> bytes:
    """The exact ``.crc`` sidecar Hadoop's local file system writes for ``data``."""
    sums = b"".join(
        struct.pack(">I", zlib.crc32(data[i : i + bytes_per_checksum])) for i in range(0, len(data), bytes_per_checksum)
    )
    return HADOOP_MAGIC + struct.pack(">i", bytes_per_checksum) + sums


def is_temp_name(name: str) -> bool:
    """A leftover ``createAtomic`` temp file (or its Hadoop sidecar)."""
    return name.startswith(".") and (name.endswith(".tmp") or name.endswith(".tmp.crc"))


@dataclass(frozen=True)
class ChecksumResult:
    """One verified sidecar. ``problem`` is ``""`` when the checksum matches."""

    main: Path
    sidecar: Path
    kind: str  # "hadoop" | "spark"
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def verify_hadoop_crc(data: bytes, sidecar: bytes) -> str:
    """``""`` when ``sidecar`` (a Hadoop ``.crc``) matches ``data``, else what differs."""
    if len(sidecar) < 8 or sidecar[:4] != HADOOP_MAGIC:
        return "the .crc sidecar is not a Hadoop checksum file (bad header)"
    bpc = struct.unpack(">i", sidecar[4:8])[0]
    if bpc <= 0 or (len(sidecar) - 8) % 4:
        return "the .crc sidecar is malformed (bad chunk size or length)"
    expected = [s[0] for s in struct.iter_unpack(">I", sidecar[8:])]
    chunks = (len(data) + bpc - 1) // bpc
    if chunks != len(expected):
        return (
            f"the file is {len(data)} bytes but its .crc covers {len(expected)} chunk(s) of {bpc} bytes: "
            "it changed size after Spark wrote it"
        )
    for k, want in enumerate(expected):
        if zlib.crc32(data[k * bpc : (k + 1) * bpc]) != want:
            return f"bytes {k * bpc}..{min(len(data), (k + 1) * bpc) - 1} differ from what Spark wrote"
    return ""


def verify_spark_checksum(data: bytes, sidecar: bytes) -> str:
    """``""`` when a Spark JSON checksum sidecar matches ``data``, else what differs."""
    try:
        meta = json.loads(sidecar)
        algorithm, value, size = meta["algorithm"], int(meta["value"]), int(meta["mainFileSize"])
    except (ValueError, KeyError, TypeError):
        return "the .crc sidecar is not a Spark checksum JSON object"
    if algorithm != "CRC32C":
        return ""  # an algorithm this reader does not know: nothing to say
    if size != len(data):
        return f"the file is {len(data)} bytes but its checksum file says {size}: it changed after Spark wrote it"
    actual = crc32c(data)
    if (actual - (1 << 32) if actual >= 1 << 31 else actual) != value:
        return "its CRC32C differs from the checksum file: the content changed after Spark wrote it"
    return ""


@dataclass(frozen=True)
class ChecksumScan:
    """Everything found by :func:`scan_tree`."""

    results: tuple[ChecksumResult, ...]
    #: Sidecars whose main file is gone (harmless leftovers).
    orphans: tuple[Path, ...]
    #: Leftover ``createAtomic`` temp files (a crash mid-write; Spark ignores them).
    temp_files: tuple[Path, ...]

    @property
    def mismatches(self) -> tuple[ChecksumResult, ...]:
        return tuple(r for r in self.results if not r.ok)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def scan_tree(root: str | os.PathLike[str], verify: bool = True) -> ChecksumScan:
    """Walk ``root``: verify every checksum sidecar against its main file (when
    ``verify``), and collect orphan sidecars and leftover temp files."""
    results: list[ChecksumResult] = []
    orphans: list[Path] = []
    temps: list[Path] = []
    for dirpath, _dirs, files in os.walk(root):
        names = set(files)
        here = Path(dirpath)
        for name in sorted(files):
            if is_temp_name(name):
                temps.append(here / name)
                renamed = _TEMP_SIDECAR.match(name)
                # Killed between renaming a file and renaming its sidecar: the sidecar is still the temp one.
                if verify and renamed and renamed.group(1) in names and f".{renamed.group(1)}.crc" not in names:
                    renamed_main = here / renamed.group(1)
                    data, side = _read(renamed_main), _read(here / name)
                    if data is not None and side is not None:
                        results.append(
                            ChecksumResult(renamed_main, here / name, "hadoop", verify_hadoop_crc(data, side))
                        )
                continue
            if not name.endswith(".crc"):
                continue
            hidden = name.startswith(".")
            main = name[1:-4] if hidden else name[:-4]
            if main not in names:
                # A visible "<x>.crc" is only a sidecar if it holds Spark's checksum JSON.
                if hidden or (_read(here / name) or b"").startswith(b'{"algorithm"'):
                    orphans.append(here / name)
                continue
            if not verify:
                continue
            data, side = _read(here / main), _read(here / name)
            if data is None or side is None:
                continue
            if hidden:
                results.append(ChecksumResult(here / main, here / name, "hadoop", verify_hadoop_crc(data, side)))
            elif side[:1] == b"{":
                results.append(ChecksumResult(here / main, here / name, "spark", verify_spark_checksum(data, side)))
    return ChecksumScan(tuple(results), tuple(orphans), tuple(temps))
