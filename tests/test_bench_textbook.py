"""scripts/bench_textbook end to end on the suite's smallest problem, with the 2017
baseline only (fstsynth's imports alone take seconds): the tasks it makes, its
scoring and its JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

PROBLEM = "english-indefinite-article"  # 10 rows, 4 held out: a second or two


def test_bench_textbook_scores_the_citation_modes(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_textbook"), "--problems", PROBLEM,
         "--systems", "conll2017", "--modes", "held-out", "cv", "fill", "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "macro Exact" in proc.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    (problem,) = report["problems"]
    assert problem["name"] == PROBLEM and problem["rows"] == 10
    # The held-out split: its 4 cells. The 2017 baseline, by hand: its longest suffix
    # rule never looks at the first segment, so it writes [ə] before every noun and gets
    # the two consonant-initial ones (juθ, wʊlf) right.
    baseline = problem["held-out/conll2017"]
    assert (baseline["correct"], baseline["total"]) == (2, 4)
    # A peer fills a cell from the citation column: its fill mode is the held-out run.
    assert problem["fill/conll2017"]["correct"] == 2
    # 4-fold cross-validation: every row is tested once.
    assert problem["cv/conll2017"]["total"] == 10
    folds = {t["fold"] for t in report["tasks"] if t["mode"] == "cv" and t["system"] == "conll2017"}
    assert folds == {0, 1, 2, 3}
    summary = report["summary"]["held-out/conll2017"]
    assert summary["macro_exact"] == 0.5 and summary["perfect"] == 0
