"""``docs/reference.md``, generated from the code: what a scenario, its sink context and its sources
take, and the callables a user writes for them.

A class's text is its docstring; a field's is the ``#:`` comment above it in the source, else the
clause of the class docstring that names it (````name````). A field with neither is refused: write
its ``#:`` comment in the code. A callable's signature is the code span its comment starts with.

``python -m harness.cli.reference --write`` rewrites the page; ``--check`` exits 1 when the page
on disk differs from the code (``tests/unit/test_reference_docs.py`` fails then too).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.cli.generated import page_main
from harness.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference.md"
COMMAND = "python -m harness.cli.reference --write"

#: Classes documented field by field: (section, ``module:Name``, how users import it).
CLASSES = (
    ("Scenario", "scenarios.base:Scenario", "from scenarios import Scenario"),
    ("Scenario", "scenarios.base:SinkContext", "from scenarios import SinkContext"),
    ("Scenario", "scenarios.base:OracleContext", "from scenarios.base import OracleContext"),
    ("Scenario", "scenarios.base:StateExpectation", "from scenarios.base import StateExpectation"),
    ("Sources", "scenarios.sources:Replayable", "from harness.sources import Replayable"),
    ("Sources", "scenarios.userrows:Rows", "from harness.sources import Rows"),
    ("Sources", "scenarios.sources:FileDirectory", "from harness.sources import FileDirectory"),
    ("Sources", "harness.sources.python:PythonSource", "from harness.sources import PythonSource"),
    ("Sources", "scenarios.kafka.source:KafkaTopic", "from scenarios.kafka import KafkaTopic"),
    ("Sources", "scenarios.delta.source:DeltaTableSource",
     "from scenarios.delta.source import DeltaTableSource"),
    ("DStream", "scenarios.dstream:dstream_scenario",
     "from scenarios.dstream import dstream_scenario"),
    ("DStream", "scenarios.dstream:DStreamContext", "from scenarios.dstream import DStreamContext"),
)  # fmt: skip
#: Callables a user writes: (where it is set, ``module:Name`` of the field's class or of the alias).
CALLABLES = (
    ("Scenario.transform", "scenarios.base:Scenario.transform"),
    ("Scenario.attach_sink", "scenarios.base:Scenario.attach_sink"),
    ("Scenario.read_output", "scenarios.base:Scenario.read_output"),
    ("Scenario.oracle", "scenarios.base:Scenario.oracle"),
    ("Scenario.resource", "scenarios.base:ResourceHook"),
    ("StateExpectation.expected", "scenarios.base:StateExpectation.expected"),
    ("dstream_scenario(setup=)", "scenarios.dstream:SetupFn"),
    ("PythonSource.context", "harness.sources.contexts:ContextFactory"),
)
INTROS = {
    "Scenario": "A pipeline under test and what the harness hands its code.",
    "Sources": "What `Scenario.source` takes: [sources.md](sources.md), [kafka.md](kafka.md).",
    "DStream": "A DStream application as a scenario ([dstreams.md](dstreams.md)).",
}
HEADINGS = {"Scenario": "Scenario and its contexts", "DStream": "DStream applications"}
_ROLE = re.compile(r":(?:class|func|data|mod|attr|meth|obj):`(~?)([^`]+)`")
_SIGNATURE = re.compile(r"^``([^`]+)``:\s*")


class ReferenceError(UsageError, ValueError):
    """The code lacks documentation the page needs; the message says which and what to write."""


def _obj(ref: str) -> Any:
    module, _, name = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def markdown(text: str) -> str:
    """reST-flavoured docstring text as Markdown: ````x```` and ``:class:`x``` become `` `x` ``."""
    text = _ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)
    return text.replace("``", "`")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter (outside code) and a final full stop."""
    text = text.strip()
    text = text[:1].upper() + text[1:] if text[:1].isalpha() else text
    return text if text.endswith((".", "!", "?")) else text + "."


def _comments_above(lines: Sequence[str], lineno: int) -> str:
    """The ``#:`` comment lines right above line ``lineno`` (1-based), joined."""
    found: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        found.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    return " ".join(found)


def comments(obj: Any) -> dict[str, str]:
    """Name -> ``#:`` comment of the names assigned in ``obj``'s body (a class's or a module's)."""
    source = textwrap.dedent(inspect.getsource(obj))
    lines = source.splitlines()
    tree = ast.parse(source)
    body = tree.body[0].body if isinstance(obj, type) else tree.body  # type: ignore[attr-defined]
    out: dict[str, str] = {}
    for node in body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        for target in targets:
            if isinstance(target, ast.Name):
                out[target.id] = _comments_above(lines, node.lineno)
    return out


def clauses(doc: str) -> list[str]:
    """``doc``'s clauses: split at ``. `` and ``; `` outside brackets."""
    text, out, depth, start = " ".join(doc.split()) + " ", [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and ch in ".;" and text[i + 1] == " ":
            out.append(text[start:i].strip())
            start = i + 1
    return [c for c in (*out, text[start:].strip()) if c]


def described(name: str, comment: str, doc: str) -> str | None:
    """A name's text: its comment, else the docstring clause that starts with it or names it."""
    if comment:
        return comment
    found = [c for c in clauses(doc) if f"``{name}``" in c]
    first = [c for c in found if c.startswith(f"``{name}``")]
    chosen = first or found
    return chosen[0] if chosen else None


def value(v: Any) -> str:
    """A default as Python source."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(map(value, v)) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        return value(f.default)
    factory: Any = f.default_factory
    if factory is dataclasses.MISSING:
        return "required"
    return {dict: "{}", list: "[]", tuple: "()"}.get(factory, f"{factory.__name__}()")


def _row(name: str, kind: str, default: str, text: str) -> str:
    shown = f"`{_cell(default)}`" if default != "required" else "required"
    return f"| `{name}` | `{_cell(kind)}` | {shown} | {_cell(markdown(sentence(text)))} |"


def class_table(cls: type) -> list[str]:
    """The field table of dataclass ``cls`` (fields set by ``__init__``)."""
    notes, doc = comments(cls), inspect.getdoc(cls) or ""
    rows = ["| field | type | default | what it does |", "|---|---|---|---|"]
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        text = described(f.name, notes.get(f.name, ""), doc)
        if text is None:
            where = f"{cls.__module__}.{cls.__qualname__}.{f.name}"
            raise ReferenceError(f"{where} has no documentation: write a #: comment above it")
        rows.append(_row(f.name, str(f.type), _default(f), text))
    return rows


def function_table(fn: Callable[..., Any], fields_of: type) -> list[str]:
    """The parameter table of ``fn``, whose other parameters are fields of ``fields_of``."""
    doc, own = inspect.getdoc(fn) or "", comments(fields_of)
    base = {f.name for f in dataclasses.fields(fields_of)}
    rows = ["| argument | type | default | what it does |", "|---|---|---|---|"]
    for p in inspect.signature(fn).parameters.values():
        starts = [c for c in clauses(doc) if c.startswith(f"``{p.name}``")]
        shared = f"As [`Scenario.{p.name}`](#scenario)." if p.name in base else None
        text = starts[0] if starts else own.get(p.name) or shared
        if text is None:
            where = f"{fn.__qualname__}({p.name}=)"
            raise ReferenceError(f"{where} has no documentation: name it in the docstring")
        default = "required" if p.default is p.empty else value(p.default)
        rows.append(_row(p.name, str(p.annotation), default, text))
    return rows


def callable_row(where: str, ref: str) -> str:
    """One row of the callables table: signature, where it is set, its type, what it gets."""
    module, _, attr = ref.partition(":")
    holder, _, field_name = attr.partition(".")
    if field_name:
        cls = _obj(f"{module}:{holder}")
        text = comments(cls).get(field_name, "")
        kind = next(str(f.type) for f in dataclasses.fields(cls) if f.name == field_name)
    else:
        text, kind = comments(importlib.import_module(module)).get(holder, ""), holder
    m = _SIGNATURE.match(text)
    if m is None:
        raise ReferenceError(f"{ref}: start its #: comment with ``signature(args) -> result``:")
    what = _cell(markdown(sentence(text[m.end() :])))
    return f"| `{m[1]}` | `{where}` | `{_cell(kind)}` | {what} |"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")


def render() -> str:
    """The whole page."""
    out = [
        "# Reference: what you set on a scenario",
        "",
        f"<!-- Generated from the code by `{COMMAND}`; do not edit. "
        "tests/unit/test_reference_docs.py fails when it and the code differ. -->",
        "",
        "Every field a pipeline's author sets, its default and what it changes, as the code "
        "documents it (the class docstrings and the `#:` comment above each field). A tour with "
        "examples: "
        "[getting-started.md](getting-started.md#testing-your-own-pipeline-with-pytest).",
        "",
    ]
    headings = [f"`{ref.rpartition(':')[2]}`" for _, ref, _ in CLASSES] + ["Callables you write"]
    out += [f"- [{h}](#{slug(h)})" for h in headings] + [""]
    section = ""
    for name, ref, how in CLASSES:
        if name != section:
            section = name
            out += [f"## {HEADINGS.get(name, name)}", ""]
            out += [INTROS[name], ""]
        obj = _obj(ref)
        path = obj.__module__.replace(".", "/") + ".py"
        out += [f"### `{obj.__name__}`", "", f"`{how}` ([{path}](../{path}))", ""]
        out += [markdown(inspect.getdoc(obj) or ""), ""]
        if isinstance(obj, type):
            out += [*class_table(obj), ""]
        else:
            out += [*function_table(obj, _obj("scenarios.dstream:DStreamScenario")), ""]
    out += ["## Callables you write", ""]
    out += ["| signature | set as | type | what it gets and does |", "|---|---|---|---|"]
    out += [callable_row(where, ref) for where, ref in CALLABLES]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    return page_main(
        argv,
        prog="python -m harness.cli.reference",
        description=__doc__,
        page=PAGE,
        render=render,
        command=COMMAND,
        refused=(ReferenceError,),
    )


if __name__ == "__main__":
    sys.exit(main())
