"""Issue #6: bounded work. Pathological inputs stop at a documented limit, with a clear
message, and `--time-limit` bounds each column pair (alignment, synthesis, compilation).
The limits are in the README's "Limits" section and in `fstsynth.model`."""

from __future__ import annotations

import json
import re
import time

import pytest
from typer.testing import CliRunner

from clocks import CpuClock

from fstsynth.cli import app
from fstsynth.compiler import TimeLimitError, compile_program
from fstsynth.dsl import BOUNDARY, CopyReplace, IsToken, Pass, Program, Rule, TierIs
from fstsynth.learning import MAX_ALPHABET, MAX_COLUMN_PAIRS, collector_paused, learn_model
from fstsynth.model import Error
from fstsynth.problem import Problem
from fstsynth.synthesis import Options

runner = CliRunner()


def cli_error(args: list) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2 and "Traceback" not in result.stdout + result.stderr
    return result.stderr


def test_hundreds_of_columns(tmp_path):
    columns = [f"c{k}" for k in range(200)]
    rows = [[f"a b{k}" for k in range(200)], [f"b a{k}" for k in range(200)]]
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"columns": columns, "data": rows}))
    started = time.process_time()  # the command runs in this process: its work, whatever the load
    err = cli_error(["learn", path, "-o", tmp_path / "m"])
    assert err == (
        f"fstsynth: error: wide: 39800 column pairs to learn (200 columns); fstsynth learns "
        f"at most {MAX_COLUMN_PAIRS} in one run: split the table\n"
    )
    assert time.process_time() - started < 30  # refused up front, not after hours


def test_thousands_of_distinct_tokens(tmp_path):
    path = tmp_path / "many.tsv"
    path.write_text("".join(f"x{k} a\tx{k} a s\n" for k in range(1500)))
    err = cli_error(["learn", path, "-o", tmp_path / "m"])
    assert err == (
        f"fstsynth: error: many: 1502 distinct tokens; fstsynth handles at most {MAX_ALPHABET} "
        "(are the words split into tokens with spaces?)\n"
    )


def slow_program(n_tokens: int) -> tuple[Program, list[str], dict]:
    """Copy rules reading two positions away, one behind a tier test to the right: the
    machines grow with the number of tokens (measured: 0.1 CPU s to compile with 10
    tokens, 0.7 s with 18, 10 s with 30)."""
    toks = [f"x{k}" for k in range(n_tokens)]
    features = {t: {"vowel": k % 3 == 0} for k, t in enumerate(toks)}
    rules = []
    for j in range(2):
        rules.append(Rule((IsToken(toks[j], -1), TierIs("vowel", BOUNDARY, 2)), CopyReplace(2)))
        rules.append(Rule((IsToken(toks[j + 1], 1),), CopyReplace(-2)))
    return Program((Pass(tuple(rules)),)), toks, features


#: The most CPU time one step of work between two deadline checks may take. The steps
#: are measured with Python's cyclic collector paused, as the commands learn and compile
#: (`fstsynth.learning.collector_paused`): one collection of a test session's heap
#: (0.3 CPU s with 3 million live objects) is no step of the compiler's.
STEP = 0.3


def test_time_limit_stops_a_long_compilation(monkeypatch):
    # The limit counts CPU time (`CpuClock`), so the test holds on a busy machine; the
    # program grows until compiling it takes longer than the limit.
    limit = 0.2
    for n_tokens in range(10, 31, 4):
        program, alphabet, features = slow_program(n_tokens)
        clock = CpuClock(monkeypatch)
        deadline = clock.now() + limit
        try:
            with collector_paused():  # as the commands compile
                compile_program(program, alphabet, features, deadline=deadline)
        except TimeLimitError as error:
            assert str(error) == "time limit reached while compiling the rules (raise --time-limit)"
            break
    else:
        pytest.fail(f"a {n_tokens}-token program compiled within {limit} CPU s: no workload exceeds the limit")
    overshoot = clock.now() - deadline
    assert overshoot < STEP, f"{overshoot:.2f} CPU s of work after the deadline ({n_tokens} tokens)"


def test_compilation_checks_its_deadline_at_least_every_step(monkeypatch):
    # Where the test above's deadline falls depends on the machine (often inside the
    # bimachine's construction): here every step of a whole compilation is measured,
    # the one after the last check included, so a stage without checks fails wherever
    # it is. Every `time.monotonic` read while compiling is a deadline check.
    # The program grows, a token at a time, until its compilation takes several steps on
    # this machine (18 tokens took 0.5 CPU s on one machine, 0.26 s on a faster one: one
    # step, nothing shown). The machines grow with the program, and so do the steps of
    # their vectorized phases: the test holds them to a fraction of a ~1 s compilation.
    for n_tokens in range(18, 43):
        program, alphabet, features = slow_program(n_tokens)
        clock = CpuClock(monkeypatch)
        started = clock.now()
        with collector_paused():
            compile_program(program, alphabet, features, deadline=started + 3600)
        ended = clock.now()
        if ended - started > 3 * STEP:
            break
    assert ended - started > 3 * STEP, f"a {n_tokens}-token program compiled in one step: it shows nothing"
    times = [started, *clock.reads, ended]
    step, after = max((b - a, k) for k, (a, b) in enumerate(zip(times, times[1:])))
    assert step < STEP, f"{step:.2f} CPU s without a deadline check after check {after} of {len(clock.reads)}"


def test_time_limit_stops_alignment_of_long_words(monkeypatch):
    # learn_model imports the learner (and lingpy) on its first call: not what is timed.
    import fstsynth.alignment  # noqa: F401
    import fstsynth.synthesis  # noqa: F401

    limit = 0.2
    length = 100
    while True:  # words lengthen until aligning them takes longer than the limit
        word = ("k", "a", "t") * length
        pairs = tuple(((word + (str(k),)), (word + (str(k), "s"))) for k in range(20))
        problem = Problem("long", ("s", "t"), pairs, (), directed=True)
        clock = CpuClock(monkeypatch)
        started = clock.now()
        try:
            with collector_paused():  # as the commands learn
                learn_model(problem, Options(time_limit=limit))
        except Error as error:
            assert re.match(r"^long: column pair s -> t: time limit reached while learning", str(error)), error
            break
        assert length < 3000, f"words of {3 * length} tokens learned within {limit} CPU s"
        length *= 2
    # Alignment is quadratic in word length: each pair is one step.
    overshoot = clock.now() - (started + limit)
    assert overshoot < STEP, f"{overshoot:.2f} CPU s of work after the deadline ({3 * length}-token words)"


def test_the_command_line_has_a_default_time_limit_that_0_lifts(tmp_path, monkeypatch):
    from fstsynth import api, cli

    seen = []
    real = api.learn_model

    def learn_model_(problem, options, *args, **kwargs):
        seen.append(options.time_limit)
        return real(problem, options, *args, **kwargs)

    monkeypatch.setattr(api, "learn_model", learn_model_)
    plural = cli.Path(__file__).parent.parent / "data" / "plural.tsv"
    for extra in ([], ["--time-limit", "0"], ["--time-limit", "2.5"]):
        result = runner.invoke(app, ["learn", str(plural), "-o", str(tmp_path / "m"), "--variant", "token", *extra])
        assert result.exit_code == 0, result.output
    assert seen == [cli.DEFAULT_TIME_LIMIT, None, 2.5]
    assert cli.DEFAULT_TIME_LIMIT == 600  # the README's Limits table says so
