"""Programs as a Pynini grammar: one `pynini.cdrewrite` per rule, a Python module.

Public API:
    GrammarPair(key, title, program)
    grammar_source(pairs, tokens, features, title="") -> str
    load_grammar(source, name="fstsynth_grammar") -> module   (executes a grammar's text)

The module written (`fstsynth export --format pynini -o GRAMMAR.py`) imports only
Pynini and the standard library. It lists the tokens (`TOKENS`, labels as in the
model's symbols.txt), the natural classes the rules test (`CLASSES`), and per column
pair a function returning its passes, one `p.rule(...)` per rule, each printed above it
in SPE and in DSL notation. Below them comes the code that turns rules into
transducers: each rule one cdrewrite, first-match-wins by marking (docs/design.md, section 5;
`exporters/pynini_rules.py`, `pynini_runtime.py` and `pynini_cascade.py`, copied in
verbatim). Run as a script,
`python GRAMMAR.py OUT.far` writes one transducer per column pair (`pair-S-T`), symbol
tables attached; `rewrite(fst, tokens)` applies one to a word, reading a token it has
never seen as `<unk>` and putting it back where it is kept or copied, as
`fstsynth apply` does.

The construction shares nothing with the bimachine but the rules' shapes
(`fstsynth.rule_shape`): the tests use it as an independent oracle
(`tests/backends.py`, backend "cdrewrite").
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from fstsynth.spe import rule_to_spe
from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    Transformation,
    TransformationApplied,
)
from fstsynth.features import inventory
from fstsynth.rule_shape import SlotTest, TierTest, shape_of
from fstsynth.types import Features, Token

#: The files a grammar copies in, in this order: the rules' vocabulary, the passes'
#: construction, the cascade and the grammar's command line.
RUNTIME = tuple(
    Path(__file__).with_name(name) for name in ("pynini_rules.py", "pynini_runtime.py", "pynini_cascade.py")
)
IMPORTS_START = "# ---- imports ----"
RUNTIME_START = "# ---- runtime (everything below is copied into exported grammars) ----"


@dataclass(frozen=True)
class GrammarPair:
    """One column pair's program, under its FAR key (`pair-S-T`)."""

    key: str
    title: str
    program: Program


Recoded = dict[Transformation, str]  # feature transformations -> their names in the module


def _transformation(tr: Transformation, recoded: Recoded) -> str:
    """A transformation in the grammar's notation."""
    if isinstance(tr, (SetFeatures, Agree)):
        return recoded[tr]
    if isinstance(tr, ReplaceBy):
        return f"ReplaceBy({tr.source!r}, {list(tr.target)!r})"
    if isinstance(tr, ReplaceAnyBy):
        return f"ReplaceAnyBy({list(tr.target)!r})"
    if isinstance(tr, Insert):
        return f"Insert({list(tr.tokens)!r})"
    if isinstance(tr, (CopyReplace, CopyInsert)):
        return f"{type(tr).__name__}({tr.offset})"
    if isinstance(tr, (Delete, Identity)):
        return f"{type(tr).__name__}()"
    raise TypeError(f"not a transformation: {tr!r}")


def _cell_test(test: SlotTest, recoded: Recoded) -> str:
    inner = test.test
    if isinstance(inner, IsToken):
        text = "END" if inner.token is BOUNDARY else f"token({inner.token!r})"
    elif isinstance(inner, Is):
        text = f"feature({inner.feature!r})"
    elif isinstance(inner, TransformationApplied):
        text = f"made_by({_transformation(inner.transformation, recoded)})"
    else:
        raise TypeError(f"not a cell test: {inner!r}")
    return f"~{text}" if test.negated else text


def _tier_test(test: TierTest) -> str:
    feature = "END" if test.feature is BOUNDARY else repr(test.feature)
    inclusive = ", inclusive=True" if test.test.inclusive else ""
    text = f"tier({test.tier!r}, {feature}, {test.index}{inclusive})"
    return f"~{text}" if test.negated else text


def _rule_call(var: str, rule: Rule, recoded: Recoded) -> str:
    shape = shape_of(rule)
    args = [_transformation(rule.transformation, recoded)]
    if shape.slots:
        at = ", ".join(
            f"{slot.offset}: [{', '.join(_cell_test(t, recoded) for t in slot.tests)}]" for slot in shape.slots
        )
        args.append(f"at={{{at}}}")
    if shape.tiers:
        args.append(f"tiers=[{', '.join(map(_tier_test, shape.tiers))}]")
    return f"    {var}.rule({', '.join(args)})"


def _features_read(programs: Sequence[Program]) -> list[str]:
    """Every feature whose class the rules read (`RuleShape.classes_read`), sorted."""
    found: set[str] = set()
    for program in programs:
        for pass_ in program.passes:
            for rule in pass_.rules:
                found |= shape_of(rule).classes_read
    return sorted(found)


def _recodings(program: Program, tokens: Sequence[Token], features: Features) -> tuple[Recoded, list[str]]:
    """The program's feature transformations (written or tested for): their names and
    definitions, as token tables computed by the model's inventory."""
    found: dict[Transformation, None] = {}
    for pass_ in program.passes:
        for rule in pass_.rules:
            shape = shape_of(rule)
            for tr in (shape.writes.recodes, *shape.tags_tested):
                if isinstance(tr, (SetFeatures, Agree)):
                    found[tr] = None
    known = inventory(features)
    names: Recoded = {}
    lines: list[str] = []
    for k, tr in enumerate(found, start=1):
        name = names[tr] = f"recode{k}"
        lines.append(f"    # {tr}")
        if isinstance(tr, SetFeatures):
            table = {tok: known.resolve(tok, tr.values) for tok in tokens}
            values = [("+" if v else "-") + n for n, v in tr.values]
            lines.append(f"    {name} = SetFeatures({values!r}, {_present(table)!r})")
            continue
        assert isinstance(tr, Agree)
        sources = {tok: tuple(known.value(tok, n) for n in tr.features) for tok in tokens}
        present = {tok: tuple(bool(v) for v in vals) for tok, vals in sources.items() if None not in vals}
        made = {
            values: _present({tok: known.resolve(tok, tuple(zip(tr.features, values))) for tok in tokens})
            for values in sorted(set(present.values()))
        }
        lines.append(
            f"    {name} = Agree({list(tr.features)!r}, {tr.offset}, {tr.tier!r}, {present!r}, {made!r})"
        )
    return names, lines


def _recoding_outputs(pairs: Sequence[GrammarPair], features: Features) -> set[Token]:
    """Where a program changes features, the tokens it may write that way: every token
    of the inventory (which a later pass may read in turn)."""
    for pair in pairs:
        for pass_ in pair.program.passes:
            if any(shape_of(rule).writes.recodes is not None for rule in pass_.rules):
                return {tok for tok, feats in features.items() if feats}
    return set()


def _present(table: dict[Token, Token | None]) -> dict[Token, Token]:
    return {k: v for k, v in table.items() if v is not None}


def _pair_function(pair: GrammarPair, name: str, tokens: Sequence[Token], features: Features) -> list[str]:
    lines = [f"def {name}() -> \"list[Pass]\":", f"    {pair.title!r}"]
    recoded, definitions = _recodings(pair.program, tokens, features)
    if definitions:
        lines += ["    # Feature changes, as token tables (the tokens each applies to, and what it writes):"]
        lines += definitions
    passes = pair.program.passes
    if not passes:
        lines.append("    return []  # no rule: every word is kept")
        return lines
    for k, pass_ in enumerate(passes, start=1):
        var = f"pass{k}"
        lines.append("")
        lines.append(f"    # ---- pass {k}: at each position the first rule that applies wins; else the token is kept")
        lines.append(f"    {var} = Pass()")
        for r, rule in enumerate(pass_.rules, start=1):
            lines.append(f"    # rule {r}: {rule_to_spe(rule)}")
            lines.append(f"    #   {rule}")
            lines.append(_rule_call(var, rule, recoded))
    lines.append(f"    return [{', '.join(f'pass{k}' for k in range(1, len(passes) + 1))}]")
    return lines


def _in_docstring(text: str) -> str:
    """`text` as it reads inside a triple-quoted docstring."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _runtime_imports() -> str:
    """The standard library and Pynini imports of the runtime files, merged: each file's
    lines from `IMPORTS_START` to its next `# ---- ` line (its own imports from the
    others are below that line: a grammar has their code instead)."""
    plain: dict[str, None] = {}
    names: dict[str, dict[str, None]] = {}
    for path in RUNTIME:
        text = path.read_text(encoding="utf-8")
        begin = text.index(IMPORTS_START) + len(IMPORTS_START) + 1
        for line in text[begin : text.index("\n# ---- ", begin)].splitlines():
            if line.startswith("from "):
                module, imported = line.removeprefix("from ").split(" import ")
                names.setdefault(module, {}).update(dict.fromkeys(imported.split(", ")))
            elif line.startswith("import "):
                plain[line] = None
    pynini = [line for line in plain if line == "import pynini"]
    standard = [line for line in plain if line != "import pynini"]
    froms = [f"from {module} import {', '.join(sorted(found))}" for module, found in names.items()]
    return "\n".join([*standard, *froms, "", *pynini])


def _runtime_code() -> str:
    """The runtime files' code, each from its `RUNTIME_START` line on."""
    parts = []
    for path in RUNTIME:
        text = path.read_text(encoding="utf-8")
        parts.append(text[text.index(RUNTIME_START) + len(RUNTIME_START) + 1 :].strip("\n"))
    return "\n\n\n".join(parts)


def grammar_source(
    pairs: Sequence[GrammarPair], tokens: Sequence[Token], features: Features, title: str = ""
) -> str:
    """The grammar module of `pairs` over `tokens` (every token the transducers read or
    write, `<unk>` included; sorted, they get the labels of the model's symbols.txt)."""
    tokens = sorted(set(tokens) | _recoding_outputs(pairs, features))
    names = _features_read([p.program for p in pairs])
    classes = {name: [t for t in tokens if features.get(t, {}).get(name, False)] for name in names}
    head = [
        "#!/usr/bin/env python3",
        f'"""fstsynth rules as Pynini rewrite rules{": " + _in_docstring(title) if title else ""}.',
        "",
        "Written by `fstsynth export --format pynini`; needs only Pynini.",
        "",
        "    python THIS_FILE OUT.far           # one transducer per column pair: "
        + ", ".join(p.key for p in pairs),
        "    python THIS_FILE OUT.far --passes  # one per pass instead: KEY.pass1, KEY.pass2, ...",
        "",
        "In Python: `cascade(PAIRS[key](), TOKENS, CLASSES)` builds a pair's transducer and",
        "`rewrite(fst, ['p', 'ɪ', 'g'])` applies it to a word (a list of tokens). A token",
        "not in TOKENS is read as '<unk>' (no features, no `token(...)` test matches it) and",
        "put back where the rules keep or copy it; the transducers themselves have no arc",
        "for it. Edit the rules below: each `p.rule(WRITES, at={OFFSET: [TESTS]},",
        "tiers=[...])` is one pynini.cdrewrite; the code after the rules explains how.",
        '"""',
        "",
        _runtime_imports(),
        "",
        "# Every token the rules read or write; labels 1, 2, ... in this order (0 is <eps>).",
        f"TOKENS = {tokens!r}",
        "",
        "# The natural classes the rules test: the tokens that have each feature.",
        "CLASSES = {",
        *(f"    {name!r}: {members!r}," for name, members in classes.items()),
        "}",
        "",
    ]
    body: list[str] = []
    functions = {}
    for pair in pairs:
        name = pair.key.replace("-", "_").replace(".", "_")
        functions[pair.key] = name
        body += ["", *_pair_function(pair, name, tokens, features), ""]
    body += ["", "PAIRS = {", *(f"    {key!r}: {name}," for key, name in functions.items()), "}", "", ""]
    tail = [
        "",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(grammar_main(sys.argv[1:], PAIRS, TOKENS, CLASSES))",
        "",
    ]
    runtime = [RUNTIME_START, _runtime_code()]
    return "\n".join(head + body + runtime + tail)


def load_grammar(source: str, name: str = "fstsynth_grammar") -> types.ModuleType:
    """Execute a grammar's text as a fresh module (for the tests and the oracle)."""
    module = types.ModuleType(name)
    module.__dict__["__file__"] = f"<{name}>"
    # dataclasses look their module up in sys.modules while the class body runs.
    sys.modules[name] = module
    try:
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module
