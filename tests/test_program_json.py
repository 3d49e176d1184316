"""`program_json.check_program` accepts exactly what `dsl.from_json` reads, with the
same message for the first fault: a model whose program it passes cannot fail when the
program is read later (`model.StoredProgram`)."""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import pytest

from fstsynth import dsl
from fstsynth.program_json import FIELDS, Error, check_program
from programs import PROGRAMS

#: Values put in place of a field: of every JSON type, and the values constructors refuse.
BAD_VALUES: tuple[Any, ...] = (
    None, 0, -1, 2, True, 1.5, "", "x", [], ["b", "a"], ["a", "a"], [1], {}, {"a": 1}, {"a": True},
    {"type": "Eval"}, {"type": "Delete"}, [{"type": "Delete"}],
)


def _nodes(document: Any) -> Iterator[dict[str, Any]]:
    """Every node object of a program document."""
    if isinstance(document, dict):
        if "type" in document:  # (not SetFeatures' values)
            yield document
        for value in document.values():
            yield from _nodes(value)
    elif isinstance(document, list):
        for item in document:
            yield from _nodes(item)


def _damaged(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The document with one node changed: a field dropped or given another value, its
    type renamed, or the whole node replaced."""
    text = json.dumps(document)  # (copied through its text: quicker than deepcopy)
    for k, node in enumerate(_nodes(document)):
        keys = sorted(set(node) | {key for _, key in FIELDS.get(node["type"], ())})
        changes: list[tuple[str, Any]] = [(key, value) for key in keys for value in (*BAD_VALUES, "drop")]
        changes += [("type", kind) for kind in (*FIELDS, "Eval", 3)]
        for key, value in changes:
            changed = json.loads(text)
            target = list(_nodes(changed))[k]
            if value == "drop":
                target.pop(key, None)
            else:
                target[key] = copy.deepcopy(value)
            yield changed


def _outcome(read: Any, document: Any) -> str:
    try:
        read(document)
    except (dsl.Error, Error) as exc:
        return f"error: {exc}"
    return "read"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_check_agrees_with_from_json_on_damaged_programs(name):
    document = dsl.to_json(PROGRAMS[name])
    assert check_program(document) == len(PROGRAMS[name].passes)
    seen = {"read": 0, "error": 0}
    for changed in _damaged(document):
        expected = _outcome(dsl.from_json, changed)
        if expected == "read" and changed.get("type") != "Program":
            continue  # another node type at the top: refused below
        assert _outcome(check_program, changed) == expected, changed
        seen[expected.split(":")[0]] += 1
    assert seen["read"] and seen["error"]  # both outcomes were met


def test_a_document_of_another_node_type_is_refused():
    with pytest.raises(Error, match="expected a Program, got a 'Pass' node"):
        check_program(dsl.to_json(dsl.Pass(())))
    with pytest.raises(Error, match="expected a DSL node object"):
        check_program([])


def test_every_dsl_node_type_is_checked():
    kinds = {t.__name__ for t in (*dsl.PREDICATE_TYPES, *dsl.TRANSFORMATION_TYPES)} | {"Rule", "Pass", "Program"}
    assert set(FIELDS) == kinds
