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


# Modules tested in a file not named after them: where, and why. Every other module
# `fstsynth/NAME.py` (or `fstsynth/synthesis/NAME.py`, `exporters/NAME.py`) has its
# own `tests/test_NAME.py`. A new module gets its own file, or a line here.
TESTED_ELSEWHERE = {
    "fstsynth": ["test_api.py"],  # the package's public API is `fstsynth.api`'s
    "fstsynth.__main__": ["test_cli.py"],  # the entry point of the commands
    "fstsynth.alignment_affinity": ["test_alignment.py", "test_transliteration.py"],  # affinity, then the token map
    "fstsynth.arrays": ["test_tables.py"],
    "fstsynth.console": ["test_progress.py"],  # the command line's view of the progress reports
    "fstsynth.drawing": ["test_exports.py", "test_report.py"],
    "fstsynth.errors": ["test_bad_inputs.py"],
    "fstsynth.block_pool": ["test_apply_command.py"],  # `apply --jobs`'s worker processes
    "fstsynth.command_errors": ["test_cli.py", "test_bad_inputs.py"],  # the commands' error guard
    "fstsynth.formatting": ["test_cli.py"],  # what the commands print
    "fstsynth.rules_text": ["test_compile_command.py"],  # `compile`'s reading of rules
    "fstsynth.random_programs": ["test_equivalence_fuzz.py", "test_self_consistency.py"],
    "fstsynth.transducers": ["test_compiler.py", "test_exports.py"],
    "fstsynth.types": ["test_meta.py"],
    # The apply paths: tests/backends.py runs every behavioural case on each walker.
    "fstsynth.table_format": ["test_tables.py", "test_model_file.py"],
    "fstsynth.word_walker": ["test_tables.py", "test_backends.py"],
    "fstsynth.batch_walker": ["test_tables.py", "test_backends.py"],
    "fstsynth.block_walker": ["test_stream.py", "test_backends.py"],
    "fstsynth.synthesis.variant": ["test_fit.py", "test_synthesis.py"],  # `fit`; `learn_variant`
    # The learner's modules, through `fstsynth.synthesis` (its package docstring lists them).
    **{
        f"fstsynth.synthesis.{name}": ["test_synthesis.py", "test_selection.py", "test_feature_rules.py"]
        for name in ("atoms", "examples", "feature_changes",
                     "first_passes", "learner", "options")
    },
    "exporters": ["test_exports.py"],
    **{f"exporters.{name}": ["test_exports.py"] for name in ("att", "dot", "export", "foma_script")},
    # The grammar's runtime, copied into every grammar: its vocabulary, the passes, the cascade.
    **{
        f"exporters.{name}": ["test_pynini_grammar.py"]
        for name in ("pynini_runtime",)
    },
}


def _modules() -> dict[str, str]:
    """{dotted module name: the test file that mirrors it}."""
    from conftest import ROOT

    out = {}
    for path in [*ROOT.glob("fstsynth/*.py"), *ROOT.glob("fstsynth/synthesis/*.py"), *ROOT.glob("exporters/*.py")]:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f"test_{parts[-1]}.py"
    return out


def test_every_module_has_its_test_file_or_says_where_its_tests_are():
    from conftest import ROOT

    tests = {path.name for path in (ROOT / "tests").glob("test_*.py")}
    modules = _modules()
    unmirrored = sorted(m for m, mirror in modules.items() if mirror not in tests and m not in TESTED_ELSEWHERE)
    assert not unmirrored, f"modules without tests/test_NAME.py or a line in TESTED_ELSEWHERE: {unmirrored}"
    stale = sorted(m for m in TESTED_ELSEWHERE if m not in modules or modules[m] in tests)
    assert not stale, f"TESTED_ELSEWHERE lines for modules gone or now mirrored: {stale}"
    missing = sorted({f for files in TESTED_ELSEWHERE.values() for f in files} - tests)
    assert not missing, f"TESTED_ELSEWHERE names test files that do not exist: {missing}"
