"""A program's JSON document checked without making its DSL nodes.

Public API:
    Error, check_program(document) -> int (its number of passes)

Why apart from `fstsynth.dsl.from_json`: a model file keeps each pair's program as JSON,
and `apply` must refuse a damaged one before any output, but runs the apply tables,
not the program. Importing `fstsynth.dsl` (its node classes are dataclasses, each made
at import, and `dataclasses` itself) was a quarter of a one-word `apply`; this module
imports nothing. It accepts exactly the documents `from_json` accepts, with the same
message for the first fault (tests/test_program_json.py compares the two on damaged
documents), so the program read later (`model.StoredProgram`) cannot fail.
"""

from __future__ import annotations

from typing import Any, Callable


class Error(ValueError):
    """A program's JSON document is malformed (the message `dsl.from_json` gives)."""


def check_program(document: Any) -> int:
    """Check a program's JSON document as `dsl.from_json` reads it (its first fault:
    `Error`); the number of its passes. A document of another node type is refused."""
    _check(document)
    if document["type"] != "Program":
        raise Error(f"expected a Program, got a {document['type']!r} node")
    return len(document["passes"])


def _token_list(data: dict[str, Any], key: str) -> None:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise Error(f"{data.get('type')}: {key!r} must be a list of tokens")


def _int(data: dict[str, Any], key: str) -> None:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Error(f"{data.get('type')}: {key!r} must be an integer")


def _str(data: dict[str, Any], key: str) -> None:
    if not isinstance(data.get(key), str):
        raise Error(f"{data.get('type')}: {key!r} must be a string")


def _str_or_null(data: dict[str, Any], key: str) -> None:
    if data.get(key) is not None:
        _str(data, key)


def _node(data: dict[str, Any], key: str) -> None:
    _check(data.get(key))


def _nodes(data: dict[str, Any], key: str) -> None:
    value = data.get(key)
    if not isinstance(value, list):
        raise Error(f"{data.get('type')}: {key!r} must be a list")
    for item in value:
        _check(item)


def _inclusive(data: dict[str, Any], key: str) -> None:
    if not isinstance(data.get(key, False), bool):
        raise Error("TierIs: 'inclusive' must be true or false")


def _values(data: dict[str, Any], key: str) -> None:
    values = data.get(key)
    if not isinstance(values, dict) or not all(isinstance(v, bool) for v in values.values()):
        raise Error("SetFeatures: 'values' must map feature names to true/false")


Field = tuple[Callable[[dict[str, Any], str], None], str]

#: Per node type, its fields in the order `from_json` reads them, and how each is checked.
FIELDS: dict[str, tuple[Field, ...]] = {
    "Program": ((_nodes, "passes"),),
    "Pass": ((_nodes, "rules"),),
    "Rule": ((_nodes, "predicates"), (_node, "transformation")),
    "IsToken": ((_str_or_null, "token"), (_int, "offset")),
    "Is": ((_str, "feature"), (_int, "offset")),
    "TransformationApplied": ((_node, "transformation"), (_int, "offset")),
    "TierIs": ((_inclusive, "inclusive"), (_str, "tier"), (_str_or_null, "feature"), (_int, "index")),
    "Not": ((_node, "predicate"),),
    "ReplaceBy": ((_str, "source"), (_token_list, "target")),
    "ReplaceAnyBy": ((_token_list, "target"),),
    "Insert": ((_token_list, "tokens"),),
    "Delete": (),
    "CopyReplace": ((_int, "offset"),),
    "CopyInsert": ((_int, "offset"),),
    "Identity": (),
    "SetFeatures": ((_values, "values"),),
    "Agree": ((_token_list, "features"), (_int, "offset"), (_str_or_null, "tier")),
}


def _check(data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise Error(f"expected a DSL node object with a 'type', got {str(data)[:60]!r}")
    kind = data["type"]
    fields = FIELDS.get(kind)
    if fields is None:
        raise Error(f"unknown DSL node type {kind!r}")
    for check, key in fields:
        check(data, key)
    _check_values(kind, data)


def _check_values(kind: str, data: dict[str, Any]) -> None:
    """What the node's constructor refuses (its `__post_init__` in `fstsynth.dsl`)."""
    if kind == "TierIs" and data["index"] == 0:
        raise Error("TierIs: index must be nonzero (1 = nearest to the right, -1 = to the left)")
    if kind == "SetFeatures" and not data["values"]:
        raise Error("SetFeatures: values must name at least one feature, each once, in sorted order")
    if kind == "Agree":
        features = data["features"]
        if not features or features != sorted(set(features)):
            raise Error("Agree: features must name at least one feature, each once, in sorted order")
        if data["offset"] == 0:
            raise Error("Agree: offset must be nonzero (x agrees with another token)")
