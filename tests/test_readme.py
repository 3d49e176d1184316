"""The README's Python session runs as written (a doctest, from the project's directory),
its two set-up commands are the ones that work, and what it and the docs cite exists."""

from __future__ import annotations

import dataclasses
import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT

from fstsynth.problem import Problem
from fstsynth.synthesis import Options

README = (ROOT / "README.md").read_text(encoding="utf-8")
QUICK_START = (
    "pip install . && fstsynth learn data/plural.tsv --features data/plural-features.json -o plural-model "
    "&& fstsynth apply plural-model --check < data/plural-words.txt"
)
TEST_COMMAND = "scripts/install-test-deps && python -m pytest -q -n auto"


def shell_blocks(text: str) -> list[str]:
    return [block.split("```", 1)[0].strip() for block in text.split("```sh\n")[1:]]


def test_readme_python_session(monkeypatch, paradigm_default):
    monkeypatch.chdir(ROOT)
    # The session learns data/paradigm.json with the default options: the model the
    # test session learned so once (`conftest.paradigm_default`, ~15 s) is that model
    # (learning is deterministic), and the API around it runs as written.
    from fstsynth import api

    problem, model = paradigm_default
    learn_model = api.learn_model

    def learned_once(pairs: Problem, options: Options, *args: Any, **kwargs: Any) -> Any:
        same = dataclasses.replace(pairs, source=pairs.source and Path(pairs.source).resolve()) == problem
        if same and options == Options():
            return model
        return learn_model(pairs, options, *args, **kwargs)

    monkeypatch.setattr(api, "learn_model", learned_once)
    result = doctest.testfile(
        str(ROOT / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted >= 10, "the README lost its Python session"
    assert result.failed == 0, f"{result.failed} of {result.attempted} README examples failed (see above)"


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 250, "the README is the summary: move the detail into docs/"


def test_the_set_up_commands_are_the_two_first_blocks_and_ci_runs_the_test_command():
    assert shell_blocks(README)[:2] == [QUICK_START, TEST_COMMAND]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in ci.splitlines(), ".ci/run no longer runs the README's test command"
    assert "-m slow" in ci, ".ci/run no longer runs the slow tests"


def test_the_quick_start_learns_and_applies(tmp_path):
    """The quick start after `pip install .` (the package is installed to run this), run
    by the shell as written, with `fstsynth` being this checkout's."""
    shutil.copytree(ROOT / "data", tmp_path / "data")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fstsynth").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fstsynth "$@"\n')
    (bin_dir / "fstsynth").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    command = QUICK_START.removeprefix("pip install . && ")
    proc = subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    words = (ROOT / "data" / "plural-words.txt").read_text(encoding="utf-8").splitlines()
    summary, predictions = proc.stdout.split("model written to plural-model\n")
    assert "training pairs reproduced 20/20" in summary
    assert len(predictions.splitlines()) == len(words) and predictions.startswith("p ɪ g z\n"), proc.stdout


def test_what_the_readme_docs_and_docstrings_cite_exists():
    """Links between the README and docs/, and the files docstrings cite (no document
    outside the repository, such as a DESIGN.md that was never in it)."""
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)\)", doc.read_text(encoding="utf-8")):
            if not (doc.parent / target).exists():
                missing.append(f"{doc.relative_to(ROOT)} -> {target}")
    for path in [*ROOT.glob("fstsynth/**/*.py"), *ROOT.glob("exporters/*.py"), *ROOT.glob("scripts/*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "DESIGN.md" not in text, f"{path.relative_to(ROOT)} cites DESIGN.md, not in the repository"
        for target in re.findall(r"\bdocs/[\w-]+\.md", text):
            if not (ROOT / target).exists():
                missing.append(f"{path.relative_to(ROOT)} -> {target}")
    assert not missing, missing
