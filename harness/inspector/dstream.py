"""DStream (Spark Streaming) checkpoints, read without a JVM: ``inspect`` on a ``StreamingContext``'s
checkpoint directory.

What Spark writes there (``streaming/.../Checkpoint.scala``, ``JobGenerator``): for every batch time T, the
whole DStream graph (its pending batches, a file stream's files per batch) Java-serialized inside an LZ4 block
stream as ``checkpoint-T``, written twice (when the batch's jobs are generated and when they are done; the
second write renames the first to ``checkpoint-T.bk``) through a ``temp`` file; Spark keeps the newest 10 such
files. RDD checkpoints of stateful DStreams (``updateStateByKey``) go under ``<uuid>/rdd-N/``.

Without a JVM the graph cannot be decoded, but the files can be judged:

- ``dstream-truncated``: a file whose LZ4 block stream does not end with its end-of-stream block (a torn
  write). At restart Spark's reader skips it and falls back to an older file: the context restarts from an
  older batch time and re-runs the batches after it (their outputs are written again);
- ``dstream-missing``: ``checkpoint-T`` gone while its ``.bk`` and newer times are there (a deleted file);
- ``dstream-gap`` (a note): batch times missing between the oldest and newest kept ones, at the batch interval
  the kept times show: a driver's downtime (the batches a restarted context runs for the time it was down are
  not checkpointed one by one: measured) or deleted files; the two cannot be told apart from the files;
- ``dstream-temp`` (a note): a ``temp`` file left by a write that did not finish;
- ``dstream-codec`` (a note): a file compressed with another codec than lz4 (not decoded, not judged).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from functools import reduce
from itertools import pairwise
from math import gcd
from pathlib import Path
from typing import Any

CHECKPOINT_RE = re.compile(r"^checkpoint-(\d+)(\.bk)?$")
LZ4_MAGIC = b"LZ4Block"
#: magic (8), token (1), compressed length, original length, checksum (int32 little-endian each).
HEADER = 21
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_dstream_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` looks like a ``StreamingContext`` checkpoint (``checkpoint-<ms>`` files, no ``offsets/``)."""
    p = Path(path)
    if not p.is_dir() or (p / "offsets").is_dir():
        return False
    return any(CHECKPOINT_RE.match(c.name) for c in p.iterdir())


def lz4_problem(data: bytes) -> str | None:
    """Why ``data`` is not a complete LZ4 block stream (lz4-java's ``LZ4BlockOutputStream``), else ``None``."""
    if not LZ4_MAGIC.startswith(data[:8]) or not data:
        return "no LZ4Block magic at byte 0 (not an lz4 stream: another codec, or not a checkpoint Spark wrote)"
    pos = 0
    while True:
        if len(data) - pos < HEADER:
            return f"ends inside a block header at byte {len(data)} (no end-of-stream block: a torn write)"
        if data[pos : pos + 8] != LZ4_MAGIC:
            return f"no LZ4Block magic at byte {pos} (not a checkpoint Spark wrote, or damaged)"
        compressed, original, _checksum = struct.unpack_from("<iii", data, pos + 9)
        if compressed < 0 or original < 0:
            return f"a negative block length at byte {pos} (damaged)"
        pos += HEADER
        if compressed == 0 and original == 0:
            return None if pos == len(data) else f"{len(data) - pos} byte(s) after the end-of-stream block"
        if len(data) - pos < compressed:
            return f"ends inside a block at byte {len(data)} of {pos + compressed} (a torn write)"
        pos += compressed


def lz4_block_decompress(src: bytes, size: int) -> bytes:
    """One LZ4 block (the LZ4 block format: sequences of literals and back-references) into ``size`` bytes."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        i += 1
        n = token >> 4
        if n == 15:
            while True:
                extra = src[i]
                i += 1
                n += extra
                if extra != 255:
                    break
        out += src[i : i + n]
        i += n
        if i >= len(src):
            break
        offset = src[i] | (src[i + 1] << 8)
        i += 2
        length = token & 15
        if length == 15:
            while True:
                extra = src[i]
                i += 1
                length += extra
                if extra != 255:
                    break
        length += 4
        start = len(out) - offset
        if offset == 0 or start < 0:
            raise ValueError("a back-reference before the start of the block")
        for k in range(length):  # byte by byte: a match may overlap what it copies
            out.append(out[start + k])
    if len(out) != size:
        raise ValueError(f"block decompressed to {len(out)} bytes, its header says {size}")
    return bytes(out)


def lz4_stream_payload(data: bytes) -> bytes:
    """The bytes inside a complete LZ4 block stream (``lz4_problem(data)`` is ``None``)."""
    out, pos = bytearray(), 0
    while True:
        token = data[pos + 8]
        compressed, original, _ = struct.unpack_from("<iii", data, pos + 9)
        pos += HEADER
        if compressed == 0 and original == 0:
            return bytes(out)
        block = data[pos : pos + compressed]
        out += block if token & 0xF0 == 0x10 else lz4_block_decompress(block, original)
        pos += compressed


#: A Java-serialized string (TC_STRING, 2-byte length) naming a file URI; a lookahead, so that a string right
#: after another one (``...jsont\x00\x38file:/...``) is found too.
_JAVA_URI = re.compile(rb"\x74(?=(..)((?:file|hdfs|s3a?|abfss?|gs):/[^\x00-\x1f]*))", re.DOTALL)
#: URIs the serialized SparkConf names (``spark.jars``, the warehouse), not input files.
_CONF_URI = re.compile(r",|\.(jar|zip|egg|py)$|/spark-warehouse$")


def referenced_files(data: bytes) -> list[str]:
    """Input file URIs the serialized DStream graph names (a file stream's files of the batches it remembers);
    ``[]`` when the file cannot be decoded."""
    try:
        payload = lz4_stream_payload(data)
    except (ValueError, IndexError, struct.error):
        return []
    found = []
    for m in _JAVA_URI.finditer(payload):
        length = int.from_bytes(m.group(1), "big")
        uri = m.group(2)[:length].decode("utf-8", "replace")
        if len(m.group(2)) >= length and not uri.endswith("/") and not _CONF_URI.search(uri):
            found.append(uri)
    return sorted(set(found))


@dataclass(frozen=True)
class CheckpointFile:
    name: str
    time_ms: int
    backup: bool
    size: int
    problem: str | None
    #: Input file URIs the serialized graph names (the files of the batches a file stream remembers).
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class DStreamFinding:
    id: str
    severity: str  # "violation" | "note"
    path: str
    message: str


@dataclass
class DStreamReport:
    """The checkpoint's files, batch times, RDD checkpoints and findings."""

    path: str
    files: list[CheckpointFile]
    times: list[int]
    interval_ms: int | None
    rdd_dirs: dict[str, list[str]]
    findings: list[DStreamFinding] = field(default_factory=list)

    @property
    def violations(self) -> list[DStreamFinding]:
        return [f for f in self.findings if f.severity == "violation"]

    @property
    def exit_code(self) -> int:
        return 1 if self.violations else 0


def inspect_dstream(path: str | Path) -> DStreamReport:
    """Read and judge the DStream checkpoint at ``path`` (see the module docstring)."""
    root = Path(path)
    files = []
    for child in sorted(root.iterdir()):
        m = CHECKPOINT_RE.match(child.name)
        if m and child.is_file():
            data = child.read_bytes()
            problem = lz4_problem(data)
            inputs = () if problem else tuple(u for u in referenced_files(data) if not _under(u, root))
            files.append(CheckpointFile(child.name, int(m.group(1)), bool(m.group(2)), len(data), problem, inputs))
    files.sort(key=lambda f: (f.time_ms, f.backup))
    times = sorted({f.time_ms for f in files})
    steps = [b - a for a, b in pairwise(times)]
    interval = reduce(gcd, steps) if steps else None
    rdds = {
        d.name: sorted(r.name for r in d.iterdir() if r.is_dir() and r.name.startswith("rdd-"))
        for d in sorted(root.iterdir())
        if d.is_dir() and UUID_RE.match(d.name)
    }
    report = DStreamReport(str(root), files, times, interval, rdds)
    for f in files:
        if f.problem and f.problem.startswith("no LZ4Block magic at byte 0"):
            report.findings.append(
                DStreamFinding(
                    "dstream-codec",
                    "note",
                    str(root / f.name),
                    f"{f.name} is not an LZ4 block stream: written with another spark.io.compression.codec (zstd, "
                    "snappy), which the inspector does not decode; its completeness is not checked",
                )
            )
        elif f.problem:
            report.findings.append(
                DStreamFinding(
                    "dstream-truncated",
                    "violation",
                    str(root / f.name),
                    f"{f.name} {f.problem}: at restart Spark skips it and recovers from an older checkpoint file, "
                    "re-running the batches after that time (their outputs are written again)",
                )
            )
    if interval:
        absent = [t for t in range(times[0] + interval, times[-1], interval) if t not in times]
        runs: list[list[int]] = []
        for t in absent:  # one note per run of consecutive missing times
            if runs and t - runs[-1][-1] == interval:
                runs[-1].append(t)
            else:
                runs.append([t])
        for run in runs:
            span = f"{run[0]}" if len(run) == 1 else f"{run[0]}..{run[-1]} ({len(run)} times)"
            report.findings.append(
                DStreamFinding(
                    "dstream-gap",
                    "note",
                    str(root / f"checkpoint-{run[0]}"),
                    f"batch time(s) {span} have no checkpoint file (every {interval} ms between {times[0]} and "
                    f"{times[-1]}): a driver's downtime, whose batches a restarted context runs without "
                    "checkpointing them one by one, or deleted checkpoint files",
                )
            )
    names = {f.name for f in files}
    for t in times[1:-1]:  # the oldest may have lost one of its pair to Spark's cleanup; the newest is in flight
        if f"checkpoint-{t}" not in names and not (root / "temp").exists():
            report.findings.append(
                DStreamFinding(
                    "dstream-missing",
                    "violation",
                    str(root / f"checkpoint-{t}"),
                    f"checkpoint-{t} is missing while its backup checkpoint-{t}.bk and newer batch times are there: "
                    "a deleted checkpoint file",
                )
            )
    if (root / "temp").exists():
        report.findings.append(
            DStreamFinding("dstream-temp", "note", str(root / "temp"), "a checkpoint write did not finish (temp)")
        )
    return report


def _under(uri: str, root: Path) -> bool:
    """Whether ``uri`` names ``root`` or something in it (the checkpoint itself, not an input file)."""
    path = uri.split(":", 1)[1].lstrip("/")
    return ("/" + path).startswith(str(root.resolve()))


def render_dstream(report: DStreamReport) -> str:
    """The report as text: a headline, the batch times with their files, the RDD checkpoints, findings."""
    head = (
        f"DStream checkpoint INCONSISTENT: {len(report.violations)} violation(s) "
        f"({', '.join(sorted({f.id for f in report.violations}))})"
        if report.violations
        else "DStream checkpoint OK: every file complete, none of a pair missing"
    )
    every = f", every {report.interval_ms} ms" if report.interval_ms else ""
    lines = [head, f"checkpoint: {report.path}", f"batch times ({len(report.times)}{every}):"]
    seen: set[str] = set()
    for t in report.times:
        names = [f for f in report.files if f.time_ms == t]
        shown = ", ".join(f"{f.name} ({f.size} B{', ' + 'INCOMPLETE' if f.problem else ''})" for f in names)
        lines.append(f"  {t}  {shown}")
        inputs = next((f.inputs for f in names if not f.backup and not f.problem), ())
        new = [u.rsplit("/", 1)[-1] for u in inputs if u not in seen]
        if inputs:
            lines.append(f"      input files remembered: {len(inputs)}" + (f"; new: {', '.join(new)}" if new else ""))
        seen |= set(inputs)
    for uid, rdds in report.rdd_dirs.items():
        lines.append(f"RDD checkpoints {uid}: {', '.join(rdds) or 'none'}")
    if report.findings:
        lines.append(f"findings ({len(report.findings)}):")
        lines += [f"  [{f.id}] {f.path}: {f.message}" for f in report.findings]
    return "\n".join(lines)


def dstream_json(report: DStreamReport) -> dict[str, Any]:
    from dataclasses import asdict

    return {
        "kind": "dstream",
        "path": report.path,
        "ok": not report.violations,
        "times": report.times,
        "interval_ms": report.interval_ms,
        "files": [asdict(f) for f in report.files],
        "rdd_checkpoints": report.rdd_dirs,
        "findings": [asdict(f) for f in report.findings],
    }
