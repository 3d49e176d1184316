"""The textbook development suite (data/textbook): every problem loads with the
project's loader, has held-out cells, and its solution file is the same table with
exactly the held-out cells filled."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from conftest import DATA
from fstsynth.problem import load_problem

SUITE = DATA / "textbook"
PROBLEMS = sorted((SUITE / "problems").glob("*.json"))
# Phonology textbooks' tables: the issue that asked for this suite names 4-62 rows.
MIN_ROWS, MAX_ROWS = 4, 62


def test_the_suite_has_at_least_twenty_problems_each_with_a_solution() -> None:
    assert len(PROBLEMS) >= 20
    solutions = {p.name for p in (SUITE / "solutions").glob("*.json")}
    assert solutions == {p.name for p in PROBLEMS}


def test_the_readme_table_lists_every_problem_with_its_row_count() -> None:
    readme = (SUITE / "README.md").read_text(encoding="utf-8")
    table: dict[str, int] = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].isdigit():
            table[cells[0]] = int(cells[1])
    assert table == {p.stem: len(load_problem(p).cells) for p in PROBLEMS}


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_problem_loads_and_has_held_out_cells(path: Path) -> None:
    problem = load_problem(path)
    assert problem.kind == "morphology"
    assert problem.document is not None and problem.document.get("ipa") is True
    assert "features" not in problem.document  # plain IPA: features come from the project
    assert MIN_ROWS <= len(problem.cells) <= MAX_ROWS
    assert problem.queries
    # The first column is the citation form: never held out, always known.
    assert all(j != 0 for _, j in problem.queries)
    assert all(row[0] is not None for row in problem.cells)
    # Every held-out cell can be learned: its column has training rows from column 0.
    for _, j in problem.queries:
        assert problem.training_pairs(0, j)


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_solution_matches_its_problem(path: Path) -> None:
    problem_doc = json.loads(path.read_text(encoding="utf-8"))
    solution_path = SUITE / "solutions" / path.name
    solution_doc = json.loads(solution_path.read_text(encoding="utf-8"))
    assert {k: v for k, v in problem_doc.items() if k != "data"} == {
        k: v for k, v in solution_doc.items() if k != "data"
    }
    assert len(problem_doc["data"]) == len(solution_doc["data"])
    for i, (row, answer_row) in enumerate(zip(problem_doc["data"], solution_doc["data"])):
        assert len(row) == len(answer_row) == len(problem_doc["columns"]), f"row {i + 1}"
        for j, (cell, answer) in enumerate(zip(row, answer_row)):
            if cell == "?":
                assert answer != "?" and answer.strip(), f"row {i + 1}, column {j + 1}: no answer"
            else:
                assert cell == answer, f"row {i + 1}, column {j + 1}: differs from the problem"
    assert load_problem(solution_path).queries == ()


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_cells_are_spaced_nfc_tokens(path: Path) -> None:
    solution = json.loads((SUITE / "solutions" / path.name).read_text(encoding="utf-8"))
    for i, row in enumerate(solution["data"]):
        for j, cell in enumerate(row):
            where = f"{path.stem}: row {i + 1}, column {j + 1}"
            assert cell == unicodedata.normalize("NFC", cell), where
            tokens = cell.split(" ")
            assert all(tokens), f"{where}: empty token (double space?)"
            # A combining mark or a modifier letter never starts a token: it belongs to
            # the segment before it (`aː`, `tʰ`, `t͡ʃ`).
            for tok in tokens:
                assert not unicodedata.combining(tok[0]) and unicodedata.category(tok[0]) != "Lm", (
                    f"{where}: token {tok!r}"
                )
            assert "g" not in cell, f"{where}: ASCII g where IPA ɡ is meant"
