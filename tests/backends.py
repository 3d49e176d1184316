"""Run a program with either backend, so behavioural tests are written once."""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

import pytest

from fstsynth.compiler import compile_program
from fstsynth.dsl import Program, looks_unboundedly_right
from fstsynth.interpreter import run

#: "tables" is the transducer walked as per-pass deterministic tables (`Compiled.fast`).
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
    compiled = _compiled(program, tuple(sorted(set(alphabet) | set(word))), _freeze(features))
    if backend == "interpreter":
        return run(program, compiled.map_unknown(word), features)
    if backend == "tables":
        if looks_unboundedly_right(program):
            pytest.skip("a rule looks unboundedly far right: no deterministic tables exist")
        return compiled.fast()(word)
    return compiled.apply(word)
