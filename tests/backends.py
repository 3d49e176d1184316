"""Run a program through every apply path, so behavioural tests are written once.

`BACKENDS` lists every path a word can take from a program to its output; the
meta-test in tests/test_tables.py fails if the library has a walker that is not here.
Besides them, "cdrewrite": the program's exported Pynini grammar, an oracle built
apart from the compiler (`cdrewrite_grammar`; `same_function` compares transducers
exactly; `check_cdrewrite` and `check_pynini_export` are the checks run on random
programs and on the benchmark's models).
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from types import ModuleType
from typing import Mapping, Sequence

import pynini
from walkers import compiled_walker

from exporters.pynini_grammar import GrammarPair, grammar_source, load_grammar

from fstsynth.block_walker import NumpyBlockWalker
from fstsynth.compiler import Compiled, compile_program
from fstsynth.dsl import Program
from fstsynth.interpreter import run
from fstsynth.model import restore_unknown
from fstsynth.types import Word

#: "interpreter": the DSL's semantics, run directly;
#: "transducer": the word composed with each stage of the compiled passes in turn;
#: "tables-W": the apply tables (`Compiled.tables`) through `Tables.outputs` with
#: walker W (`fstsynth.tables.WALKERS`: the reference word walker, numpy's, C's);
#: "bytes-W": the words as lines of UTF-8 through block walker W
#: (`fstsynth.stream.BLOCK_WALKERS`: C's `apply_block`, `block_walker.NumpyBlockWalker`);
#: "cdrewrite": the exported Pynini grammar (`exporters.pynini_grammar`), each rule one
#: `pynini.cdrewrite` built from the rule's shape, not from the bimachine: an oracle
#: independent of the compiler's reading of the rules.
BACKENDS = (
    "interpreter", "transducer", "tables-word", "tables-numpy", "tables-compiled", "bytes-numpy", "bytes-compiled",
    "cdrewrite",
)


def _freeze(features: Mapping[str, Mapping[str, bool]]):
    return tuple(sorted((t, tuple(sorted(f.items()))) for t, f in features.items()))


@lru_cache(maxsize=256)
def _compiled(program: Program, alphabet: tuple[str, ...], frozen_features) -> Compiled:
    features = {t: dict(f) for t, f in frozen_features}
    return compile_program(program, alphabet, features)


def run_many(
    backend: str,
    program: Program,
    words: Sequence[Sequence[str]],
    features: Mapping[str, Mapping[str, bool]] | None = None,
    alphabet: Sequence[str] = (),
) -> list[Word]:
    """Every word's output through `backend`, the words in one batch where the path
    takes batches. With an alphabet given, a word's other tokens stay unseen (read as
    <unk>); without, every token of the words is in it."""
    features = features or {}
    alphabet = tuple(sorted(set(alphabet) or {t for w in words for t in w}))
    return outputs_through(backend, program, _compiled(program, alphabet, _freeze(features)), words, features)


def outputs_through(
    backend: str,
    program: Program,
    compiled: Compiled,
    words: Sequence[Sequence[str]],
    features: Mapping[str, Mapping[str, bool]],
) -> list[Word]:
    """Every word's output through `backend`, `program` compiled as `compiled` (see
    `run_many`)."""
    mapped = [compiled.map_unknown(w) for w in words]
    tables = compiled.tables()
    if backend == "interpreter":
        outputs = [run(program, m, features) for m in mapped]
    elif backend == "transducer":
        outputs = [compiled.apply(w) for w in words]
    elif backend.startswith("tables-"):
        walker = backend.removeprefix("tables-")
        if walker == "compiled":
            compiled_walker(tables, [True] * len(tables.tokens))  # (or a skip where it is not built)
        outputs = tables.outputs(list(words), walker).words()
    elif backend == "cdrewrite":
        grammar, _, fst = cdrewrite_grammar(program, compiled.tokens, _freeze(features))
        outputs = [tuple(grammar.rewrite(fst, list(m))) for m in mapped]
    elif backend.startswith("bytes-"):
        seen = [True] * len(tables.tokens)  # unseen tokens are the byte front end's (tests/test_stream.py)
        block_walker = (
            compiled_walker(tables, seen) if backend == "bytes-compiled" else NumpyBlockWalker(tables, seen)
        )
        data = "".join(" ".join(w) + "\n" for w in words).encode()
        done = block_walker.apply_block(data, b" ")
        assert done is not None, f"{backend} declined plain lines"
        outputs = [tuple(line.split(" ")) if line else () for line in done[0].decode().split("\n")[:-1]]
    else:
        raise ValueError(f"unknown backend {backend!r}")
    # As `PairModel.predict` does: unseen tokens come back where they were kept or copied.
    return [restore_unknown(w, m, out) for w, m, out in zip(words, mapped, outputs)]


def run_with(
    backend: str,
    program: Program,
    word: Sequence[str],
    features: Mapping[str, Mapping[str, bool]] | None = None,
    alphabet: Sequence[str] = (),
) -> tuple[str, ...]:
    """One word's output through `backend` (see `run_many`)."""
    return run_many(backend, program, [word], features, alphabet or tuple(word))[0]


def byte_lines(words: Sequence[Sequence[str]], known: set[str]) -> list[Sequence[str]]:
    """The words the byte paths read as lines of tokens separated by spaces: no empty
    word (a blank line is the front end's), no token holding a space or `#`, and no
    line of one unseen token (it may be an unspaced word: the front end reads it)."""
    return [
        w for w in words
        if w and all(t and "#" not in t and not any(c.isspace() for c in t) for t in w)
        and not (len(w) == 1 and w[0] not in known)
    ]


def check_backends(case, compile_seconds: float | None = None, require_compiled: bool = True) -> list:
    """The agreement property: on a `program_strategies.Case`, every apply path of
    `BACKENDS` but "cdrewrite" (`check_cdrewrite` runs that one, with its comparison
    of whole transducers) gives the interpreter's output on each of the case's words
    (the byte paths on those they read as lines: `byte_lines`), unseen tokens read as
    <unk> and put back as `PairModel.predict` does. Returns the mismatches (the first
    per backend).

    With `compile_seconds`, a program whose compilation takes longer raises
    `fstsynth.compiler.TimeLimitError` (the long run counts those as skipped). Where the
    compiled walker is not built, its paths are a skip (`walkers.compiled_walker`), or
    left out without `require_compiled`."""
    import time

    from program_strategies import Mismatch

    deadline = None if compile_seconds is None else time.monotonic() + compile_seconds
    compiled = compile_program(case.program, case.alphabet, case.features, deadline=deadline)
    words = list(case.words)
    expected = dict(zip(words, outputs_through("interpreter", case.program, compiled, words, case.features)))
    tables = compiled.tables()
    built = tables.compiled([True] * len(tables.tokens)) is not None
    mismatches = []
    for backend in BACKENDS:
        if backend in ("interpreter", "cdrewrite"):
            continue
        if backend.endswith("-compiled") and not built:
            if require_compiled:
                compiled_walker(tables, [True] * len(tables.tokens))  # a skip, or a failure in CI
            continue
        read = byte_lines(words, set(tables.tokens)) if backend.startswith("bytes-") else words
        try:
            got: list = outputs_through(backend, case.program, compiled, read, case.features)
        except Exception as exc:  # an internal error is a mismatch to report
            got = [f"{type(exc).__name__}: {exc}"] * len(read)
        for word, out in zip(read, got):
            if out != expected[word]:
                mismatches.append(Mismatch(word, f"{backend}: {out!r}", expected[word]))
                break
    return mismatches


@lru_cache(maxsize=256)
def cdrewrite_grammar(
    program: Program, tokens: tuple[str, ...], frozen_features
) -> tuple[ModuleType, list[pynini.Fst], pynini.Fst]:
    """The program's exported Pynini grammar (over `tokens`: every token it reads or
    writes, `<unk>` included), executed: the module, its pass transducers and their
    composition (token symbols attached)."""
    features = {t: dict(f) for t, f in frozen_features}
    source = grammar_source([GrammarPair("pair-0-1", "oracle", program)], tokens, features)
    grammar = load_grammar(source)
    passes = grammar.PAIRS["pair-0-1"]()
    fsts, _ = grammar.pass_transducers(passes, grammar.TOKENS, grammar.CLASSES)
    return grammar, fsts, grammar.cascade(passes, grammar.TOKENS, grammar.CLASSES)


def same_function(first: pynini.Fst, second: pynini.Fst) -> bool:
    """Whether two functional transducers over the same labels define the same function.

    Exact, for transducers of any alignment (where one writes an output on the arc of
    a token, the other may write it later): the domains must be equivalent acceptors,
    and the relation {(first(x), second(x))} (first inverted, composed with second) must
    be within the identity, which holds iff every state of it (trimmed) is reached with
    one *delay* (the labels read on one side and not yet on the other) and final states
    with none (a state reached with two delays cannot continue both to the identity)."""
    a, b = first.copy(), second.copy()
    for fst in (a, b):
        fst.set_input_symbols(None)
        fst.set_output_symbols(None)
    if not pynini.equivalent(a.copy().project("input").optimize(), b.copy().project("input").optimize()):
        return False
    relation = pynini.compose(a.invert().arcsort("olabel"), b.arcsort("ilabel")).connect()
    if relation.start() == pynini.NO_STATE_ID:
        return True
    zero = pynini.Weight.zero(relation.weight_type())
    delays: dict[int, tuple[str, tuple[int, ...]] | None] = {relation.start(): None}
    queue = deque([relation.start()])
    while queue:
        state = queue.popleft()
        delay = delays[state]
        if relation.final(state) != zero and delay is not None:
            return False
        for arc in relation.arcs(state):
            moved = _delay_after(delay, arc.ilabel, arc.olabel)
            if moved is False:
                return False
            if arc.nextstate not in delays:
                delays[arc.nextstate] = moved
                queue.append(arc.nextstate)
            elif delays[arc.nextstate] != moved:
                return False
    return True


def _delay_after(delay, ilabel: int, olabel: int):
    """The delay (None, or (side, labels) read on `side` and not yet on the other) after
    an arc; False if the arc's labels cannot be matched (the relation is no identity)."""
    for side, label in (("in", ilabel), ("out", olabel)):
        if not label:
            continue
        if delay is None or delay[0] == side:
            delay = (side, (delay[1] if delay else ()) + (label,))
        elif delay[1][0] != label:
            return False
        else:
            delay = (delay[0], delay[1][1:]) if len(delay[1]) > 1 else None
    return delay


#: `same_function` is run where the composed transducers are at most this large (the
#: relation it walks is up to their product).
SAME_FUNCTION_MAX_STATES = 20_000


def check_cdrewrite(case) -> tuple[list, float, bool]:
    """The cdrewrite oracle on a `program_strategies.Case`: its grammar's outputs
    against the interpreter's on each of the case's words, and its composed transducer
    against the compiled one (`same_function`, where both are small enough). Returns
    (mismatches, seconds to build the grammar's transducers, whether `same_function`
    ran); a mismatch of the whole function is reported on the word ("<function>",)."""
    import time

    from fstsynth.compiler import compile_program
    from fstsynth.interpreter import run
    from program_strategies import Mismatch

    compiled = compile_program(case.program, case.alphabet, case.features)
    cdrewrite_grammar.cache_clear()  # the time measured is the build's
    started = time.perf_counter()
    grammar, _, fst = cdrewrite_grammar(case.program, compiled.tokens, _freeze(case.features))
    seconds = time.perf_counter() - started
    mismatches = []
    for word in case.words:
        mapped = compiled.map_unknown(word)
        expected = run(case.program, mapped, case.features)
        try:
            got: object = tuple(grammar.rewrite(fst, list(mapped)))
        except Exception as exc:  # no output or several: a mismatch to report
            got = f"{type(exc).__name__}: {exc}"
        if got != expected:
            mismatches.append(Mismatch(word, got, expected))
    compared = False
    if not mismatches:
        try:
            theirs = compiled.transducers.composed()
        except Exception:  # a composition the compiler refuses to build: words only
            theirs = None
        if theirs is not None and fst.num_states() * theirs.num_states() <= SAME_FUNCTION_MAX_STATES:
            compared = True
            if not same_function(fst, theirs):
                mismatches.append(Mismatch(("<function>",), "cdrewrite transducer", "compiled transducer"))
    return mismatches, seconds, compared


#: A token no benchmark problem uses: words holding it check the unseen-token path.
UNSEEN_TOKEN = "ʘ"


def check_pynini_export(model, problem, work) -> dict:
    """The done-when check of the Pynini export on one model: `fstsynth export --format
    pynini` and `python GRAMMAR.py OUT.far`, each run with this Python as a user would,
    then every column pair's transducer from the FAR, through the grammar's own
    `rewrite`, against `PairModel.predict` (what `apply` prints) on every row's known
    source word, and on each such word with its last token (and with its first two
    tokens) replaced by tokens never seen.

    Returns {"pairs", "words", "mismatches" (a few, as (key, word, got, expected)),
    "export_seconds", "far_seconds", "grammar" (the exported module, loaded), "far"
    (the FAR it wrote, open)}."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from fstsynth.model_file import save_model

    work = Path(work)
    model_dir = work / "model"
    save_model(model, model_dir)
    grammar_py, far_path = work / "grammar.py", work / "grammar.far"
    project = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [project, os.environ.get("PYTHONPATH")])))
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fstsynth", "export", str(model_dir), "--format", "pynini", "-o", str(grammar_py)],
        check=True, capture_output=True, env=env,
    )
    exported = time.perf_counter()
    # The grammar runs without the project on its path: it needs Pynini alone.
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [sys.executable, str(grammar_py), str(far_path)], check=True, capture_output=True, env=bare, cwd=work
    )
    built = time.perf_counter()
    grammar = load_grammar(grammar_py.read_text(encoding="utf-8"), "checked_grammar")
    far = pynini.Far(str(far_path), mode="r")
    words_checked, mismatches = 0, []
    for (s, t), pm in sorted(model.pairs.items()):
        key = f"pair-{s}-{t}"
        fst = far[key]
        words = [row[s] for row in problem.cells if row[s] is not None]
        words += [w[:-1] + (UNSEEN_TOKEN,) for w in words if w]
        words += [("q", UNSEEN_TOKEN) + w[2:] for w in words if len(w) >= 2]
        for word in words:
            expected = pm.predict(word)
            try:
                got: object = tuple(grammar.rewrite(fst, list(word)))
            except ValueError as exc:
                got = str(exc)
            words_checked += 1
            if got != expected:
                mismatches.append((key, word, got, expected))
    return {
        "pairs": len(model.pairs), "words": words_checked, "mismatches": mismatches,
        "export_seconds": exported - started, "far_seconds": built - exported, "grammar": grammar, "far": far,
    }
