"""Scoring: a model on gold word pairs (`fstsynth evaluate`), and benchmark answers
against solutions, with the benchmark's published definitions.

Public API:
    edit_distance(a, b) -> int
    Predictor (what is scored: a column pair's model, `fstsynth.model.PairModel`)
    Firing, Mistake, Evaluation, evaluate_pairs(predictor, gold, max_errors=None) -> Evaluation
    derive(predictor, word) -> (forms, firings), firings(predictor, word)
    ProblemScore, score_problem(answer_doc, solution_doc) -> ProblemScore
    score_directory(answers_dir, solutions_dir) -> list[ProblemScore]
    summarize(scores) -> dict   (macro averages overall and per type, micro Exact,
                                 counts of problems at Exact >= 0.5, >= 0.75, = 1.0)

A model on gold pairs, as G2P scorers (SIGMORPHON's) count: Exact is the share of
words predicted exactly, the word error rate WER = 1 - Exact, and the phone (token)
error rate PER is the summed token edit distance (Levenshtein: insertions, deletions,
substitutions, each 1) between prediction and target over the summed number of target
tokens. Figures are fractions (0.25, not 25%). Gold words written without spaces are
split as `apply` splits them: into the longest tokens the model knows.

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
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from fstsynth.errors import UserError
from fstsynth.types import Features, Token, Word

if TYPE_CHECKING:
    from fstsynth.dsl import Program, Rule

Tokens = Sequence[str]


class Predictor(Protocol):
    """Something that predicts the words of a column pair with a program: what scoring
    and derivations read (`fstsynth.model.PairModel` is one)."""

    @property
    def source(self) -> int: ...
    @property
    def target(self) -> int: ...
    @property
    def program(self) -> "Program": ...
    @property
    def alphabet(self) -> tuple[Token, ...]: ...
    @property
    def features(self) -> Features: ...

    def map_unknown(self, word: Sequence[Token]) -> Word:
        """The word as the program reads it (unseen tokens as `<unk>`)."""
        ...

    def predict_many(self, words: Sequence[Sequence[Token]]) -> list[Word]:
        """The program's outputs for `words`, unseen tokens put back."""
        ...


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token sequences (each edit costs 1)."""
    previous = list(range(len(b) + 1))  # distances from a[:0] to each prefix of b
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class Firing:
    """A rule that fired on a word: pass and rule numbered from 1; `position` numbers
    the input tokens of the pass from 1 (0: the start, before the first token)."""

    pass_number: int
    rule_number: int
    position: int
    token: str | None  # the token at `position` (None at the start)
    output: Word
    rule: "Rule"

    def __str__(self) -> str:
        from fstsynth.spe import EMPTY, rule_to_spe

        where = "start" if self.position == 0 else f"{self.position} ({self.token})"
        return (
            f"pass {self.pass_number}, at {where}: rule {self.rule_number}, "
            f"{rule_to_spe(self.rule)}  =>  {' '.join(self.output) or EMPTY}"
        )


@dataclass(frozen=True)
class Mistake:
    """A gold word the model gets wrong, with the rules that fired on it."""

    source: Word
    prediction: Word
    target: Word
    edits: int
    firings: tuple[Firing, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": " ".join(self.source),
            "prediction": " ".join(self.prediction),
            "target": " ".join(self.target),
            "edits": self.edits,
            "rules": [str(f) for f in self.firings],
        }


@dataclass(frozen=True)
class Evaluation:
    """A model's scores on gold pairs; `errors` holds the first mistakes (all, unless
    the evaluation was asked for fewer), `error_count` counts them all."""

    words: int
    correct: int
    edits: int  # token edits summed over the words
    target_tokens: int
    errors: tuple[Mistake, ...]

    @property
    def error_count(self) -> int:
        return self.words - self.correct

    @property
    def exact(self) -> float:
        return self.correct / self.words if self.words else 0.0

    @property
    def wer(self) -> float:
        return 1.0 - self.exact if self.words else 0.0

    @property
    def per(self) -> float:
        return self.edits / self.target_tokens if self.target_tokens else float(self.edits > 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "words": self.words,
            "correct": self.correct,
            "exact": self.exact,
            "wer": self.wer,
            "per": self.per,
            "token_edits": self.edits,
            "target_tokens": self.target_tokens,
            "errors": [m.to_json() for m in self.errors],
        }


def derive(pm: Predictor, word: Sequence[str]) -> tuple[list[Word], tuple[Firing, ...]]:
    """The word's forms (as the model reads it, then after each pass) and the rules
    that fire on it, pass by pass: the interpreter's trace, which the transducer
    agrees with."""
    from fstsynth.interpreter import trace

    form = pm.map_unknown(word)
    forms = [form]
    found = []
    for k, (output, steps) in enumerate(trace(pm.program, form, pm.features), start=1):
        rules = pm.program.passes[k - 1].rules
        for step in steps:
            if step.rule_index is None:
                continue
            token = None if step.position < 0 else form[step.position]
            found.append(Firing(k, step.rule_index + 1, step.position + 1, token, step.output, rules[step.rule_index]))
        form = output
        forms.append(form)
    return forms, tuple(found)


def firings(pm: Predictor, word: Sequence[str]) -> tuple[Firing, ...]:
    """The rules that fire on `word`, pass by pass (see `derive`)."""
    return derive(pm, word)[1]


def gold_pairs(pm: Predictor, gold: Any) -> list[tuple[Word, Word]]:
    """The (source, target) pairs of `gold` (a path to a TSV or problem file, or pairs
    of strings) for the model's column pair; words written without spaces are split into
    the longest tokens the model knows, as `apply` splits them."""
    from fstsynth.problem import WordSplitter, read_pairs

    problem = read_pairs(gold, "gold")
    if problem.directed:
        source, target = 0, 1
    else:
        source, target = pm.source, pm.target
        if max(source, target) >= len(problem.columns):
            raise UserError(f"{problem.source or problem.name}: has no column {max(source, target) + 1}")
    split = WordSplitter(pm.alphabet)
    pairs = []
    for i, row in enumerate(problem.cells):
        s, t = row[source], row[target]
        if s is None or t is None:
            continue
        if (i, source) in problem.unspaced:
            s = split("".join(s))
        if (i, target) in problem.unspaced:
            t = split("".join(t))
        pairs.append((s, t))
    if not pairs:
        raise UserError(f"{problem.source or problem.name}: no row has both a source and a target word")
    return pairs


def evaluate_pairs(pm: Predictor, gold: Any, max_errors: int | None = None) -> Evaluation:
    """Score a column pair's model on gold pairs (see the module docstring); the first
    `max_errors` mistakes (all if None) come with the rules that fired."""
    pairs = gold_pairs(pm, gold)
    predictions = pm.predict_many([s for s, _ in pairs])
    correct = edits = target_tokens = 0
    mistakes: list[Mistake] = []
    for (source, target), prediction in zip(pairs, predictions):
        distance = edit_distance(prediction, target)
        edits += distance
        target_tokens += len(target)
        if prediction == target:
            correct += 1
        elif max_errors is None or len(mistakes) < max_errors:
            mistakes.append(Mistake(source, prediction, target, distance, firings(pm, source)))
    return Evaluation(len(pairs), correct, edits, target_tokens, tuple(mistakes))


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
