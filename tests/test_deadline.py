"""One deadline per column pair: `--time-limit` bounds alignment, synthesis (every fold
and variant of `auto`) and compilation together."""

from __future__ import annotations

import random
import re
import time

import pytest

from clocks import CpuClock
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


#: The most CPU time one step between two deadline checks may take (measured: the
#: learner's largest steps take about 0.2 s).
STEP = 0.5


def test_time_limit_holds_under_auto(monkeypatch):
    # Each fold, variant and final run of `auto` once had the whole limit again (about
    # a dozen windows): now they share one deadline with compilation. The limit counts
    # CPU time (`CpuClock`), so the test holds on a busy machine; the workload doubles
    # until learning it takes longer than the limit, whatever the machine's speed.
    import fstsynth.alignment  # noqa: F401  (imports a first call makes are not timed)

    limit = 0.5
    rows = 125
    while True:
        problem = Problem("made-up", ("latin", "cyrillic"), tuple(_transliteration(rows)), (), {}, directed=True)
        clock = CpuClock(monkeypatch)
        started: list[float] = []
        try:
            with progress.listening(lambda step, seen=started: seen.append(CpuClock.now())):
                learn_model(problem, Options(variant="auto", time_limit=limit))
        except ModelError as error:
            assert re.fullmatch(
                r"made-up: column pair latin -> cyrillic: time limit reached while (learning|compiling the rules) "
                r"\(raise --time-limit\)", str(error)
            ), error
            break
        assert rows < 16_000, f"{rows} rows learned within {limit} CPU s: no workload found that exceeds the limit"
        rows *= 2
    # The deadline counts from the column pair's start (its first progress report);
    # past it, one step at most before the error.
    overshoot = clock.now() - (started[0] + limit)
    assert overshoot < STEP, f"{overshoot:.2f} CPU s of work after the deadline ({rows} rows)"


def test_a_deadline_passed_in_is_the_one_kept():
    pairs = _transliteration(50)
    with pytest.raises(Error, match="time limit"):
        learn(pairs, {}, Options(), deadline=time.monotonic() - 1)
    # Without one, `options.time_limit` starts counting when `learn` is called.
    assert learn(pairs, {}, Options(time_limit=600)).train_correct == len(pairs)
