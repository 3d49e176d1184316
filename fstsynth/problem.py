"""Problem I/O: read word tables (benchmark JSON, TSV pairs) and write answer files.

Public API:
    Problem, Word, Features, UNKNOWN
    load_problem(path) -> Problem       (JSON or TSV, by content)
    load_json_problem(path), load_tsv_problem(path)
    parse_word(text), split_graphemes(text)
    Problem.column_pairs(), Problem.training_pairs(s, t), Problem.answer_text(answers)

Every token is NFC-normalized on the way in, so that `é` typed as one code point or as
`e` + combining accent is the same token everywhere downstream.
"""

from __future__ import annotations

import json
import logging
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import regex

from fstsynth.errors import UserError
from fstsynth.types import Token, Word, Features

log = logging.getLogger(__name__)


#: A cell to predict (a test cell in the benchmark).
UNKNOWN = "?"

# Symbols the compiled transducers reserve for themselves; a problem may not use them.
RESERVED_TOKENS = frozenset({"<eps>", "<unk>", "<s>"})


class Error(UserError):
    """A problem file is malformed; the message names the file and row."""


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


_TIE_BARS = ("\u0361", "\u035c")  # t͡ʃ: joins the letters on either side


def split_graphemes(text: str) -> Word:
    """Split a string without spaces into user-perceived characters.

    Unicode grapheme clusters, adjusted for phonetic writing: a tie bar joins the next
    letter (`t͡ʃ` is one token) and modifier letters such as `ː`, `ʰ`, `ʲ` stay with the
    letter before them (`aː`, `tʰ`).
    """
    tokens: list[str] = []
    join_next = False
    for cluster in regex.findall(r"\X", nfc(text)):
        attaches = tokens and (
            join_next or all(unicodedata.category(ch) == "Lm" for ch in cluster)
        )
        if attaches:
            tokens[-1] += cluster
        else:
            tokens.append(cluster)
        join_next = cluster.endswith(_TIE_BARS)
    return tuple(nfc(t) for t in tokens)


def parse_word(text: str, *, split_unspaced: bool = False) -> Word:
    """Turn a cell into tokens: space-separated, or graphemes if asked and unspaced."""
    text = nfc(text).strip()
    if not text:
        return ()
    if split_unspaced and " " not in text and "\t" not in text:
        return split_graphemes(text)
    return tuple(text.split())


@dataclass(frozen=True)
class Problem:
    """A table of word forms.

    `cells[i][j]` is the tokens of row i, column j, or None when the cell is unknown
    (`?`, to predict) or empty (not asked). `queries` lists the (row, column) cells
    to predict.
    """

    name: str
    columns: tuple[str, ...]
    cells: tuple[tuple[Word | None, ...], ...]
    queries: tuple[tuple[int, int], ...]
    features: dict[Token, dict[str, bool]] = field(default_factory=dict)
    kind: str | None = None
    source: Path | None = None
    document: dict[str, Any] | None = None  # the JSON as read, to write answers back
    directed: bool = False  # a TSV maps source to target only

    def column_pairs(self) -> list[tuple[int, int]]:
        """Ordered column pairs (s, t), s != t, that have at least one training row."""
        if self.directed:
            return [(0, 1)] if self.training_pairs(0, 1) else []
        pairs = []
        for s in range(len(self.columns)):
            for t in range(len(self.columns)):
                if s != t and self.training_pairs(s, t):
                    pairs.append((s, t))
        return pairs

    def training_pairs(self, source: int, target: int) -> list[tuple[Word, Word]]:
        return [
            (row[source], row[target])
            for row in self.cells
            if row[source] is not None and row[target] is not None
        ]

    def unlearnable_columns(self) -> list[int]:
        """Columns with cells to predict but no training pair leading into them."""
        targets = {t for _, t in self.column_pairs()}
        return sorted({j for _, j in self.queries} - targets)

    def known_words(self, column: int) -> list[Word]:
        return [row[column] for row in self.cells if row[column] is not None]

    def alphabet(self) -> set[Token]:
        return {tok for row in self.cells for cell in row if cell for tok in cell}

    def answer_text(self, answers: Mapping[tuple[int, int], Word]) -> str:
        """The problem file's text with every `?` replaced by its answer, all else as read.

        JSON problems keep every other field and cell as they were; TSV problems are
        written back as TSV.
        """
        if self.document is None:
            lines = []
            for i, row in enumerate(self.cells):
                words = [answers.get((i, j), cell) or () for j, cell in enumerate(row)]
                lines.append("\t".join(" ".join(w) for w in words))
            return "\n".join(lines) + "\n"
        doc = json.loads(json.dumps(self.document))  # deep copy of plain JSON data
        for (i, j), word in answers.items():
            doc["data"][i][j] = " ".join(word)
        return json.dumps(doc, ensure_ascii=False) + "\n"


def _check_tokens(path: Path, where: str, word: Word) -> None:
    for tok in word:
        if tok in RESERVED_TOKENS:
            raise Error(f"{path}: {where}: token {tok!r} is reserved by fstsynth")


def load_problem(path: str | Path) -> Problem:
    """Read a problem from JSON (a `.json` file, or one starting with `{`) or TSV.

    Not `[`: a TSV may well start with a `[` token.
    """
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return _parse_json_problem(path, text)
    return _parse_tsv_problem(path, text)


def load_json_problem(path: str | Path) -> Problem:
    path = Path(path)
    return _parse_json_problem(path, _read_text(path))


def load_tsv_problem(path: str | Path) -> Problem:
    path = Path(path)
    return _parse_tsv_problem(path, _read_text(path))


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise Error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise Error(f"{path}: is a directory, not a problem file") from None
    except OSError as exc:
        raise Error(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")  # a BOM is accepted and dropped
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise Error(f"{path}: line {line}: not valid UTF-8") from None
    if not text.strip():
        raise Error(f"{path}: the file is empty")
    return text


def _parse_json_problem(path: Path, text: str) -> Problem:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Error(f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise Error(f"{path}: not a problem file: JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise Error(f"{path}: expected a JSON object with 'columns' and 'data'")
    columns = doc.get("columns")
    data = doc.get("data")
    if not isinstance(data, list) or not data:
        raise Error(f"{path}: 'data' must be a non-empty list of rows")
    if columns is None:
        columns = [f"column {j + 1}" for j in range(len(data[0]) if isinstance(data[0], list) else 0)]
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise Error(f"{path}: 'columns' must be a list of strings")
    if len(columns) < 2:
        raise Error(f"{path}: a problem needs at least two columns, found {len(columns)}")
    if len(set(columns)) != len(columns):
        dup = next(c for c in columns if columns.count(c) > 1)
        raise Error(f"{path}: duplicate column name {dup!r}")
    cells: list[tuple[Word | None, ...]] = []
    queries: list[tuple[int, int]] = []
    for i, row in enumerate(data):
        where = f"row {i + 1}"
        if not isinstance(row, list):
            raise Error(f"{path}: {where}: a row must be a list of cells")
        if len(row) > len(columns) and all(
            isinstance(c, str) and not c.strip() for c in row[len(columns) :]
        ):
            # Trailing empty cells (a spreadsheet export habit) carry no data: tolerated.
            log.warning("%s: %s: ignoring %d trailing empty cell(s)", path, where, len(row) - len(columns))
            row = row[: len(columns)]
        if len(row) != len(columns):
            raise Error(
                f"{path}: {where}: has {len(row)} cells, expected {len(columns)} (one per column)"
            )
        out_row: list[Word | None] = []
        for j, cell in enumerate(row):
            if not isinstance(cell, str):
                raise Error(
                    f"{path}: {where}, column {j + 1}: cell must be a string, "
                    f"got {type(cell).__name__}"
                )
            if cell.strip() == UNKNOWN:
                queries.append((i, j))
                out_row.append(None)
            elif not cell.strip():
                out_row.append(None)
            else:
                word = parse_word(cell)
                _check_tokens(path, f"{where}, column {j + 1}", word)
                out_row.append(word)
        if all(c is None for c in out_row) and any(q[0] == i for q in queries):
            raise Error(f"{path}: {where}: every cell is unknown, nothing to predict from")
        cells.append(tuple(out_row))
    features = _parse_features(path, doc.get("features", {}))
    return Problem(
        name=path.stem,
        columns=tuple(nfc(c) for c in columns),
        cells=tuple(cells),
        queries=tuple(queries),
        features=features,
        kind=doc.get("type") if isinstance(doc.get("type"), str) else None,
        source=path,
        document=doc,
    )


def _parse_features(path: Path, raw: Any) -> dict[Token, dict[str, bool]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise Error(f"{path}: 'features' must map tokens to {{feature: true/false}}")
    features: dict[Token, dict[str, bool]] = {}
    for tok, feats in raw.items():
        if not isinstance(feats, dict) or not all(isinstance(v, bool) for v in feats.values()):
            raise Error(f"{path}: features of token {tok!r} must map names to true/false")
        features.setdefault(nfc(tok), {}).update({nfc(k): v for k, v in feats.items()})
    return features


def _parse_tsv_problem(path: Path, text: str) -> Problem:
    cells: list[tuple[Word | None, ...]] = []
    queries: list[tuple[int, int]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            what = "no tab" if len(fields) == 1 else f"{len(fields)} fields"
            raise Error(f"{path}: line {lineno}: expected source<TAB>target, found {what}")
        row: list[Word | None] = []
        for j, cell in enumerate(fields):
            if cell.strip() == UNKNOWN:
                queries.append((len(cells), j))
                row.append(None)
                continue
            word = parse_word(cell, split_unspaced=True)
            if not word:
                raise Error(f"{path}: line {lineno}: empty {'source' if j == 0 else 'target'}")
            _check_tokens(path, f"line {lineno}", word)
            row.append(word)
        if row[0] is None:
            raise Error(f"{path}: line {lineno}: the source cannot be unknown")
        cells.append(tuple(row))
    if not cells:
        raise Error(f"{path}: no word pairs found")
    return Problem(
        name=path.stem,
        columns=("source", "target"),
        cells=tuple(cells),
        queries=tuple(queries),
        source=path,
        directed=True,
    )
