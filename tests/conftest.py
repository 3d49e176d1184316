"""Shared fixtures: the project's data directory and the benchmark, when present."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import signal
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable

import pytest

ROOT = Path(__file__).resolve().parent.parent


def script_module(name: str) -> ModuleType:
    """The script `scripts/NAME` (a file without `.py`) imported as a module of that name."""
    loader = importlib.machinery.SourceFileLoader(name, str(ROOT / "scripts" / name))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    loader.exec_module(module)
    return module


def as_from_a_terminal() -> None:
    """Give a child the default SIGINT handling a terminal gives it (a `preexec_fn`). A
    process started in the background by a non-interactive shell (`pytest &` in a script)
    has SIGINT ignored, and Python keeps an inherited SIG_IGN: a command would then ignore
    a test's SIGINT and finish with exit 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
DATA = ROOT / "data"
SHARED = ROOT.parent / "shared" / "olympiad-dev"


def benchmark_problems() -> list[Path]:
    """The benchmark's problem files, or [] when ../shared is not beside the project."""
    directory = SHARED / "problems"
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


needs_benchmark = pytest.mark.skipif(
    not benchmark_problems(),
    reason=f"benchmark data not found at {SHARED} (it exists only beside a development checkout)",
)


@pytest.fixture(scope="session")
def benchmark_models():
    """Every benchmark problem with a model learned for all its column pairs, learned
    once per test session: {name: (problem, model)}.

    Learned with the paper's `token` variant and no tier predicates rather than the
    default (`auto` cross-validates two variants per pair, several times the synthesis
    work; a tier test looking right makes cascades of millions of arcs on some pairs):
    the laws these tests check hold for any program, and the suite must stay fast.
    `TierIs` is covered by the hand-written and random programs, and the default
    settings by `scripts/benchmark` on the whole dev split. To run these tests on models
    learned with the default settings, by hand (several times slower):
    FSTSYNTH_BENCHMARK_DEFAULTS=1 python -m pytest tests/test_exports_benchmark.py
    """
    if not benchmark_problems():
        pytest.skip(f"benchmark data not found at {SHARED}")
    paths = benchmark_problems()
    return {path.stem: done.result() for path, done in zip(paths, in_workers(_learn_benchmark, paths))}


def _learn_benchmark(path: Path):
    from fstsynth.learning import learn_model
    from fstsynth.problem import load_problem
    from fstsynth.synthesis import Options

    problem = load_problem(path)
    defaults = os.environ.get("FSTSYNTH_BENCHMARK_DEFAULTS") == "1"
    options = Options() if defaults else Options(variant="token", tiers=False)
    return problem, learn_model(problem, options)


#: Worker processes for `auto`'s cross-validation folds in the tests that learn with it
#: (`learn_model(..., jobs=LEARN_JOBS)`: the same model, sooner): the suite runs one test
#: at a time, and a second core would be idle.
LEARN_JOBS = min(2, os.cpu_count() or 1)


def in_workers(function: Callable[[Any], Any], items: Iterable[Any], workers: int = 2) -> list[Future]:
    """`function` on each item, in up to `workers` processes (fewer on a machine with
    fewer cores): a future per item, in order, each done. The suite runs one test at a
    time, so a second core is idle while a fixture learns many independent problems;
    the results are the same (learning is deterministic). `function` must be a
    module-level function and its results picklable."""
    items = list(items)
    count = min(workers, os.cpu_count() or 1, len(items))
    if count <= 1:
        futures = []
        for item in items:
            future: Future = Future()
            try:
                future.set_result(function(item))
            except Exception as error:  # raised by the test that asks for the result
                future.set_exception(error)
            futures.append(future)
        return futures
    with ProcessPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(function, item) for item in items]
    return futures


@pytest.fixture(scope="session")
def paradigm_default():
    """data/paradigm.json (six column pairs) and its model learned with the default
    options, once per test session: (problem, model). Learning it takes ~15 s, and
    several modules need a model of several column pairs; each saves its own copy."""
    from fstsynth.learning import learn_model
    from fstsynth.problem import load_problem
    from fstsynth.synthesis import Options

    problem = load_problem(DATA / "paradigm.json")
    return problem, learn_model(problem, Options(), jobs=LEARN_JOBS)


@pytest.fixture(scope="session")
def plural_saved(tmp_path_factory) -> Path:
    """data/plural.tsv's model learned with the default options (no features file) and
    saved, once per test session. Five modules apply, stream, ship and interrupt this
    model; learning it takes ~2 s of CPU, which each paid again. A module copies the
    directory (`plural_copy`) rather than use it, so that no test sees another's files."""
    from fstsynth.learning import learn_model
    from fstsynth.model_file import save_model
    from fstsynth.problem import load_problem

    directory = tmp_path_factory.mktemp("plural-saved") / "plural"
    save_model(learn_model(load_problem(DATA / "plural.tsv")), directory)
    return directory


@pytest.fixture(scope="session")
def plural_features_learned(tmp_path_factory) -> tuple[Path, str]:
    """`fstsynth learn data/plural.tsv --features data/plural-features.json -o DIR` run
    as a user runs it (in this process, through typer's CliRunner), once per test
    session: (DIR, the command's output). Five modules read this model; each learned it
    again. A module copies the directory (`plural_copy`)."""
    from typer.testing import CliRunner

    from fstsynth.cli import app

    directory = tmp_path_factory.mktemp("plural-features-learned") / "plural"
    args = ["learn", str(DATA / "plural.tsv"), "--features", str(DATA / "plural-features.json"), "-o", str(directory)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return directory, result.output


def plural_copy(saved: Path, tmp_path_factory: pytest.TempPathFactory, name: str, leaf: str = "plural") -> Path:
    """A copy of a session's model directory (`plural_saved`, `plural_features_learned`)
    as `leaf` in a new directory `name`, so that no test sees another module's files."""
    import shutil

    directory = tmp_path_factory.mktemp(name) / leaf
    shutil.copytree(saved, directory)
    return directory


@pytest.fixture(scope="session")
def paradigm_feature():
    """data/paradigm.json's model learned through the library's `fstsynth.learn` with the
    `feature` variant, once per test session (~1 s of CPU; test_api.py and
    test_compile_command.py each learned it)."""
    import fstsynth

    return fstsynth.learn(DATA / "paradigm.json", variant="feature")
