"""`solve --jobs N` gives the same answers, in the same order, as one process."""

from __future__ import annotations

import json
import pytest
from typer.testing import CliRunner

from fstsynth.cli import app
from fstsynth.parallel import solve_files
from fstsynth.synthesis import Options


@pytest.fixture
def problem_dir(tmp_path):
    directory = tmp_path / "problems"
    directory.mkdir()
    for name, suffix in (("b.json", "s"), ("a.json", "n")):
        rows = [[w, f"{w} {suffix}"] for w in ("p a t", "t i k", "k u p a", "n a s i")]
        rows += [["b a d", "?"], ["d i b u", "?"]]
        doc = {"columns": ["stem", "plural"], "data": rows}
        (directory / name).write_text(json.dumps(doc), encoding="utf-8")
    (directory / "broken.json").write_text("{not json", encoding="utf-8")
    return directory


def test_solve_files_same_answers_any_jobs(problem_dir):
    paths = sorted(problem_dir.iterdir())
    one = list(solve_files(paths, Options(), check=True, jobs=1))
    two = list(solve_files(paths, Options(), check=True, jobs=2))
    assert [r.path for r in two] == paths
    assert [r.load_error is not None for r in two] == [False, False, True]
    for a, b in zip(one, two):
        assert (a.report is None) == (b.report is None)
        if a.report is not None:
            assert a.report.answers == b.report.answers
            assert a.report.answers and not b.report.mismatches


def test_cli_jobs_writes_identical_files(problem_dir, tmp_path):
    runner = CliRunner()
    for jobs in ("1", "2"):
        result = runner.invoke(app, ["solve", str(problem_dir), "--out", str(tmp_path / f"out{jobs}"), "--jobs", jobs])
        assert result.exit_code == 0, result.output
    for name in ("a.json", "b.json"):
        assert (tmp_path / "out1" / name).read_text() == (tmp_path / "out2" / name).read_text()
    assert runner.invoke(app, ["solve", str(problem_dir), "--out", str(tmp_path / "x"), "--jobs", "0"]).exit_code == 2
