"""Learning a model: a program for every column pair of a problem, compiled.

Public API:
    MAX_TRAINING_TOKENS, MAX_ALPHABET, MAX_COLUMN_PAIRS
    learn_model(problem, options, pairs=None, jobs=1) -> Model
    compile_model(programs, problem, time_limit=None) -> Model   (written programs)
    inventory(problem, mentioned=()) -> (alphabet, features)
    check_limits(problem, pairs), saved_options(options) -> dict
    collector_paused()  (a context: Python's cyclic garbage collector off; the commands
                         learn under it, the library leaves the collector alone)
    one_blas_thread()  (a context: numpy's BLAS on one thread unless the user set its
                        threads; the commands learn under it too)

Limits (README "Limits"): learning refuses a training word longer than
`MAX_TRAINING_TOKENS` (alignment is quadratic in word length), more than
`MAX_ALPHABET` distinct tokens, and more than `MAX_COLUMN_PAIRS` column pairs in one run;
`Options.time_limit` bounds each column pair, alignment, synthesis and compilation
together.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from fstsynth.dsl import BOUNDARY, Is, IsToken, Program
from fstsynth.errors import UserError
from fstsynth.model import Error, Model, PairModel
from fstsynth.table_format import UNK
from fstsynth.types import Token

if TYPE_CHECKING:
    from fstsynth.problem import Problem
    from fstsynth.synthesis import Options

#: Longest training word, in tokens: lingpy's alignment is quadratic in word length
#: (measured: 300 tokens 0.2 s, 1,000 tokens 2.4 s per pair).
MAX_TRAINING_TOKENS = 1000
#: Most distinct tokens in a problem (the apply tables and the transducers grow with
#: it; `Options.time_limit` bounds the time).
MAX_ALPHABET = 1000
#: Most column pairs learned in one run (a table of n columns has n(n-1) of them).
MAX_COLUMN_PAIRS = 1000
#: The variant of a program compiled as written (`compile_model`), not learned.
COMPILED = "compiled"
#: The ranking's costs a written program is scored with (finite for every predicate).
COST_VARIANT = "token"


log = logging.getLogger(__name__)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (back on after it, if it was
    on). Learning makes millions of small objects (candidates, bitsets, tuples) and no
    reference cycles worth collecting, and each collection of the older generations
    walks all the live ones: a fifth of the learning time (1,000 spelling -> IPA pairs:
    13.8 s -> 11.6 s CPU, the same peak memory). Reference counting still frees what
    is dropped.

    The collector belongs to the whole process, every thread of it: the commands
    (`learn`, `solve`) and fstsynth's own worker processes learn with it off, but
    `learn_model` and `fstsynth.learn` leave it as the caller set it. A program that
    learns while none of its other threads needs the collector can learn under this
    too."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


#: Variables by which a user sets the BLAS library's threads; `one_blas_thread` leaves
#: the library alone where any is set.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                         "BLIS_NUM_THREADS")


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread for the block (as before after it), unless the user
    set its threads (`BLAS_THREAD_VARIABLES`). The learner's matrix products (the
    exception search's pair counts) are small: a second thread gains no time, and on a
    busy machine it spins for a core (German, 1,000 pairs: the same calls took 3.3 to
    3.8 s of CPU with two threads, 2.0 s with one, in the same wall time).

    Like `collector_paused`, a setting of the whole process, taken by the commands
    (`learn`, `solve`; worker processes are forked from them and keep it), not by
    `learn_model`."""
    if any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def saved_options(options: "Options") -> dict[str, Any]:
    """Learning options as a model keeps them (no time limit: a property of the run)."""
    return {k: v for k, v in dataclasses.asdict(options).items() if k != "time_limit"}


def check_limits(problem: "Problem", pairs: Sequence[tuple[int, int]]) -> None:
    """Refuse, before any work, a problem beyond the documented limits."""
    if len(pairs) > MAX_COLUMN_PAIRS:
        raise Error(
            f"{problem.name}: {len(pairs)} column pairs to learn ({len(problem.columns)} columns); "
            f"fstsynth learns at most {MAX_COLUMN_PAIRS} in one run: split the table"
        )
    alphabet = problem.alphabet()
    if len(alphabet) > MAX_ALPHABET:
        raise Error(
            f"{problem.name}: {len(alphabet)} distinct tokens; fstsynth handles at most "
            f"{MAX_ALPHABET} (are the words split into tokens with spaces?)"
        )
    columns = {c for pair in pairs for c in pair}
    for i, row in enumerate(problem.cells):
        for j in sorted(columns):
            cell = row[j]
            if cell is not None and len(cell) > MAX_TRAINING_TOKENS:
                where = f"line {i + 1}" if problem.directed else f"row {i + 1}, column {j + 1}"
                raise Error(
                    f"{problem.source or problem.name}: {where}: a word of {len(cell)} tokens; "
                    f"training words may have at most {MAX_TRAINING_TOKENS}"
                )


def inventory(
    problem: "Problem", mentioned: Iterable[Token] = ()
) -> tuple[tuple[Token, ...], dict[Token, dict[str, bool]]]:
    """The tokens a model of `problem` knows (sorted) and their features.

    Every token of the problem's words and of its features (a features file's whole
    inventory), trained on or not, is known to the model: read by its features, never
    `<unk>`; so is every token in `mentioned` (those a written program reads or
    writes). Learning, the transducers and the interpreter all read these features:
    the problem's, vowel/consonant classes where it gives none, and features derived
    from IPA for the tokens it says nothing of (used where cross-validation says they
    help)."""
    from fstsynth.features import with_vowel_classes
    from fstsynth.features import with_ipa_features

    alphabet = tuple(sorted(problem.alphabet() | set(problem.features) | set(mentioned)))
    features = with_ipa_features(
        with_vowel_classes(problem.features, alphabet), [tok for tok in alphabet if not problem.features.get(tok)]
    )
    return alphabet, features


def learn_model(
    problem: "Problem",
    options: "Options | None" = None,
    pairs: Iterable[tuple[int, int]] | None = None,
    jobs: int = 1,
) -> Model:
    """Learn and compile a program for every column pair with training rows.

    `options.time_limit` (seconds) bounds each column pair: alignment, synthesis and
    compilation together. A pair that runs out of time raises `Error` naming it.
    `jobs` > 1 runs each pair's cross-validation folds in that many worker processes
    (`synthesis.learn`): the same model, sooner. Progress is reported as stage
    "column pair" (k of n, the pair's name as detail; `fstsynth.progress`). (The learner
    and the compiler are imported here, not with the module: loading and applying a
    model needs neither.)
    """
    from fstsynth.compiler import compile_program
    from fstsynth.progress import report
    from fstsynth.synthesis import LearnResult, Options, learn

    options = options if options is not None else Options()
    todo = list(pairs) if pairs is not None else problem.column_pairs()
    if not todo:
        raise Error(f"{problem.name}: no column pair has a row with both cells known")
    check_limits(problem, todo)
    for j in problem.unlearnable_columns():
        log.warning(
            "%s: column %r has no row with another known cell: its '?' cells cannot be "
            "learned", problem.source or problem.name, problem.columns[j],
        )
    alphabet, features = inventory(problem)
    # Per column pair, its result and the seconds its time limit has left for compiling.
    results: dict[tuple[int, int], tuple[LearnResult, float | None]] = {}
    for k, (s, t) in enumerate(todo):
        label = f"{problem.columns[s]} -> {problem.columns[t]}"
        report("column pair", k, len(todo), label)
        # One time limit for the column pair: learning (every fold and variant of
        # `auto`) and compilation share it. Its compilation comes after every pair is
        # learned, so what is left is counted from then, not the other pairs' time.
        deadline = None if options.time_limit is None else time.monotonic() + options.time_limit
        try:
            result = learn(problem.training_pairs(s, t), features, options, jobs, deadline)
            results[(s, t)] = result, None if deadline is None else deadline - time.monotonic()
        except UserError as exc:
            raise Error(f"{problem.name}: column pair {label}: {exc}") from None
    written = _written_segments(problem, {pair: result.program for pair, (result, _) in results.items()}, features)
    if written:
        alphabet = tuple(sorted({*alphabet, *written}))
        features = {**features, **written}
    learned: dict[tuple[int, int], PairModel] = {}
    for (s, t), (result, left) in results.items():
        label = f"{problem.columns[s]} -> {problem.columns[t]}"
        try:
            started = time.perf_counter()
            deadline = None if left is None else time.monotonic() + left
            compiled = compile_program(result.program, alphabet, features, deadline=deadline)
        except UserError as exc:
            raise Error(f"{problem.name}: column pair {label}: {exc}") from None
        seconds = dict(result.seconds, compilation=time.perf_counter() - started)
        learned[(s, t)] = PairModel(
            s, t, result.program, result.cost, result.train_correct, result.train_total,
            compiled.tables(), compiled.stages, seconds, result.held_out, result.variant,
            alphabet=alphabet, features=features, sampled=result.sampled, cv_sample=result.cv_sample,
        )
    report("column pair", len(todo), len(todo), "done")
    return Model(
        problem.columns, features, saved_options(options), alphabet, learned, problem.name, rows=problem.cells
    )


def _written_segments(
    problem: "Problem", programs: Mapping[tuple[int, int], Program], features: Mapping[str, Mapping[str, bool]]
) -> dict[Token, dict[str, bool]]:
    """IPA segments no word shows that the programs' `SetFeatures` write from known
    tokens (`features.written_by`: `f` of a held-out `v` devoiced), those in the output
    of some training word left out: every training word comes out as it did without
    them."""
    from fstsynth.dsl import SetFeatures
    from fstsynth.features import written_by
    from fstsynth.interpreter import run_many

    changes = [
        rule.transformation.values
        for program in programs.values()
        for pass_ in program.passes
        for rule in pass_.rules
        if isinstance(rule.transformation, SetFeatures)
    ]
    written = written_by(features, changes) if changes else {}
    while written:
        wider = {**features, **written}
        seen: set[Token] = set()
        for (s, t), program in programs.items():
            sources = [src for src, _ in problem.training_pairs(s, t)]
            for out in run_many(program, sources, wider):
                seen.update(tok for tok in out if tok in written)
        if not seen:
            break
        written = {tok: feats for tok, feats in written.items() if tok not in seen}
    return written


def compile_model(
    programs: Mapping[tuple[int, int], Program],
    problem: "Problem",
    *,
    time_limit: float | None = None,
) -> Model:
    """A model of written programs, one per column pair (source, target) of `problem`,
    compiled as `learn_model` compiles learned ones: over `problem`'s tokens and
    features (see `inventory`), and every token the programs mention.

    `problem`'s rows, if it has any, are kept as a learned model keeps its training
    rows (`report` shows the rules at work on them), and the pairs' `train_correct` /
    `train_total` count the rows they reproduce. `time_limit` (seconds) bounds each
    pair's compilation. Progress is reported as stage "column pair"."""
    from fstsynth.bimachine import program_tokens
    from fstsynth.compiler import compile_program
    from fstsynth.progress import report
    from fstsynth.rule_shape import shape_of
    from fstsynth.synthesis import rule_cost

    if not programs:
        raise Error(f"{problem.name}: no program to compile")
    check_limits(problem, list(programs))
    shapes = [shape_of(rule) for program in programs.values() for pass_ in program.passes for rule in pass_.rules]
    tests = [test.test for shape in shapes for slot in shape.slots for test in slot.tests]
    mentioned = {test.token for test in tests if isinstance(test, IsToken) and test.token is not BOUNDARY}
    for program in programs.values():
        mentioned |= program_tokens(program, ()) - {UNK}
    alphabet, features = inventory(problem, mentioned)
    # A feature no known token has makes its tests fail everywhere: most likely the
    # features (or the words that bring them) were not given.
    tested = {test.feature for test in tests if isinstance(test, Is)}
    tested |= {tier.test.tier for shape in shapes for tier in shape.tiers}
    tested |= {tier.test.feature for shape in shapes for tier in shape.tiers if tier.test.feature is not BOUNDARY}
    held = {name for feats in features.values() for name, value in feats.items() if value}
    missing = sorted(tested - held)
    if missing:
        log.warning(
            "%s: the rules test %s, which no token the model knows has: give the features "
            "(--features) or the words they are for (--data)",
            problem.source or problem.name, ", ".join(repr(name) for name in missing),
        )
    compiled_pairs: dict[tuple[int, int], PairModel] = {}
    for k, ((s, t), program) in enumerate(sorted(programs.items())):
        label = f"{problem.columns[s]} -> {problem.columns[t]}"
        report("column pair", k, len(programs), label)
        deadline = None if time_limit is None else time.monotonic() + time_limit
        started = time.perf_counter()
        try:
            compiled = compile_program(program, alphabet, features, deadline=deadline)
        except UserError as exc:
            raise Error(f"{problem.name}: column pair {label}: {exc}") from None
        seconds = {"compilation": time.perf_counter() - started}
        pm = PairModel(
            s, t, program, sum(rule_cost(r, COST_VARIANT) for p in program.passes for r in p.rules), 0, 0,
            compiled.tables(), compiled.stages, seconds, None, COMPILED,
            alphabet=alphabet, features=features,
        )
        rows = problem.training_pairs(s, t)
        correct = sum(p == target for p, (_, target) in zip(pm.predict_many([src for src, _ in rows]), rows))
        compiled_pairs[(s, t)] = pm.replace(train_correct=correct, train_total=len(rows))
    report("column pair", len(programs), len(programs), "done")
    return Model(
        problem.columns, features, {"variant": COMPILED}, alphabet, compiled_pairs, problem.name, rows=problem.cells
    )
