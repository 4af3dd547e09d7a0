"""``python -m harness merge RESULT.json ... [--json OUT] [--html OUT]``: the shards of one campaign as one
verdict (:mod:`harness.chaos.merge`). Exit 0 exactly-once, 1 violated, 2 unknown (a shard missing or unable to
run) or results that cannot be merged (the message names the file and what differs)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=Path, metavar="RESULT.json", help="`chaos --shard I/N --json` files")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the merged result as JSON")
    p.add_argument("--html", type=Path, default=None, metavar="PATH", help="write an HTML summary of the shards")


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.chaos.merge import MergeError, merge_results, merged_doc, merged_html, render_merged

    try:
        merged = merge_results(list(args.results))
    except MergeError as exc:
        print(f"harness: merge: {exc}", file=sys.stderr)
        return 2
    for out in (args.json, args.html):
        if out is not None and out.is_dir():
            print(f"harness: merge: {out} is a directory; give a file path", file=sys.stderr)
            return 2
    print(render_merged(merged))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(merged_doc(merged), indent=2, default=str))
    if args.html is not None:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(merged_html(merged, args.html))
        print(f"summary: {args.html}", file=sys.stderr)
    return merged.exit_code
