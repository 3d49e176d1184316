"""Scoring answers against solutions, with the benchmark's published definitions.

Public API:
    ProblemScore, score_problem(answer_doc, solution_doc) -> ProblemScore
    score_directory(answers_dir, solutions_dir) -> list[ProblemScore]
    summarize(scores) -> dict   (macro averages overall and per type, micro Exact,
                                 counts of problems at Exact >= 0.5, >= 0.75, = 1.0)

Exact is the share of test cells predicted exactly. chrF ("total F") uses token
n-grams of orders 1 and 2 with beta 1: matching, reference and hypothesis n-gram counts
are summed over all test cells of a problem first, F is computed per order from those
sums, and the orders are averaged. It is not computed for stress problems. Test cells
are the cells holding `?` in the problem; the solution file gives their answers.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

Tokens = Sequence[str]


@dataclass(frozen=True)
class ProblemScore:
    name: str
    kind: str
    cells: int
    exact_hits: int
    chrf: float | None

    @property
    def exact(self) -> float:
        return self.exact_hits / self.cells if self.cells else 0.0


def _ngrams(tokens: Tokens, n: int) -> Counter:
    return Counter(tuple(tokens[k : k + n]) for k in range(len(tokens) - n + 1))


def chrf_total(pairs: Sequence[tuple[Tokens, Tokens]], orders: Sequence[int] = (1, 2), beta: float = 1.0) -> float:
    """Corpus-level token chrF over (hypothesis, reference) pairs."""
    fs = []
    for n in orders:
        match = hyp_total = ref_total = 0
        for hyp, ref in pairs:
            h, r = _ngrams(hyp, n), _ngrams(ref, n)
            match += sum((h & r).values())
            hyp_total += sum(h.values())
            ref_total += sum(r.values())
        precision = match / hyp_total if hyp_total else 0.0
        recall = match / ref_total if ref_total else 0.0
        if precision + recall == 0:
            fs.append(0.0)
        else:
            b2 = beta * beta
            fs.append((1 + b2) * precision * recall / (b2 * precision + recall))
    return sum(fs) / len(fs)


def test_cells(problem_doc: dict[str, Any]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, row in enumerate(problem_doc["data"])
        for j, cell in enumerate(row)
        if isinstance(cell, str) and cell.strip() == "?"
    ]


def score_problem(
    name: str, problem_doc: dict[str, Any], answer_doc: dict[str, Any], solution_doc: dict[str, Any]
) -> ProblemScore:
    kind = problem_doc.get("type", "unknown")
    pairs = []
    hits = 0
    for i, j in test_cells(problem_doc):
        hyp = str(answer_doc["data"][i][j]).split()
        ref = str(solution_doc["data"][i][j]).split()
        hits += hyp == ref
        pairs.append((hyp, ref))
    chrf = None if kind == "stress" else chrf_total(pairs)
    return ProblemScore(name, kind, len(pairs), hits, chrf)


def score_directory(
    problems_dir: str | Path, answers_dir: str | Path, solutions_dir: str | Path
) -> list[ProblemScore]:
    scores = []
    for path in sorted(Path(problems_dir).glob("*.json")):
        problem = json.loads(path.read_text(encoding="utf-8"))
        answer_path = Path(answers_dir) / path.name
        solution = json.loads((Path(solutions_dir) / path.name).read_text(encoding="utf-8"))
        answer = json.loads(answer_path.read_text(encoding="utf-8")) if answer_path.exists() else problem
        scores.append(score_problem(path.stem, problem, answer, solution))
    return scores


def summarize(scores: Sequence[ProblemScore]) -> dict[str, Any]:
    def macro(items: Sequence[ProblemScore]) -> dict[str, Any]:
        chrfs = [s.chrf for s in items if s.chrf is not None]
        return {
            "problems": len(items),
            "exact": sum(s.exact for s in items) / len(items) if items else 0.0,
            "chrf": sum(chrfs) / len(chrfs) if chrfs else None,
        }

    kinds = sorted({s.kind for s in scores})
    cells = sum(s.cells for s in scores)
    return {
        "overall": macro(scores),
        "by_type": {k: macro([s for s in scores if s.kind == k]) for k in kinds},
        "micro_exact": sum(s.exact_hits for s in scores) / cells if cells else 0.0,
        "at_least_50": sum(s.exact >= 0.5 for s in scores),
        "at_least_75": sum(s.exact >= 0.75 for s in scores),
        "perfect": sum(s.exact == 1.0 for s in scores),
    }
