"""Solve a problem table: fill every `?` cell from the known cells of its row.

Public API:
    CellAnswer, SolveReport
    solve_problem(problem, options, check=False) -> SolveReport
    best_guess(row), fallback_report(problem)   (answers when nothing can be learned)
    write_answers(problem, report, out_dir) -> Path
    choose_source(model, row, target) -> PairModel | None
    vote(model, row, target, checks=None) -> tuple[Word, PairModel] | None
    check_pairs(problem, model) -> list[tuple[int, int]]

To fill M[i][j], every column k with a known cell in row i and a learned program k -> j
is a candidate; the program most likely to be right wins: the best cross-validated
share of training rows when it was measured (it says how well the program
generalizes, which reproducing its own training pairs does not), then the most
training pairs reproduced, then the lower cost, i.e. the better ranking score, then
the lower column index. With several candidates, they vote (`vote`): each predicted
word gets the summed held-out accuracy of the programs predicting it, and the best sum
wins, ties going to the single best program's word; programs that agree although they
read different cells are more likely right than the best one alone.

A paradigm's cells hold together both ways, so a candidate word is also checked
against the row's other known cells: a program j -> k that maps the candidate to the
known M[i][k] adds its held-out accuracy to the candidate's sum. The cell that tells
a lexical class apart (a Japanese negative `k i ɾ a n a i` is a consonant stem's,
which its citation form `k i ɾ ɯ` does not tell) then outweighs a program that is
better on average but blind to the class here: the citation form's `k i m a s ɯ` maps
back to `k i n a i`, not to the known negative. Where the candidates disagree, the
programs j -> k such checks need are learned too (`check_pairs`). Only the column
pairs some `?` needs are learned. A cell with no candidate gets a best guess (the
row's first known cell), so every answer file is complete.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from fstsynth.fileio import atomic_write_text
from fstsynth.learning import learn_model
from fstsynth.model import Error, Model, PairModel
from fstsynth.problem import Problem, Word
from fstsynth.synthesis import Options

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CellAnswer:
    row: int
    column: int
    word: Word
    source: int | None  # the column predicted from; None for a fallback guess
    interpreter: Word | None = None  # set in check mode


@dataclass
class SolveReport:
    problem: str
    answers: list[CellAnswer]
    model: Model | None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def mismatches(self) -> list[CellAnswer]:
        return [a for a in self.answers if a.interpreter is not None and a.interpreter != a.word]


def needed_pairs(problem: Problem) -> list[tuple[int, int]]:
    """Column pairs (k, j) that some `?` in column j could be predicted through."""
    trainable = set(problem.column_pairs())
    needed = set()
    for i, j in problem.queries:
        for k, cell in enumerate(problem.cells[i]):
            if cell is not None and (k, j) in trainable:
                needed.add((k, j))
    return sorted(needed)


def _rank(pm: PairModel) -> tuple:
    """Sort key of a candidate program: the most trustworthy first."""
    held_out = pm.held_out if pm.held_out is not None else -1.0
    return (-held_out, -pm.train_correct / max(pm.train_total, 1), pm.cost, pm.source)


def _candidates(model: Model, row: Sequence[Word | None], target: int) -> list[PairModel]:
    """Programs into `target` whose source cell is known in `row`, best first."""
    found = [pm for (s, t), pm in model.pairs.items() if t == target and row[s] is not None]
    return sorted(found, key=_rank)


def choose_source(model: Model, row: Sequence[Word | None], target: int) -> PairModel | None:
    """The single most trustworthy program for the cell (see the module doc)."""
    found = _candidates(model, row, target)
    return found[0] if found else None


def _weight(pm: PairModel) -> float:
    """A program's vote: its held-out accuracy; 0 when unmeasured (then it only breaks
    ties, through its rank), so that the vote never overrules the ranking on its own."""
    return pm.held_out if pm.held_out is not None else 0.0


#: Column pair -> program, for `vote`'s checks of a candidate against the row.
Checks = Mapping[tuple[int, int], PairModel]


def vote(
    model: Model, row: Sequence[Word | None], target: int, checks: Checks | None = None
) -> tuple[Word, PairModel] | None:
    """The word the candidate programs' weighted votes favour, and the best-ranked
    program predicting it; None without candidates.

    Each candidate word also gets the weight of every program `target` -> k in `checks`
    (default: the model's own programs) that maps it to the row's known cell k (module
    doc). Without such programs, one or two candidates give `choose_source`'s word (two
    that disagree: the heavier wins, and ties go to the better ranked).
    """
    found = _candidates(model, row, target)
    if not found:
        return None
    checks = model.pairs if checks is None else checks
    tally: dict[Word, float] = {}
    first: dict[Word, PairModel] = {}  # the best-ranked program giving each word
    order: list[Word] = []
    for pm in found:
        word = pm.predict(row[pm.source] or ())  # known: _candidates checked it
        if word not in first:
            first[word] = pm
            order.append(word)
            tally[word] = _agreement(word, row, target, checks) if len(found) > 1 else 0.0
        tally[word] += _weight(pm)
    # max() keeps the first of equal sums; `order` lists the words by their best program.
    # Rounded so that float noise in the sums cannot break a tie.
    word = max(order, key=lambda w: round(tally[w], 9))
    return word, first[word]


def _agreement(word: Word, row: Sequence[Word | None], target: int, checks: Checks) -> float:
    """The summed weight of the programs `target` -> k mapping `word` to the row's known
    cell k."""
    total = 0.0
    for k, cell in enumerate(row):
        check = checks.get((target, k)) if k != target and cell is not None else None
        if check is not None and check.predict(word) == cell:
            total += _weight(check)
    return total


def check_pairs(problem: Problem, model: Model) -> list[tuple[int, int]]:
    """The column pairs (j, k), trainable and not in `model`, that would check the
    candidates of a `?` in column j against its row's known cell k, for the cells whose
    candidates disagree (elsewhere a check changes nothing)."""
    trainable = set(problem.column_pairs())
    needed = set()
    for i, j in problem.queries:
        row = problem.cells[i]
        words = {pm.predict(row[pm.source] or ()) for pm in _candidates(model, row, j)}
        if len(words) < 2:
            continue
        for k, cell in enumerate(row):
            if cell is not None and (j, k) in trainable and (j, k) not in model.pairs:
                needed.add((j, k))
    return sorted(needed)


def best_guess(row: Sequence[Word | None]) -> Word:
    """The answer for a cell no program can reach: the row's first known cell."""
    return next((c for c in row if c is not None), ())


def fallback_report(problem: Problem) -> SolveReport:
    """Best guesses for every `?`, for a problem that could not be learned."""
    answers = [CellAnswer(i, j, best_guess(problem.cells[i]), None) for i, j in problem.queries]
    return SolveReport(problem.name, answers, None)


def _learn_checks(problem: Problem, model: Model, options: Options) -> dict[tuple[int, int], PairModel]:
    """The programs of `check_pairs`, each learned on its own: a check is optional, so
    one that cannot be learned (out of time, say) is left out with a warning, and the
    cells are filled without it."""
    learned: dict[tuple[int, int], PairModel] = {}
    for pair in check_pairs(problem, model):
        try:
            learned.update(learn_model(problem, options, pairs=[pair]).pairs)
        except Error as exc:
            log.warning("%s: the check %s is left out: %s", problem.name, pair, exc)
    return learned


def solve_problem(
    problem: Problem,
    options: Options = Options(),
    *,
    check: bool = False,
) -> SolveReport:
    started = time.perf_counter()
    pairs = needed_pairs(problem)
    model = learn_model(problem, options, pairs=pairs) if pairs else None
    checks = {**model.pairs, **_learn_checks(problem, model, options)} if model is not None else {}
    learned = time.perf_counter()
    answers = []
    for i, j in problem.queries:
        row = problem.cells[i]
        voted = vote(model, row, j, checks) if model else None
        if voted is None:
            answers.append(CellAnswer(i, j, best_guess(row), None))
            continue
        word, pm = voted
        interp = pm.interpret(row[pm.source] or (), model.features) if check and model is not None else None
        answers.append(CellAnswer(i, j, word, pm.source, interp))
    done = time.perf_counter()
    seconds = {"learn": learned - started, "predict": done - learned, "total": done - started}
    if model:
        for part in ("alignment", "synthesis", "compilation"):
            seconds[part] = sum(pm.seconds.get(part, 0.0) for pm in checks.values())
    return SolveReport(problem.name, answers, model, seconds)


def write_answers(problem: Problem, report: SolveReport, out_dir: str | Path) -> Path:
    """Write `out_dir/<problem file name>`: the problem with every `?` filled."""
    out_dir = Path(out_dir)
    name = problem.source.name if problem.source else f"{problem.name}.json"
    path = out_dir / name
    atomic_write_text(path, problem.answer_text({(a.row, a.column): a.word for a in report.answers}))
    return path
