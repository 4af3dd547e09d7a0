"""No fault action or crash point is decided by its name outside its registered definition (issue: the
house in slices). The code asks the action (:mod:`fault_injectors.registry`) what it does and the point
(:mod:`fault_injectors.points`) what it is; a string compared with a name, or a table keyed by names, is
the ladder that made a new fault touch 7-10 files."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fault_injectors.actions import BUILTIN
from fault_injectors.points import ALL as ALL_POINTS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
#: Where the built-ins are defined: the only module that may spell their names.
HOME = ROOT / "fault_injectors" / "actions.py"
#: Where the crash points are defined, and the plan module that names its constants from them.
POINTS_HOME = {ROOT / "fault_injectors" / "points.py", ROOT / "fault_injectors" / "plan.py"}
#: Names that are also ordinary words of the code (a driver's ``{"cmd": "exit"}``): only a comparison with
#: something called ``action`` counts for them.
COMMON_WORDS = {"raise", "exit"}


def code_files() -> list[Path]:
    """Every module of the three packages, in path order."""
    return [p for pkg in ("harness", "scenarios", "fault_injectors") for p in sorted((ROOT / pkg).rglob("*.py"))]


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def ladders(path: Path) -> list[str]:
    """Each place in ``path`` that spells a built-in action's name, or compares a common-word one with an
    ``action``, as ``file:line: text``."""
    source = path.read_text()
    tree = ast.parse(source)
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    names = {a.name for a in BUILTIN}
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        spelled = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        if spelled and node.value in names - COMMON_WORDS:  # type: ignore[attr-defined]
            found.append(f"{shown}:{node.lineno}: {node.value!r}")  # type: ignore[attr-defined]
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            words = [o for o in operands if isinstance(o, ast.Constant) and o.value in COMMON_WORDS]
            if words and "action" in ast.get_source_segment(source, node).lower():
                found.append(f"{shown}:{node.lineno}: {ast.get_source_segment(source, node)}")
    return sorted(found, key=lambda hit: int(hit.split(":")[1]))


def test_no_module_decides_by_an_action_name() -> None:
    found = [hit for p in code_files() if p != HOME for hit in ladders(p)]
    assert not found, "ask the action (fault_injectors.registry) instead of its name:\n" + "\n".join(found)


def test_the_check_finds_a_ladder(tmp_path: Path) -> None:
    subject = tmp_path / "subject.py"
    subject.write_text(
        'def f(rule):\n    """kill_process_group in a docstring is fine."""\n'
        '    if rule.action == "kill_broker":\n        return 1\n'
        '    if rule.action == "raise":\n        return 2\n'
        '    return {"cmd": "exit"}\n'
    )
    hits = ladders(subject)
    assert [h.split(": ", 1)[1] for h in hits] == ["'kill_broker'", 'rule.action == "raise"']


def point_comparisons(path: Path) -> list[str]:
    """Each comparison in ``path`` of something with a crash point's name (``==``, ``!=``, ``in`` a literal
    of names), as ``file:line: text``."""
    source = path.read_text()
    names = {p.name for p in ALL_POINTS}
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        literals: list[ast.expr] = []
        for operand in [node.left, *node.comparators]:
            literals += operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
        if any(isinstance(o, ast.Constant) and o.value in names for o in literals):
            found.append(f"{shown}:{node.lineno}: {ast.get_source_segment(source, node)}")
    return found


def test_no_module_compares_a_crash_point_name() -> None:
    found = [hit for p in code_files() if p not in POINTS_HOME for hit in point_comparisons(p)]
    assert not found, "ask the point (fault_injectors.points) instead of its name:\n" + "\n".join(found)


def test_the_point_check_finds_a_comparison(tmp_path: Path) -> None:
    subject = tmp_path / "subject.py"
    subject.write_text(
        'POINTS = ("sink.write.mid",)  # naming points as data is fine\n'
        "def f(point):\n"
        '    if point == "sink.write.mid":\n        return 1\n'
        '    return point in ("after_commit_logged", "x")\n'
    )
    assert [h.split(": ", 1)[1] for h in point_comparisons(subject)] == [
        'point == "sink.write.mid"',
        'point in ("after_commit_logged", "x")',
    ]


#: The run's other named kinds and the one module that may compare them by name: a schedule's op kinds
#: (:class:`harness.engine.schedule.OpKind`) and the trigger kinds (:class:`harness.engine.trigger.Trigger`'s
#: properties say what a kind means: ``scheduled``, ``epochs``, ``one_batch``, ``clocked``, ``rounds``).
def _kind_homes() -> dict[str, Path]:
    from harness.engine.schedule import OpKind
    from harness.engine.trigger import KINDS, ROUNDS

    homes = {k.value: ROOT / "harness" / "engine" / "schedule.py" for k in OpKind}
    homes.update({k: ROOT / "harness" / "engine" / "trigger.py" for k in (*KINDS, ROUNDS)})
    return homes


def _trigger_names() -> set[str]:
    from harness.engine.trigger import KINDS

    return set(KINDS)


TRIGGER_NAMES = _trigger_names()


def kind_ladders(path: Path) -> list[str]:
    """Each comparison in ``path`` of something's ``kind`` with a literal op or trigger kind that ``path`` does
    not own, as ``file:line: text``."""
    source = path.read_text()
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    homes = _kind_homes()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        text = ast.get_source_segment(source, node) or ""
        literals = [
            o.value
            for o in [node.left, *node.comparators]
            for o in ([o] if not isinstance(o, ast.Tuple | ast.Set | ast.List) else o.elts)
            if isinstance(o, ast.Constant) and isinstance(o.value, str)
        ]
        foreign = [v for v in literals if v in homes and homes[v] != path]
        # A trigger kind's name is no ordinary word: compared with anything, it is a ladder. An op kind's
        # ("run", "check") only when compared with a kind.
        if any(v in TRIGGER_NAMES for v in foreign) or ("kind" in text and foreign):
            found.append(f"{shown}:{node.lineno}: {text}")
    return found


def test_no_module_decides_by_an_op_or_trigger_kind_name() -> None:
    found = [hit for p in code_files() for hit in kind_ladders(p)]
    assert not found, "use OpKind, or ask the Trigger (scheduled, epochs, one_batch, clocked):\n" + "\n".join(found)


def test_the_kind_check_finds_a_ladder(tmp_path: Path) -> None:
    subject = tmp_path / "subject.py"
    subject.write_text(
        'def f(op, trigger, row):\n    if op.kind == "add_data":\n        return 1\n'
        '    if trigger.kind in ("once", "continuous"):\n        return 2\n'
        '    if row.kind == "source" or trigger.one_batch:\n        return 3\n'
        '    if text.split(":")[0] in ("available-now", "processing-time"):\n        return 4\n'
        '    if word == "run":\n        return 5\n'
    )
    assert [h.split(": ", 1)[1] for h in kind_ladders(subject)] == [
        'op.kind == "add_data"',
        'trigger.kind in ("once", "continuous")',
        'text.split(":")[0] in ("available-now", "processing-time")',
    ]
