"""``python -m harness merge RESULT.json ...``: the shards of one campaign (``chaos --shard I/N --json``) as one
verdict, one JSON document and one HTML summary.

The results must be of one campaign (same scenario, seed, profile, example count, volume, nemesis, master and
shard count N), each shard at most once. The verdict is ``violated`` when any shard found a violation (the
failures are listed with their bundles, timelines and replay commands), else ``unknown`` when a shard could not
run or is missing (named), else ``exactly-once``: every block of the campaign ran and held.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.engine.commandline import harness_command
from harness.errors import UsageError
from harness.timeline.page import CHECK_SCRIPT, CSS
from harness.timeline.svg import esc

#: Fields every shard of one campaign shares.
SAME = (
    "scenario", "seed", "profile", "examples_planned", "volume", "batch_rows", "nemesis", "master", "block_examples",
)  # fmt: skip
EXIT = {"exactly-once": 0, "violated": 1}


class MergeError(UsageError, ValueError):
    """The results cannot be merged; the message names the file and what differs."""


@dataclass
class Merged:
    campaign: dict[str, Any]
    shards: int
    results: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: Result files given that do not exist (a shard job that wrote none); their shards are among ``missing``.
    absent: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        verdicts = [doc["verdict"] for _, doc in self.results]
        if "violated" in verdicts:
            return "violated"
        return "unknown" if self.missing or any(v != "exactly-once" for v in verdicts) else "exactly-once"

    @property
    def exit_code(self) -> int:
        return EXIT.get(self.verdict, 2)


def load_result(path: Path) -> dict[str, Any]:
    """A ``chaos --json`` document; :class:`MergeError` naming ``path`` when it is not one."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise MergeError(f"{path}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise MergeError(f"{path}: not JSON ({exc}); give the files `chaos --json PATH` wrote") from None
    if not isinstance(doc, dict) or doc.get("kind") != "campaign":
        raise MergeError(f'{path}: not a `chaos --json` campaign result (no "kind": "campaign")')
    return doc


def _shard_of(doc: dict[str, Any], path: Path | None = None) -> tuple[int, int]:
    text = doc.get("shard") or "1/1"
    try:
        index, count = (int(p) for p in str(text).split("/"))
    except ValueError:
        raise MergeError(f"{path}: its shard {text!r} is not I/N; was the file edited?") from None
    return index, count


def merge_results(paths: list[Path]) -> Merged:
    """The campaign the shard results at ``paths`` make up (see the module docstring)."""
    if not paths:
        raise MergeError("give the shards' result files (chaos --shard I/N --json PATH), one or more")
    absent = [str(path) for path in paths if not path.exists()]
    docs = [(path, load_result(path)) for path in paths if path.exists()]
    if not docs:
        raise MergeError(f"none of the result files exists ({', '.join(absent)}); did the shard jobs run?")
    first_path, first = docs[0]
    count = _shard_of(first, first_path)[1]
    seen: dict[int, Path] = {}
    for path, doc in docs:
        for key in SAME:
            if doc.get(key) != first.get(key):
                raise MergeError(
                    f"{path}: {key} is {doc.get(key)!r} but {first_path} has {first.get(key)!r}; "
                    "merge only the shards of one campaign"
                )
        index, n = _shard_of(doc, path)
        if n != count:
            raise MergeError(f"{path}: shard {index}/{n} but {first_path} is one of {count} shards")
        if index in seen:
            raise MergeError(f"{path}: shard {index}/{n} is also {seen[index]}; give each shard's result once")
        seen[index] = path
    merged = Merged({key: first.get(key) for key in SAME}, count, sorted(docs, key=lambda d: _shard_of(d[1])[0]))
    merged.missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    merged.absent = absent
    return merged


def merged_doc(merged: Merged) -> dict[str, Any]:
    """The merged campaign as JSON: the verdict, totals, missing shards and each shard's own result."""
    docs = [doc for _, doc in merged.results]
    return {
        "kind": "merged-campaign",
        **merged.campaign,
        "shards": merged.shards,
        "verdict": merged.verdict,
        "missing": merged.missing,
        "absent_files": merged.absent,
        "examples": sum(d.get("examples", 0) for d in docs),
        "faults_fired": sum(d.get("faults_fired", 0) for d in docs),
        "duration_s": round(sum(d.get("duration_s", 0.0) for d in docs), 1),
        "longest_shard_s": max((d.get("duration_s", 0.0) for d in docs), default=0.0),
        "failures": [_entry(p, d) for p, d in merged.results if d["verdict"] == "violated"],
        "results": [_entry(p, d) for p, d in merged.results],
    }


def _entry(path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    keys = ("shard", "verdict", "examples", "blocks", "replayed_first", "duration_s", "error", "summary",
            "minimal_schedule", "rerun")  # fmt: skip
    entry = {"file": str(path), **{k: doc.get(k) for k in keys}}
    for key in ("bundle", "timeline", "fault_free_bundle"):
        entry[key] = _located(path, doc.get(key), doc.get(f"{key}_rel"))
    return entry


def _located(result_file: Path, absolute: str | None, relative: str | None) -> str | None:
    """Where a shard's bundle (or timeline) is now: beside its result file when it was moved with it (a
    downloaded CI artifact), else where the shard wrote it."""
    if relative is not None and (result_file.parent / relative).exists():
        return str((result_file.parent / relative).resolve())
    return absolute


def render_merged(merged: Merged) -> str:
    """The text summary: one verdict line, a line per shard, then each failure's replay command."""
    doc = merged_doc(merged)
    camp = merged.campaign
    head = (
        f"{doc['verdict']}: campaign {camp['scenario']} (seed {camp['seed']}, profile {camp['profile']}, "
        f"{camp['examples_planned']} examples in {merged.shards} shard(s)); {doc['examples']} example(s) run"
    )
    lines = [head]
    for entry in doc["results"]:
        what = entry["summary"] or (entry["error"] or "").split("\n")[0] or "no violation"
        lines.append(f"  shard {entry['shard'] or '1/1':<6} {entry['verdict']:<12} {entry['examples']:>4} ex  {what}")
    lines += [f"  shard {m:<6} missing: no result was given for it" for m in merged.missing]
    lines += [f"  (not found: {path})" for path in merged.absent]
    for failure in doc["failures"]:
        if failure["bundle"]:
            lines.append(f"replay: {harness_command('replay', failure['bundle'])}")
        if failure["timeline"]:
            lines.append(f"timeline: {failure['timeline']}")
    return "\n".join(lines)


BADGE = {"exactly-once": "ok", "violated": "bad", "unknown": "soft"}


def merged_html(merged: Merged, page: Path) -> str:
    """A self-contained HTML summary; bundle and timeline links are relative to ``page``'s directory."""
    doc = merged_doc(merged)
    camp = merged.campaign

    def link(target: str | None, text: str) -> str:
        if not target:
            return "-"
        href = os.path.relpath(target, page.resolve().parent)
        return f'<a href="{esc(href)}">{esc(text)}</a>'

    rows = "".join(
        f'<tr><td>{esc(e["shard"] or "1/1")}</td><td><span class="badge {BADGE.get(e["verdict"], "none")}">'
        f"{esc(e['verdict'])}</span></td><td>{e['examples']}</td><td>{esc(', '.join(map(str, e['blocks'] or [])))}"
        f"</td><td>{e['duration_s']}</td><td>{esc(e['summary'] or (e['error'] or '').split(chr(10))[0] or '-')}"
        f"</td><td>{link(e['timeline'], 'timeline')} {link(e['bundle'], 'bundle')}</td>"
        f"<td><code>{esc(e['rerun'] or '')}</code></td></tr>"
        for e in doc["results"]
    )
    rows += "".join(
        f'<tr><td>{esc(m)}</td><td><span class="badge none">missing</span></td><td colspan="6">no result given'
        "</td></tr>"
        for m in merged.missing
    )
    title = f"chaos {camp['scenario']}: {doc['verdict']}"
    meta = (
        f"seed {camp['seed']}, profile {camp['profile']}, {camp['examples_planned']} examples in "
        f"{merged.shards} shard(s); {doc['examples']} run, {doc['faults_fired']} faults fired, "
        f"{doc['duration_s']} s in all"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<style>{CSS}</style></head><body><h1>{esc(title)}</h1><div class="meta">{esc(meta)}</div>'
        '<table class="summary" id="shards"><tr><th>shard</th><th>verdict</th><th>examples</th><th>blocks</th>'
        f"<th>seconds</th><th>result</th><th>failure</th><th>rerun</th></tr>{rows}</table>"
        f"<script>{CHECK_SCRIPT}</script></body></html>"
    )
