"""Meta-tests: every DSL construct is exercised by the equivalence tests."""

from __future__ import annotations

import typing

from fstsynth import dsl
from programs import PROGRAMS


def _node_types(node, seen: set[type]) -> None:
    seen.add(type(node))
    if isinstance(node, dsl.Program):
        for p in node.passes:
            _node_types(p, seen)
    elif isinstance(node, dsl.Pass):
        for r in node.rules:
            _node_types(r, seen)
    elif isinstance(node, dsl.Rule):
        for p in node.predicates:
            _node_types(p, seen)
        _node_types(node.transformation, seen)
    elif isinstance(node, dsl.Not):
        _node_types(node.predicate, seen)
    elif isinstance(node, dsl.TransformationApplied):
        _node_types(node.transformation, seen)


def test_equivalence_corpus_uses_every_construct():
    seen: set[type] = set()
    for program in PROGRAMS.values():
        _node_types(program, seen)
    constructs = set(typing.get_args(dsl.Predicate)) | set(typing.get_args(dsl.Transformation))
    missing = sorted(c.__name__ for c in constructs - seen)
    assert not missing, f"constructs missing from tests/programs.py: {missing}"


def test_dsl_type_lists_match_the_unions():
    assert set(dsl.PREDICATE_TYPES) == set(typing.get_args(dsl.Predicate))
    assert set(dsl.TRANSFORMATION_TYPES) == set(typing.get_args(dsl.Transformation))


def _token_tests() -> list[dsl.IsToken]:
    """Every IsToken test of the corpus (under a Not or not)."""
    tests = []
    for program in PROGRAMS.values():
        for p in program.passes:
            for r in p.rules:
                for pred in r.predicates:
                    inner = pred.predicate if isinstance(pred, dsl.Not) else pred
                    if isinstance(inner, dsl.IsToken):
                        tests.append(inner)
    return tests


def test_boundary_in_the_corpus():
    # Boundary tests on both sides and the start position are the risky compiler cases.
    offsets = {t.offset for t in _token_tests() if t.token is dsl.BOUNDARY}
    assert {-1, 0, 1} <= offsets


def test_every_token_a_rule_tests_is_in_the_corpus_alphabet():
    """test_equivalence.py runs every short word over the corpus's alphabet: a token a
    rule tests but missing from it would never be tried."""
    from programs import ALPHABET

    tested = {t.token for t in _token_tests() if t.token is not dsl.BOUNDARY}
    assert tested and tested <= set(ALPHABET), tested - set(ALPHABET)


def test_importing_the_library_leaves_the_root_logger_alone():
    """An application's logging set-up survives `import fstsynth...` (lingpy, imported
    by the aligner, logs at import; we silence it without touching the root logger)."""
    import subprocess
    import sys

    script = (
        "import logging\n"
        "logging.getLogger().setLevel(logging.DEBUG)\n"
        "import fstsynth.cli, fstsynth.model, fstsynth.alignment\n"
        "root = logging.getLogger()\n"
        "print(root.level, len(root.handlers), logging.root.manager.disable)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(10), "0", "0"]


def test_domain_types_have_one_home():
    """Token, Word and Features are declared in `fstsynth.types` alone, TaggedToken (a
    token with the DSL transformation that wrote it) in `fstsynth.dsl` alone."""
    import re

    from conftest import ROOT

    def declaring(names: str) -> list[str]:
        return [
            str(path.relative_to(ROOT))
            for path in [*ROOT.glob("fstsynth/*.py"), *ROOT.glob("exporters/*.py")]
            if re.search(rf"^({names}) = ", path.read_text(encoding="utf-8"), re.M)
        ]

    assert declaring("Token|Word|Features") == ["fstsynth/types.py"]
    assert declaring("TaggedToken") == ["fstsynth/dsl.py"]
