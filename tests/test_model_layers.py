"""The package's import graph: no cycle, and layers that only look down.

Every import counts: at module level, inside functions (deferred for start-up time) and
under `TYPE_CHECKING` (a type named from a higher module is still a dependency on it).
"""

from __future__ import annotations

import ast

from conftest import ROOT

PACKAGE = ROOT / "fstsynth"

#: The package's modules, lowest layer first. A module may import modules of its own
#: layer or of lower ones. (`synthesis` is one node: its modules are one package.)
LAYERS: list[set[str]] = [
    {"errors", "types", "progress"},
    {"arrays", "fileio", "guard", "console", "drawing", "words"},
    {"dsl", "program_json", "features", "problem", "alignment", "alignment_affinity", "table_format"},
    {"interpreter", "chunks", "pairngram", "rule_shape", "rules_text", "dsl_parser", "pass_decisions"}
    | {"tables", "batch_walker", "word_walker", "_walk"},
    {"bimachine", "annotations", "far", "transducers", "block_walker", "spe"},
    {"compiler", "synthesis"},
    {"random_programs", "evaluation"},
    {"model"},  # models as values: what a model is and does with a word
    {"model_file"},  # saving and loading them
    {"learning"},  # learning them
    {"solve", "report", "stream", "formatting"},
    {"parallel", "api", "block_pool"},
    {"command_errors", "apply_command", "cluster"},
    {"cli"},
    {"__main__", "__init__"},
]


def _node(module: str) -> str:
    """`fstsynth.synthesis.learner` -> `synthesis`; `fstsynth.model` -> `model`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its code)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        source = _node(".".join(parts))
        found = graph.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "fstsynth":
                    names = [f"fstsynth.{alias.name}" for alias in node.names]
                else:
                    names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found.update(_node(name) for name in names if name.startswith("fstsynth."))
        found.discard(source)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_reader_sees_every_kind_of_import():
    graph = import_graph()
    assert "model" in graph["model_file"]  # at module level
    assert "synthesis" in graph["learning"]  # inside a function
    assert "transducers" in graph["model"]  # under TYPE_CHECKING (and inside a method)


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_has_a_layer_and_imports_none_above_it():
    layer = {module: k for k, modules in enumerate(LAYERS) for module in modules}
    graph = import_graph()
    assert sorted(set(graph) - set(layer)) == [], "a module new to the package: give it a layer in LAYERS"
    upward = sorted(
        f"{source} (layer {layer[source]}) imports {target} (layer {layer[target]})"
        for source, targets in graph.items()
        for target in targets
        if layer.get(target, -1) > layer[source]
    )
    assert upward == []


def test_the_model_layers_do_not_call_back_into_evaluation_or_the_api():
    graph = import_graph()
    assert "model" not in graph["evaluation"] and "evaluation" not in graph["model"]
    assert not graph["model"] & {"model_file", "learning", "api", "solve", "report", "cli"}
    assert "dsl" not in graph["types"]


def test_no_module_of_the_model_layers_or_the_compiler_is_over_600_lines():
    lengths = {
        name: len((PACKAGE / f"{name}.py").read_text(encoding="utf-8").splitlines())
        for name in ("model", "model_file", "learning", "api", "evaluation", "solve", "types")
        + ("compiler", "transducers", "problem", "words")
    }
    assert {name: n for name, n in lengths.items() if n > 600} == {}
