"""One deadline per column pair: `--time-limit` bounds alignment, synthesis (every fold
and variant of `auto`) and compilation together."""

from __future__ import annotations

import random
import time

import pytest

from fstsynth import progress
from fstsynth.learning import learn_model
from fstsynth.model import Error as ModelError
from fstsynth.problem import Problem
from fstsynth.synthesis import Error, Options, learn

_LATIN = "ptksnlmrbdgvzjhaeiou"
_CYRILLIC = "птксנлмрбдгвзјхаеиоу".replace("נ", "н")


def _transliteration(count: int, seed: int = 0) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """`count` made-up words in Latin letters and their Cyrillic spelling, with digraphs
    (nj, lj, sh, zh) written as one letter and a few changes in context."""
    rng = random.Random(seed)
    letter = dict(zip(_LATIN, _CYRILLIC))
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    while len(out) < count:
        word = "".join(
            rng.choice(_LATIN[:15]) + rng.choice(_LATIN[15:]) + (rng.choice(_LATIN[:15]) if rng.random() < 0.3 else "")
            for _ in range(rng.randint(1, 4))
        )
        target = word.replace("nj", "њ").replace("lj", "љ").replace("sh", "ш").replace("zh", "ж")
        # Some context too: k before e or i, and d, b, z devoiced at the end.
        target = target.replace("ke", "че").replace("ki", "чи")
        target = target[:-1] + {"d": "т", "b": "п", "z": "с"}.get(target[-1], target[-1])
        out[word] = (tuple(word), tuple(letter.get(c, c) for c in target))
    return list(out.values())


def test_time_limit_holds_under_auto():
    # Each fold, variant and final run of `auto` once had the whole limit again (about
    # a dozen windows): now they share one deadline with compilation. The workload must
    # take longer than the limit on this machine, whatever its speed: it doubles until
    # it does. The deadline counts from the column pair's start (the first progress
    # report), after the imports a first call makes. (A short limit: the test takes it
    # and the time to make the workload.)
    limit = 2
    rows = 10_000
    reports: list[float] = []
    while True:
        problem = Problem("made-up", ("latin", "cyrillic"), tuple(_transliteration(rows)), (), {}, directed=True)
        reports.clear()
        try:
            with progress.listening(lambda step, seen=reports: seen.append(time.monotonic())):
                learn_model(problem, Options(variant="auto", time_limit=limit))
        except ModelError as error:
            assert "time limit" in str(error)
            break
        assert rows < 160_000, f"{rows} rows learned within {limit} s: no workload found that exceeds the limit"
        rows *= 2
    assert time.monotonic() - reports[0] < limit + 1


def test_a_deadline_passed_in_is_the_one_kept():
    pairs = _transliteration(50)
    with pytest.raises(Error, match="time limit"):
        learn(pairs, {}, Options(), deadline=time.monotonic() - 1)
    # Without one, `options.time_limit` starts counting when `learn` is called.
    assert learn(pairs, {}, Options(time_limit=600)).train_correct == len(pairs)
