"""Run a program with either backend, so behavioural tests are written once."""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from fstsynth.compiler import compile_program
from fstsynth.dsl import Program
from fstsynth.interpreter import run
from fstsynth.model import restore_unknown

#: "transducer": the word composed with each stage of the compiled passes in turn;
#: "tables": the apply tables (`Compiled.tables`, each pass a bimachine as arrays).
BACKENDS = ("interpreter", "transducer", "tables")


def _freeze(features: Mapping[str, Mapping[str, bool]]):
    return tuple(sorted((t, tuple(sorted(f.items()))) for t, f in features.items()))


@lru_cache(maxsize=256)
def _compiled(program: Program, alphabet: tuple[str, ...], frozen_features):
    features = {t: dict(f) for t, f in frozen_features}
    return compile_program(program, alphabet, features)


def run_with(
    backend: str,
    program: Program,
    word: Sequence[str],
    features: Mapping[str, Mapping[str, bool]] | None = None,
    alphabet: Sequence[str] = (),
) -> tuple[str, ...]:
    features = features or {}
    # With an alphabet given, a word's other tokens stay unseen (read as <unk>).
    compiled = _compiled(program, tuple(sorted(set(alphabet) or set(word))), _freeze(features))
    mapped = compiled.map_unknown(word)
    if backend == "interpreter":
        output = run(program, mapped, features)
    elif backend == "tables":
        output = compiled.tables().apply(word)
    else:
        output = compiled.apply(word)
    # As `PairModel.predict` does: unseen tokens come back where they were kept or copied.
    return restore_unknown(word, mapped, output)
