"""scripts/mutation_test's table of equivalent mutants: an entry names its mutant by
function, source line and change, so that lines moved above it leave it alone, and an
entry whose code changed stops the run (on a small made-up module, not the project's)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import ModuleType

import pytest

from conftest import script_module

BEFORE = '''\
LIMIT = 4096


def pick(rows):
    if rows > LIMIT:  # many rows
        return rows - 1
    return rows + 1


class Box:
    def size(self, n):
        return n + 1
'''

# The same code with lines added above every mutant, a comment changed, and `size`
# re-indented (the same qualified name, another depth): every key stays.
AFTER = '''\
"""A docstring that was not there."""

import math

LIMIT = 4096


def added(x):
    return x + 1


def pick(rows):
    # a new comment line
    if rows > LIMIT:  # many rows, sorted by numpy
        return rows - 1
    return rows + 1


class Box:
    if True:
        def size(self, n):
            return n + 1
'''


def _script() -> ModuleType:
    return script_module("mutation_test")


def _write(root: Path, text: str) -> str:
    (root / "made_up.py").write_text(text, encoding="utf-8")
    return "made_up.py"


def test_a_key_survives_lines_moved_above_it_and_comments(tmp_path):
    mt = _script()
    module = _write(tmp_path, BEFORE)
    before = {m.key: m for m in mt.mutants(module, tmp_path)}
    gt = (module, "pick", "if rows > LIMIT:", "3 Gt -> GtE")
    plus = (module, "Box.size", "return n + 1", "7 Add -> Sub")
    assert gt in before and plus in before
    mt.check_equivalent_entries([module], {gt: "why", plus: "why"}, tmp_path)

    _write(tmp_path, AFTER)
    after = {m.key: m for m in mt.mutants(module, tmp_path)}
    assert gt in after and plus in after
    # Other numbers and lines, the same mutants.
    assert (after[gt].index, after[gt].line) != (before[gt].index, before[gt].line)
    assert after[plus].line != before[plus].line
    mt.check_equivalent_entries([module], {gt: "why", plus: "why"}, tmp_path)


def test_the_same_line_in_two_functions_or_twice_in_one_has_keys_of_its_own(tmp_path):
    _write(tmp_path, "def f(x):\n    y = x + 1\n    y = x + 1\n    return y\n\n\ndef g(x):\n    y = x + 1\n")
    mt = _script()
    keys = [m.key for m in mt.mutants("made_up.py", tmp_path) if m.description == "Add -> Sub"]
    assert keys == [
        ("made_up.py", "f", "y = x + 1", "4 Add -> Sub"),
        ("made_up.py", "f", "y = x + 1", "4 Add -> Sub [2]"),
        ("made_up.py", "g", "y = x + 1", "4 Add -> Sub"),
    ]


def test_an_entry_whose_code_changed_or_moved_stops_the_run(tmp_path):
    mt = _script()
    module = _write(tmp_path, BEFORE)
    entry = (module, "pick", "if rows > LIMIT:", "3 Gt -> GtE")
    _write(tmp_path, BEFORE.replace("if rows > LIMIT:", "if rows >= LIMIT:"))
    with pytest.raises(mt.StaleEntryError, match="stale EQUIVALENT entry") as caught:
        mt.check_equivalent_entries([module], {entry: "why"}, tmp_path)
    assert "if rows > LIMIT:" in str(caught.value)
    # Moved to another function: stale too (its reason may name the old one), and the
    # message shows where the same code and change are now.
    _write(tmp_path, BEFORE.replace("def pick(", "def choose("))
    with pytest.raises(mt.StaleEntryError, match="stale EQUIVALENT entry") as caught:
        mt.check_equivalent_entries([module], {entry: "why"}, tmp_path)
    assert "now? ('made_up.py', 'choose', 'if rows > LIMIT:', '3 Gt -> GtE')" in str(caught.value)
    # A module not asked for is not checked.
    mt.check_equivalent_entries(["other.py"], {entry: "why"}, tmp_path)


def test_the_project_table_names_current_mutants():
    """Every entry of EQUIVALENT names a mutant of the project as it is now."""
    mt = _script()
    modules = sorted({key[0] for key in mt.EQUIVALENT})
    mt.check_equivalent_entries(modules)


def test_a_run_with_a_stale_entry_stops_before_any_mutant(monkeypatch, capsys):
    mt = _script()
    stale = ("fstsynth/dsl.py", "nowhere", "x = 1", "4 1 -> 2")
    monkeypatch.setattr(mt, "EQUIVALENT", {stale: "why"})
    monkeypatch.setattr(mt, "run_mutant_forked", lambda *args: pytest.fail("a mutant was run"))
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert mt.main(["fstsynth/dsl.py", "--only", "0"]) == 2
    finally:  # main sets its own, for a run
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert "stale EQUIVALENT entry ('fstsynth/dsl.py', 'nowhere'" in capsys.readouterr().err
