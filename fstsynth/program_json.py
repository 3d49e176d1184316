"""A program's JSON document checked without making its DSL nodes.

Public API:
    Error, check_program(document) -> int (its number of passes), check_node(document),
    FIELDS (per node type, its fields)

Why apart from `fstsynth.dsl.from_json`: a model file keeps each pair's program as JSON,
and `apply` must refuse a damaged one before any output, but runs the apply tables,
not the program. Importing `fstsynth.dsl` (its node classes are dataclasses, each made
at import, and `dataclasses` itself) was a quarter of a one-word `apply`; this module
imports nothing. `from_json` checks a document here before it builds nodes from
`FIELDS`, so both accept the same documents with the same message for the first fault,
and the program read later (`model.StoredProgram`) cannot fail; what the node classes'
constructors refuse is `refused`, which they call too (tests/test_program_json.py
reads damaged documents both ways).
"""

from __future__ import annotations

from typing import Any, Callable, Literal


class Error(ValueError):
    """A program's JSON document is malformed (the message `dsl.from_json` gives)."""


def check_program(document: Any) -> int:
    """Check a program's JSON document as `dsl.from_json` reads it (its first fault:
    `Error`); the number of its passes. A document of another node type is refused."""
    check_node(document)
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
    check_node(data.get(key))


def _nodes(data: dict[str, Any], key: str) -> None:
    value = data.get(key)
    if not isinstance(value, list):
        raise Error(f"{data.get('type')}: {key!r} must be a list")
    for item in value:
        check_node(item)


def _inclusive(data: dict[str, Any], key: str) -> None:
    if not isinstance(data.get(key, False), bool):
        raise Error("TierIs: 'inclusive' must be true or false")


def _values(data: dict[str, Any], key: str) -> None:
    values = data.get(key)
    if not isinstance(values, dict) or not all(isinstance(v, bool) for v in values.values()):
        raise Error("SetFeatures: 'values' must map feature names to true/false")


#: What a field holds: a list of nodes, a node, a list of tokens, an integer, a string,
#: a string or null, a boolean (absent = false), a feature -> value map.
FieldKind = Literal["nodes", "node", "tokens", "int", "str", "str?", "bool", "values"]
Field = tuple[FieldKind, str]

#: Per node type, its fields (what each holds, its key) in the order they are checked.
#: `fstsynth.dsl.from_json` builds nodes from the same table once a document passes.
FIELDS: dict[str, tuple[Field, ...]] = {
    "Program": (("nodes", "passes"),),
    "Pass": (("nodes", "rules"),),
    "Rule": (("nodes", "predicates"), ("node", "transformation")),
    "IsToken": (("str?", "token"), ("int", "offset")),
    "Is": (("str", "feature"), ("int", "offset")),
    "TransformationApplied": (("node", "transformation"), ("int", "offset")),
    "TierIs": (("bool", "inclusive"), ("str", "tier"), ("str?", "feature"), ("int", "index")),
    "Not": (("node", "predicate"),),
    "ReplaceBy": (("str", "source"), ("tokens", "target")),
    "ReplaceAnyBy": (("tokens", "target"),),
    "Insert": (("tokens", "tokens"),),
    "Delete": (),
    "CopyReplace": (("int", "offset"),),
    "CopyInsert": (("int", "offset"),),
    "Identity": (),
    "SetFeatures": (("values", "values"),),
    "Agree": (("tokens", "features"), ("int", "offset"), ("str?", "tier")),
}

_CHECKS: dict[FieldKind, Callable[[dict[str, Any], str], None]] = {
    "nodes": _nodes, "node": _node, "tokens": _token_list, "int": _int, "str": _str,
    "str?": _str_or_null, "bool": _inclusive, "values": _values,
}


def check_node(data: Any) -> None:
    """Check one node's JSON document and the nodes in it (the first fault: `Error`)."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise Error(f"expected a DSL node object with a 'type', got {str(data)[:60]!r}")
    kind = data["type"]
    fields = FIELDS.get(kind)
    if fields is None:
        raise Error(f"unknown DSL node type {kind!r}")
    for kind_of_field, key in fields:
        _CHECKS[kind_of_field](data, key)
    # (A document's feature -> value map becomes the node's pairs sorted by name.)
    fault = refused(kind, {**data, "values": sorted(data["values"])} if kind == "SetFeatures" else data)
    if fault is not None:
        raise Error(fault)


def refused(kind: str, values: dict[str, Any]) -> str | None:
    """What the constructor of a `kind` node refuses in its field values (`values`, by
    their JSON keys; a SetFeatures' "values" as its feature names in order): the
    message, or None. The DSL's nodes check themselves with it (`__post_init__`)."""
    if kind == "TierIs" and values["index"] == 0:
        return "TierIs: index must be nonzero (1 = nearest to the right, -1 = to the left)"
    if kind in ("SetFeatures", "Agree"):
        key = "values" if kind == "SetFeatures" else "features"
        names = list(values[key])
        if not names or names != sorted(set(names)):
            return f"{kind}: {key} must name at least one feature, each once, in sorted order"
    if kind == "Agree" and values["offset"] == 0:
        return "Agree: offset must be nonzero (x agrees with another token)"
    return None
