"""Problem I/O: read word tables (benchmark JSON, TSV pairs) and write answer files.

Public API:
    Problem, Word, Features, UNKNOWN
    load_problem(path) -> Problem       (JSON or TSV, by content)
    load_json_problem(path), load_tsv_problem(path)
    problem_from_pairs(pairs, name="pairs") -> Problem   (source, target) strings, as a TSV
    read_pairs(path_or_pairs) -> Problem
    load_features(path) -> dict, with_features(problem, features, where) -> Problem
    parse_word, split_graphemes, WordSplitter, splitter_for, is_spaced, nfc, look_alike,
    code_points (the word readers of `fstsynth.words`, named here too)
    Problem.column_pairs(), Problem.training_pairs(s, t), Problem.answer_text(answers)

Every token is NFC-normalized on the way in, and words are read by `fstsynth.words`:
tokens separated by spaces, or a word without spaces split into characters or the
longest known tokens; a JSON problem whose cells are unspaced is split so too, with a
warning saying so. A problem
remembers whether it was written with spaces (`Problem.spaced`), and answers are
written back in its style.

Reading is strict where a slip would silently change what is learned: a TSV whose first
line looks like a header (`singular<TAB>plural` above spaced words, two usual column
names such as these above unspaced words, or in letters none of which the rest of the
file uses) takes it as the column names, with a warning; a file that
looks comma-separated is refused saying so; features naming tokens that occur nowhere in
the data are reported (`with_features`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from fstsynth.errors import UserError
from fstsynth.types import Token, Word, Features
# The word readers, also part of this module's API (for the callers that read problems).
from fstsynth.words import (
    WordSplitter as WordSplitter,
    code_points as code_points,
    is_spaced as is_spaced,
    look_alike as look_alike,
    nfc as nfc,
    parse_word as parse_word,
    split_graphemes as split_graphemes,
    splitter_for as splitter_for,
)

log = logging.getLogger(__name__)


#: A cell to predict (a test cell in the benchmark).
UNKNOWN = "?"

# Symbols the compiled transducers reserve for themselves; a problem may not use them.
RESERVED_TOKENS = frozenset({"<eps>", "<unk>", "<s>"})


class Error(UserError):
    """A problem file is malformed; the message names the file and row."""


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
    # The cells written without spaces and split into several tokens (characters, or
    # the longest known tokens): answers in a column of such words are written so too.
    unspaced: frozenset[tuple[int, int]] = frozenset()

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
        cells = ((row[source], row[target]) for row in self.cells)
        return [(s, t) for s, t in cells if s is not None and t is not None]

    def unlearnable_columns(self) -> list[int]:
        """Columns with cells to predict but no training pair leading into them."""
        targets = {t for _, t in self.column_pairs()}
        return sorted({j for _, j in self.queries} - targets)

    def known_words(self, column: int) -> list[Word]:
        return [word for word in (row[column] for row in self.cells) if word is not None]

    def alphabet(self) -> set[Token]:
        return {tok for row in self.cells for cell in row if cell for tok in cell}

    def column_spaced(self, column: int) -> bool:
        """Whether a column's words are written with spaces between tokens: False when
        every word of several tokens in it was written without."""
        long_cells = [i for i, row in enumerate(self.cells) if len(row[column] or ()) > 1]
        return not long_cells or any((i, column) not in self.unspaced for i in long_cells)

    def write_word(self, word: Sequence[Token], column: int) -> str:
        """A word in its column's style: tokens separated by spaces, or run together."""
        return (" " if self.column_spaced(column) else "").join(word)

    def answer_text(self, answers: Mapping[tuple[int, int], Word]) -> str:
        """The problem file's text with every `?` replaced by its answer, all else as read.

        JSON problems keep every other field and cell as they were; TSV problems are
        written back as TSV.
        """
        styles = [self.column_spaced(j) for j in range(len(self.columns))]

        def join(word: Sequence[Token], column: int) -> str:
            return (" " if styles[column] else "").join(word)

        if self.document is None:
            lines = []
            for i, row in enumerate(self.cells):
                words = [answers[(i, j)] if (i, j) in answers else cell or () for j, cell in enumerate(row)]
                lines.append("\t".join(join(w, j) for j, w in enumerate(words)))
            return "\n".join(lines) + "\n"
        doc = json.loads(json.dumps(self.document))  # deep copy of plain JSON data
        for (i, j), word in answers.items():
            doc["data"][i][j] = join(word, j)
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
    features = _parse_features(path, doc.get("features", {}))
    texts: list[list[str | None]] = []  # each known cell's text; None: `?` or empty
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
        out_row: list[str | None] = []
        for j, cell in enumerate(row):
            if not isinstance(cell, str):
                raise Error(
                    f"{path}: {where}, column {j + 1}: cell must be a string, "
                    f"got {type(cell).__name__}"
                )
            if cell.strip() == UNKNOWN:
                queries.append((i, j))
                out_row.append(None)
            else:
                out_row.append(nfc(cell).strip() or None)
        if all(c is None for c in out_row) and any(q[0] == i for q in queries):
            raise Error(f"{path}: {where}: every cell is unknown, nothing to predict from")
        texts.append(out_row)
    cells, unspaced = _split_json_cells(path, texts, features)
    for i, row_ in enumerate(cells):
        for j, word in enumerate(row_):
            if word is not None:
                _check_tokens(path, f"row {i + 1}, column {j + 1}", word)
    return Problem(
        name=path.stem,
        columns=tuple(nfc(c) for c in columns),
        cells=tuple(cells),
        queries=tuple(queries),
        features=features,
        kind=doc.get("type") if isinstance(doc.get("type"), str) else None,
        source=path,
        document=doc,
        unspaced=unspaced,
    )


def _split_json_cells(
    path: Path, texts: Sequence[Sequence[str | None]], features: Mapping[Token, object]
) -> tuple[tuple[tuple[Word | None, ...], ...], frozenset[tuple[int, int]]]:
    """The cells as tokens. A cell with spaces is its space-separated tokens. A cell
    without, of several characters, that is no known token (a token of a spaced cell or
    of the features) is a word written unspaced: it is split into the longest known
    tokens and characters, as a TSV's words are, and a warning says so (read as one
    token, it made one whole-word rule per row and predicted every `?` wrongly)."""
    known = set(features)
    for row in texts:
        for text in row:
            if text is not None and is_spaced(text):
                known.update(text.split())
    splitter = WordSplitter(known)
    split: list[tuple[int, int, str, Word]] = []
    cells = []
    for i, row in enumerate(texts):
        out: list[Word | None] = []
        for j, text in enumerate(row):
            if text is None:
                out.append(None)
            elif is_spaced(text) or text in known or len(split_graphemes(text)) == 1:
                out.append(parse_word(text))
            else:
                word = splitter(text)
                split.append((i, j, text, word))
                out.append(word)
        cells.append(tuple(out))
    if split:
        i, j, text, word = split[0]
        spaced_cells = sum(1 for row in texts for t in row if t is not None and is_spaced(t))
        if spaced_cells:
            more = f" (and {len(split) - 1} more cells)" if len(split) > 1 else ""
            log.warning(
                "%s: row %d, column %d: %r has no spaces between its tokens, unlike other "
                "cells: read as %r%s", path, i + 1, j + 1, text, " ".join(word), more,
            )
        else:
            log.warning(
                "%s: the cells have no spaces between tokens: each word is split into "
                "characters%s, as a TSV's words are (row %d: %r -> %r); separate the "
                "tokens with spaces to choose them", path,
                " and the longest tokens the features name" if features else "",
                i + 1, text, " ".join(word),
            )
    return tuple(cells), frozenset((i, j) for i, j, _, _ in split)


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
    rows: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            what = "no tab" if len(fields) == 1 else f"{len(fields)} fields"
            hint = ""
            if len(fields) == 1 and "," in line:
                hint = (
                    " (it looks comma-separated: fstsynth reads a TSV, the source and the "
                    "target separated by a tab)"
                )
            raise Error(f"{path}: line {lineno}: expected source<TAB>target, found {what}{hint}")
        rows.append((lineno, fields))
    columns: tuple[str, ...] = ("source", "target")
    if len(rows) > 1 and _looks_like_header(rows[0][1], [f for _, f in rows[1:]]):
        lineno, fields = rows.pop(0)
        names = tuple(nfc(f).strip() for f in fields)
        log.warning(
            "%s: line %d (%s) looks like a header, not a word pair: read as the column "
            "names (start it with # to make it a comment)", path, lineno, "<TAB>".join(names),
        )
        if names[0] != names[1]:
            columns = names
    return _directed_problem(path.stem, columns, rows, path)


#: Words that name a column of word forms (compared case-blind). Above unspaced words
#: in the same letters (`singular<TAB>plural` above `kitap<TAB>kitaplar`) nothing in
#: the letters tells a header from a word pair: two such names do.
COLUMN_NAMES = frozenset(
    """source target input output in out from to word words form forms wordform lemma stem root base
    singular plural sg pl dual nominative genitive dative accusative locative ablative instrumental
    vocative nom gen dat acc loc abl ins voc present past future infinitive participle imperative
    perfective imperfective masculine feminine neuter definite indefinite diminutive possessive
    spelling orthography ortho grapheme graphemes phoneme phonemes phones phonemic phonetic
    pronunciation ipa transcription transliteration romanization latin cyrillic greek arabic
    written spoken standard dialect old new modern proto gloss meaning english""".split()
)


def _looks_like_header(first: Sequence[str], rest: Sequence[Sequence[str]]) -> bool:
    """Whether a TSV's first line names its columns: two unspaced words of several
    characters, above lines most of which are written with spaces, or that are both
    usual column names (`COLUMN_NAMES`) neither of which the rest of its column uses,
    or (five lines or more) written in characters none of which another line uses (a
    word pair shares some with the rest)."""
    cells = [nfc(f).strip() for f in first]
    if any(not c or c == UNKNOWN or is_spaced(c) or len(split_graphemes(c)) < 2 for c in cells):
        return False
    if 2 * sum(any(is_spaced(c) for c in fields) for fields in rest) > len(rest):
        return True
    if all(c.casefold() in COLUMN_NAMES for c in cells) and not any(
        nfc(fields[j]).strip() == c for fields in rest for j, c in enumerate(cells)
    ):
        return True
    if len(rest) < 5:
        return False
    seen = {
        g
        for fields in rest
        for c in fields
        if c.strip() != UNKNOWN
        for g in split_graphemes("".join(nfc(c).split()))
    }
    return not seen & {g for c in cells for g in split_graphemes(c)}


def _directed_problem(
    name: str, columns: tuple[str, ...], rows: Iterable[tuple[int, Sequence[str]]], path: Path | None
) -> Problem:
    """A source -> target problem from (line number, [source, target]) rows, read as a
    TSV's: unspaced words split into characters, `?` a target to predict."""
    where = str(path) if path is not None else name
    cells: list[tuple[Word | None, ...]] = []
    unspaced: set[tuple[int, int]] = set()
    queries: list[tuple[int, int]] = []
    for lineno, fields in rows:
        row: list[Word | None] = []
        for j, cell in enumerate(fields):
            if cell.strip() == UNKNOWN:
                queries.append((len(cells), j))
                row.append(None)
                continue
            word = parse_word(cell, split_unspaced=True)
            if not word:
                raise Error(f"{where}: line {lineno}: empty {'source' if j == 0 else 'target'}")
            _check_tokens(Path(where), f"line {lineno}", word)
            row.append(word)
        if row[0] is None:
            raise Error(f"{where}: line {lineno}: the source cannot be unknown")
        for j, (cell, tokens) in enumerate(zip(fields, row)):
            if tokens is not None and len(tokens) > 1 and not is_spaced(cell):
                unspaced.add((len(cells), j))
        cells.append(tuple(row))
    if not cells:
        raise Error(f"{where}: no word pairs found")
    return Problem(
        name=name,
        columns=columns,
        cells=tuple(cells),
        queries=tuple(queries),
        source=path,
        directed=True,
        unspaced=frozenset(unspaced),
    )


PairsLike = Iterable[Sequence[str]]


def problem_from_pairs(pairs: PairsLike, name: str = "pairs") -> Problem:
    """A source -> target problem from (source, target) pairs, each word a string
    (tokens separated by spaces, or unspaced: split into characters) or a sequence of
    tokens; read as a TSV's lines are (a target `?` is to predict). Errors name the pair
    by its number, as `line N`."""
    rows = []
    for n, pair in enumerate(pairs, start=1):
        if isinstance(pair, str) or len(pair) != 2:
            raise Error(f"{name}: pair {n}: expected (source, target), got {pair!r}")
        fields = [cell if isinstance(cell, str) else " ".join(cell) for cell in pair]
        if any("\t" in cell or "\n" in cell for cell in fields):
            raise Error(f"{name}: pair {n}: a word may not contain a tab or a line break")
        rows.append((n, fields))
    return _directed_problem(name, ("source", "target"), rows, None)


def read_pairs(pairs: str | Path | PairsLike, name: str = "pairs") -> Problem:
    """A problem from a path (a TSV or problem file) or from (source, target) pairs."""
    if isinstance(pairs, (str, Path)):
        return load_problem(pairs)
    return problem_from_pairs(pairs, name)


def load_features(path: str | Path) -> dict[Token, dict[str, bool]]:
    """A features file: JSON mapping each token to {feature: true/false}."""
    path = Path(path)
    try:
        raw = json.loads(path.read_bytes().decode("utf-8-sig"))
    except FileNotFoundError:
        raise Error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise Error(f"{path}: is a directory, not a features file") from None
    except UnicodeDecodeError:
        raise Error(f"{path}: not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise Error(f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:  # lists nested thousands deep
        raise Error(f"{path}: not a features file: nested too deeply") from None
    if not isinstance(raw, dict) or not all(
        isinstance(v, dict) and all(isinstance(b, bool) for b in v.values()) for v in raw.values()
    ):
        raise Error(f"{path}: features must map each token to {{feature: true/false}}")
    return {nfc(tok): {nfc(k): b for k, b in feats.items()} for tok, feats in raw.items()}


def _some(tokens: Sequence[str], shown: int = 10) -> str:
    return ", ".join(tokens[:shown]) + (f", ... ({len(tokens)} in all)" if len(tokens) > shown else "")


def _split_as_the_features_name(problem: Problem, features: Features) -> Problem:
    """The problem with its unspaced words split into the longest tokens `features` (or
    its spaced words) name, as a JSON problem's unspaced cells are split when its
    features come with it: a TSV given `--features` naming `tʃ` reads `tʃaj` as `tʃ a j`,
    not `t ʃ a j` (which left `tʃ` without a word and `t`, `ʃ` without features)."""
    if not problem.unspaced or all(len(split_graphemes(tok)) == 1 for tok in features):
        return problem
    known = set(features)
    known.update(
        tok
        for i, row in enumerate(problem.cells)
        for j, word in enumerate(row)
        if word is not None and (i, j) not in problem.unspaced
        for tok in word
    )
    splitter = WordSplitter(known)
    cells = [list(row) for row in problem.cells]
    for i, j in problem.unspaced:
        word = cells[i][j]
        if word is not None:
            cells[i][j] = splitter("".join(word))
    return dataclasses.replace(problem, cells=tuple(tuple(row) for row in cells))


def with_features(problem: Problem, features: Features, where: str) -> Problem:
    """The problem with `features` (read from `where`) added to its own.

    A features table may well name more tokens than the data uses (a whole inventory).
    But when it names tokens the data never uses while tokens of the data get no
    features from it, the two are likely split differently (`tʃ` against `t ʃ`, `aː`
    against `a ː`): a warning lists both. When none of the tokens it names occurs in the
    data it would change nothing: an error."""
    if not features:
        return problem
    problem = _split_as_the_features_name(problem, features)
    alphabet = problem.alphabet()
    data = problem.source or problem.name
    absent = sorted(tok for tok in features if tok not in alphabet)
    if absent and len(absent) == len(features):
        raise Error(
            f"{where}: none of the {len(features)} tokens it names occurs in {data} "
            f"(such as {absent[0]!r}); are the words split into the same tokens?"
        )
    uncovered = sorted(tok for tok in alphabet if tok not in features)
    if absent and uncovered:
        log.warning(
            "%s: names tokens that occur nowhere in %s (%s) while tokens of the data get no "
            "features from it (%s); are the words split into the same tokens?",
            where, data, _some(absent), _some(uncovered),
        )
    elif absent:
        log.info("%s: %d token(s) it names occur nowhere in %s: %s", where, len(absent), data, _some(absent))
    merged = {tok: dict(f) for tok, f in problem.features.items()}
    for tok, f in features.items():
        merged.setdefault(tok, {}).update(f)
    return dataclasses.replace(problem, features=merged)
