"""Models: programs learned for the column pairs of a problem, compiled, saved, loaded.

Public API:
    FORMAT_VERSION, PairModel, Model, FarStages, Error, ModelChangedError
    learn_model(problem, options, pairs=None, jobs=1) -> Model
    Model.save(directory), load_model(directory) -> Model
    Model.pair(source, target), Model.training_pairs(pair_model),
    PairModel.predict(word), PairModel.predict_many(words),
    PairModel.predict_texts(words, sep), PairModel.interpret(word, features),
    PairModel.transducers(), PairModel.transduce(word), restore_unknown
    The Python API (README "Library"): Model/PairModel .rules, .fst, .apply(word),
    .apply_many(words), .evaluate(pairs)

A model directory (format version 3) holds
- `model.json`: format name and version, options, features, columns, token inventory,
  the SHA-256 of every other file, per column pair its program (readable and as JSON),
  its token list and the FAR keys of its transducers in the order they apply, and the
  training rows (optional), which `fstsynth report` shows the rules at work on;
- `tables.npz`: per column pair and pass, the apply tables (`fstsynth.tables`: the
  pass's bimachine as flat integer arrays, named `pair-S-T.pass{k}.{field}`), a numpy
  archive of integer arrays, read without numpy and without pickle
  (`fstsynth.arrays`). This is all `apply` reads besides the JSON;
- `model.far`: per column pair, its transducers, one or two *stages* per pass applied
  in order (`pair-S-T.pass{k}.{j}`; see `fstsynth.compiler`), each mapping strings to
  strings, symbol tables attached. The stages are kept rather than their composition,
  which can be far larger; exports compose them on request. They are read, and their
  checksum checked, only when needed (exports, the reference path
  `PairModel.transduce`);
- `symbols.txt`: the table of word tokens, for tools that compile words with it.
Versions 1 and 2 (no tables; version 1: one composed transducer per pair, version 2:
one per pass) still load: their tables are compiled from the program, which takes well
under a second.

Loading never executes anything from the files: the JSON is parsed as plain data and
checked field by field, the arrays are read as plain integers (no pickle) and checked
for range, and the archive is read by OpenFst only after a child process has read it
without crashing (`fstsynth.far.check_far`). Every file's checksum is checked against
the JSON, from the very bytes then used, so a model rewritten while it is read (`learn`
swapping a new one in) is never seen half old, half new: the load starts again, and
after a few changes in a row stops with "model changed while loading, retry".

Limits (README "Limits"): learning refuses a training word longer than
`MAX_TRAINING_TOKENS` (alignment is quadratic in word length), more than
`MAX_ALPHABET` distinct tokens, and more than `MAX_COLUMN_PAIRS` column pairs in one run;
`Options.time_limit` bounds each column pair, alignment, synthesis and compilation
together.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import time
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from fstsynth import dsl
from fstsynth.arrays import Array, read_npz, write_npz
from fstsynth.arrays import Error as ArraysError
from fstsynth.errors import UserError
from fstsynth.fileio import atomic_directory, stable_directory
from fstsynth.tables import UNK, Outputs, Tables
from fstsynth.tables import Error as TablesError
from fstsynth.types import Features, Token, Word

try:
    # CPython's own SHA-256 (as `random` takes its SHA-512): `hashlib` loads OpenSSL,
    # about 8 ms of every command's start-up, for model files of a few hundred KB.
    from _sha256 import sha256 as _sha256  # Python 3.11
except ImportError:  # pragma: no cover - other versions and implementations
    try:
        from _sha2 import sha256 as _sha256  # Python 3.12 and later
    except ImportError:
        from hashlib import sha256 as _sha256

if TYPE_CHECKING:
    import pynini

    from fstsynth.compiler import Transducers
    from fstsynth.problem import Problem
    from fstsynth.synthesis import Options

FORMAT_NAME = "fstsynth-model"
FORMAT_VERSION = 3
MODEL_JSON = "model.json"
MODEL_FAR = "model.far"
MODEL_TABLES = "tables.npz"
SYMBOLS_TXT = "symbols.txt"
#: A model rewritten while it is being read is read again, this many times at most.
LOAD_ATTEMPTS = 4


#: Longest training word, in tokens: lingpy's alignment is quadratic in word length
#: (measured: 300 tokens 0.2 s, 1,000 tokens 2.4 s per pair).
MAX_TRAINING_TOKENS = 1000
#: Most distinct tokens in a problem (the apply tables and the transducers grow with
#: it; `Options.time_limit` bounds the time).
MAX_ALPHABET = 1000
#: Most column pairs learned in one run (a table of n columns has n(n-1) of them).
MAX_COLUMN_PAIRS = 1000


log = logging.getLogger(__name__)


class Error(UserError):
    """A model file is missing, damaged, or of an unsupported version; or a bad pair."""


class ModelChangedError(Error):
    """The model directory was replaced while it was being read, again and again."""


class _Changed(Exception):
    """Internal: a file no longer matches the JSON because the model was replaced."""


def far_key(source: int, target: int) -> str:
    return f"pair-{source}-{target}"


@dataclass(frozen=True)
class FarStages:
    """Where a loaded pair's transducers are: FAR `keys`, in order, of the archive at
    `path` with checksum `sha256`, as recorded in the model JSON at `json_path` (whose
    bytes had checksum `json_sha256`). `tokens`: the word tokens among their symbols."""

    path: Path
    sha256: str
    keys: tuple[str, ...]
    tokens: tuple[Token, ...]
    json_path: Path
    json_sha256: str

    def load(self) -> "Transducers":
        from fstsynth.compiler import Transducers
        from fstsynth.far import ChecksumError, Error as FarError

        try:
            fsts = _read_far(self.path, self.sha256)
        except ChecksumError:
            if _sha256_of(self.json_path) != self.json_sha256:
                raise ModelChangedError(
                    f"{self.path.parent}: the model changed while loading, retry"
                ) from None
            raise Error(f"{self.path}: damaged (checksum does not match model.json)") from None
        except FarError as exc:
            raise Error(str(exc)) from None
        stages = []
        for key in self.keys:
            fst = fsts.get(key)
            if fst is None:
                raise Error(f"{self.path}: no transducer {key!r}")
            symbols = fst.input_symbols()
            if symbols is None or symbols.find(UNK) == -1:
                raise Error(f"{self.path}: transducer {key!r} has no fstsynth symbol table")
            stages.append(fst)
        return Transducers(
            tuple(stages), tuple(_pass_of(key) for key in self.keys), stages[0].input_symbols().copy(), self.tokens
        )


def _pass_of(key: str) -> int:
    """The pass a FAR key belongs to: `pair-S-T.pass{k}.{j}` (version 3),
    `pair-S-T.pass{k}` (version 2), `pair-S-T` (version 1, all passes composed)."""
    parts = key.split(".")
    if len(parts) >= 2 and parts[1].startswith("pass") and parts[1][4:].isdigit():
        return int(parts[1][4:])
    return 1


@functools.lru_cache(maxsize=4)
def _read_far(path: Path, sha256: str) -> dict:
    from fstsynth.far import read_far

    return read_far(path, sha256=sha256)


def _digest(data: bytes) -> str:
    """The SHA-256 of `data`, in hex."""
    return _sha256(data).hexdigest()


def _sha256_of(path: Path) -> str | None:
    try:
        return _digest(path.read_bytes())
    except OSError:
        return None


@dataclass(frozen=True, eq=False)
class PairModel:
    """The model of one column pair: its program, the apply tables compiled from it,
    and its transducers (built with it, or where to read them: `FarStages`)."""

    source: int
    target: int
    program: dsl.Program
    cost: float
    train_correct: int
    train_total: int
    tables: Tables
    stages: "Transducers | FarStages"
    seconds: dict[str, float] = field(default_factory=dict)
    # Cross-validated share of training rows predicted right (None: not measured); the
    # variant that learned the program (`auto` picks one per pair).
    held_out: float | None = None
    variant: str = ""
    # The model's token inventory and features (shared by its pairs), which reading a
    # typed word and running the interpreter need.
    alphabet: tuple[Token, ...] = ()
    features: Features = field(default_factory=dict)
    # The training rows the program was synthesized from, when a sample of them
    # (`synthesis.learner.fit`; not saved); None: all.
    sampled: int | None = None

    @property
    def far_key(self) -> str:
        return far_key(self.source, self.target)

    def transducers(self) -> "Transducers":
        """The pair's transducers (read from the model's FAR the first time)."""
        if isinstance(self.stages, FarStages):
            return self.stages.load()
        return self.stages

    def map_unknown(self, word: Sequence[Token]) -> Word:
        """The word as the model reads it: unseen tokens become `UNK`."""
        index = self.tables.index
        return tuple(t if t in index else UNK for t in word)

    def predict(self, word: Sequence[Token]) -> Word:
        """The program's output through the apply tables; unseen tokens are handled as
        in `restore_unknown`."""
        try:
            output = self.tables.apply(word)
        except TablesError as exc:
            raise Error(f"{self.far_key}: {exc} (for {' '.join(word)!r}): the model is damaged") from None
        return restore_unknown(word, self.map_unknown(word), output)

    def predict_many(self, words: Sequence[Sequence[Token]]) -> list[Word]:
        """`predict` for many words at once (batched through numpy)."""
        outputs = self._outputs(words)
        predictions = outputs.words()
        for k in outputs.with_unk:
            predictions[k] = restore_unknown(words[k], self.map_unknown(words[k]), predictions[k])
        return predictions

    def predict_texts(self, words: Sequence[Sequence[Token]], sep: str = " ") -> list[str]:
        """`predict_many`'s outputs as strings, their tokens joined by `sep` (made
        without a tuple per word: what `fstsynth apply` prints)."""
        outputs = self._outputs(words)
        texts = outputs.texts(sep)
        for k in outputs.with_unk:
            start, end = outputs.bounds[k], outputs.bounds[k + 1]
            output = tuple(outputs.tokens[start:end])
            texts[k] = sep.join(restore_unknown(words[k], self.map_unknown(words[k]), output))
        return texts

    def _outputs(self, words: Sequence[Sequence[Token]]) -> Outputs:
        try:
            return self.tables.outputs(words)
        except TablesError as exc:
            raise Error(f"{self.far_key}: {exc}: the model is damaged") from None

    def transduce(self, word: Sequence[Token]) -> Word:
        """The output of the transducers (the reference path; slow: each word is
        composed with each stage). A transducer loaded from someone else's model may not
        be total, or may write labels outside its symbol table: a damaged model."""
        from fstsynth.compiler import Error as CompilerError

        trans = self.transducers()
        mapped = trans.map_unknown(word)
        try:
            output = trans.apply(word)
        except (CompilerError, KeyError):
            raise Error(
                f"transducer {self.far_key!r} gives no valid output for {' '.join(word)!r}: the model is damaged"
            ) from None
        return restore_unknown(word, mapped, output)

    def interpret(self, word: Sequence[Token], features: Mapping) -> Word:
        from fstsynth.interpreter import run  # not imported by `apply`: start-up time

        mapped = self.map_unknown(word)
        return restore_unknown(word, mapped, run(self.program, mapped, features))

    # -- the Python API (README "Library"): words as typed in, words as typed out

    @property
    def rules(self) -> dsl.Program:
        """The learned program (prints as its rules, pass by pass)."""
        return self.program

    @property
    def fst(self) -> "pynini.Fst":
        """The pair's transducer: its passes composed into one."""
        return self.transducers().composed()

    def apply(self, word: str | Sequence[Token]) -> str | Word:
        """The prediction for one word: a string gives a string (tokens separated by
        spaces, or run together if the word was typed so), tokens give tokens."""
        return self.apply_many([word])[0]

    def apply_many(self, words: Iterable[str | Sequence[Token]]) -> list:
        """`apply` for many words at once (through the apply tables, batched)."""
        from fstsynth.problem import is_spaced, splitter_for

        split = splitter_for(self.alphabet)
        words = list(words)
        tokens = [split(w) if isinstance(w, str) else tuple(w) for w in words]
        out: list[str | Word] = []
        for word, prediction in zip(words, self.predict_many(tokens)):
            if isinstance(word, str):
                out.append((" " if is_spaced(word) else "").join(prediction))
            else:
                out.append(prediction)
        return out

    def evaluate(self, pairs: Any, *, errors: int | None = None) -> dict[str, Any]:
        """Scores on gold (source, target) pairs (or a TSV/problem file): the figures of
        `fstsynth evaluate` (`evaluation.Evaluation.to_json`)."""
        from fstsynth.evaluation import evaluate_pairs

        return evaluate_pairs(self, pairs, max_errors=errors).to_json()


def restore_unknown(word: Sequence[Token], mapped: Sequence[Token], output: Word) -> Word:
    """Put unseen tokens back where the model kept or copied them.

    Both backends read an unseen token as `<unk>`. If the word has one kind of unseen
    token, every `<unk>` in the output is that token; with several kinds, they are put
    back in order when the output has as many `<unk>` as the input, else left as `<unk>`.
    """
    unknown = [orig for orig, m in zip(word, mapped) if m == UNK and orig != UNK]
    if not unknown or UNK not in output:
        return output
    kinds = set(unknown)
    if len(kinds) == 1:
        (only,) = kinds
        return tuple(only if t == UNK else t for t in output)
    if output.count(UNK) == len(unknown):
        it = iter(unknown)
        return tuple(next(it) if t == UNK else t for t in output)
    return output


@dataclass(frozen=True, eq=False)
class Model:
    """A learned model: per column pair (source, target) a `PairModel`. `options` are
    the learning options as saved (plain data: loading a model needs no learner)."""

    columns: tuple[str, ...]
    features: dict[str, dict[str, bool]]
    options: dict[str, Any]
    alphabet: tuple[Token, ...]
    pairs: dict[tuple[int, int], PairModel]
    name: str = ""
    # The rows learned from (cells None where unknown), for `report` and `training_pairs`;
    # empty for a model saved without them.
    rows: tuple[tuple[Word | None, ...], ...] = ()

    def training_pairs(self, pm: PairModel) -> list[tuple[Word, Word]]:
        """The (source, target) words a column pair was learned from (none if not kept)."""
        pairs = [(row[pm.source], row[pm.target]) for row in self.rows]
        return [(s, t) for s, t in pairs if s is not None and t is not None]

    def pair(self, source: int | str | None = None, target: int | str | None = None) -> PairModel:
        """The pair model for columns given by index or name (defaults: the only pair)."""
        s = None if source is None else self._column(source)
        t = None if target is None else self._column(target)
        matches = [
            pm
            for (ps, pt), pm in sorted(self.pairs.items())
            if (s is None or ps == s) and (t is None or pt == t)
        ]
        if not matches:
            raise Error(
                f"no learned column pair matches source={source!r} target={target!r}; "
                f"pairs: {', '.join(self.pair_names())}"
            )
        if len(matches) > 1:
            raise Error(
                f"the model has {len(matches)} column pairs; choose one with --source/--target "
                f"({', '.join(self.pair_names())})"
            )
        return matches[0]

    # -- the Python API for a model of one column pair (`pair` picks one of several)

    def _only(self) -> PairModel:
        if len(self.pairs) != 1:
            raise Error(
                f"the model has {len(self.pairs)} column pairs ({', '.join(self.pair_names())}): "
                "pick one with model.pair(source, target)"
            )
        return next(iter(self.pairs.values()))

    @property
    def rules(self) -> dsl.Program:
        """The program of the model's column pair."""
        return self._only().rules

    @property
    def fst(self) -> "pynini.Fst":
        """The transducer of the model's column pair, its passes composed."""
        return self._only().fst

    def apply(self, word: str | Sequence[Token]) -> str | Word:
        """`PairModel.apply` with the model's column pair."""
        return self._only().apply(word)

    def apply_many(self, words: Iterable[str | Sequence[Token]]) -> list:
        """`PairModel.apply_many` with the model's column pair."""
        return self._only().apply_many(words)

    def evaluate(self, pairs: Any, *, errors: int | None = None) -> dict[str, Any]:
        """`PairModel.evaluate` with the model's column pair."""
        return self._only().evaluate(pairs, errors=errors)

    def pair_names(self) -> list[str]:
        return [f"{self.columns[s]} -> {self.columns[t]}" for s, t in sorted(self.pairs)]

    def _column(self, column: int | str) -> int:
        if isinstance(column, int) or (isinstance(column, str) and column.isdigit()):
            index = int(column)
            if 0 <= index < len(self.columns):
                return index
            raise Error(f"column {index} out of range (0..{len(self.columns) - 1})")
        if column in self.columns:
            return self.columns.index(column)
        raise Error(f"no column named {column!r}; columns: {', '.join(self.columns)}")

    # -- saving

    def to_json(self, files: Mapping[str, str], stage_keys: Mapping[tuple[int, int], list[str]]) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "name": self.name,
            "options": dict(self.options),
            "columns": list(self.columns),
            "alphabet": list(self.alphabet),
            "features": self.features,
            "files": dict(files),
            "pairs": [
                {
                    "source": pm.source,
                    "target": pm.target,
                    "stages": stage_keys[key],
                    "tables": f"{far_key(*key)}.",
                    "passes": len(pm.tables.passes),
                    "tokens": list(pm.tables.tokens),
                    "rules": [[str(r) for r in p.rules] for p in pm.program.passes],
                    "program": dsl.to_json(pm.program),
                    "cost": pm.cost,
                    "train_correct": pm.train_correct,
                    "train_total": pm.train_total,
                    "held_out": pm.held_out,
                    "variant": pm.variant,
                }
                for key, pm in sorted(self.pairs.items())
            ],
            "rows": [[None if cell is None else " ".join(cell) for cell in row] for row in self.rows],
        }

    def save(self, directory: str | Path) -> None:
        """Write the model directory atomically (an existing one is replaced only at the end)."""
        from fstsynth.far import write_far

        with atomic_directory(directory) as tmp:
            fsts: dict[str, Any] = {}
            arrays: dict[str, Array] = {}
            stage_keys: dict[tuple[int, int], list[str]] = {}
            first = None
            for key, pm in sorted(self.pairs.items()):
                trans = pm.transducers()
                first = first or trans
                stage_keys[key] = trans.stage_keys(far_key(*key))
                fsts.update(zip(stage_keys[key], trans.stages))
                arrays.update(pm.tables.arrays(f"{far_key(*key)}."))
            write_far(tmp / MODEL_FAR, fsts)
            with open(tmp / MODEL_TABLES, "wb") as handle:
                write_npz(handle, arrays)
            if first is not None:
                # Every pair is compiled over the problem's alphabet: one token table.
                first.token_symbols().write_text(str(tmp / SYMBOLS_TXT))
            files = {
                name: _digest((tmp / name).read_bytes())
                for name in (MODEL_FAR, MODEL_TABLES, SYMBOLS_TXT)
                if (tmp / name).exists()
            }
            (tmp / MODEL_JSON).write_text(
                json.dumps(self.to_json(files, stage_keys), ensure_ascii=False, indent=1) + "\n",
                encoding="utf-8",
            )


def saved_options(options: "Options") -> dict[str, Any]:
    """Learning options as a model keeps them (no time limit: a property of the run)."""
    return {k: v for k, v in dataclasses.asdict(options).items() if k != "time_limit"}


def check_limits(problem: "Problem", pairs: Sequence[tuple[int, int]]) -> None:
    """Refuse, before any work, a problem beyond the documented limits."""
    if len(pairs) > MAX_COLUMN_PAIRS:
        raise Error(
            f"{problem.name}: {len(pairs)} column pairs to learn ({len(problem.columns)} columns); "
            f"fstsynth learns at most {MAX_COLUMN_PAIRS} in one run: split the table"
        )
    alphabet = problem.alphabet()
    if len(alphabet) > MAX_ALPHABET:
        raise Error(
            f"{problem.name}: {len(alphabet)} distinct tokens; fstsynth handles at most "
            f"{MAX_ALPHABET} (are the words split into tokens with spaces?)"
        )
    columns = {c for pair in pairs for c in pair}
    for i, row in enumerate(problem.cells):
        for j in sorted(columns):
            cell = row[j]
            if cell is not None and len(cell) > MAX_TRAINING_TOKENS:
                where = f"line {i + 1}" if problem.directed else f"row {i + 1}, column {j + 1}"
                raise Error(
                    f"{problem.source or problem.name}: {where}: a word of {len(cell)} tokens; "
                    f"training words may have at most {MAX_TRAINING_TOKENS}"
                )


def learn_model(
    problem: "Problem",
    options: "Options | None" = None,
    pairs: Iterable[tuple[int, int]] | None = None,
    jobs: int = 1,
) -> Model:
    """Learn and compile a program for every column pair with training rows.

    `options.time_limit` (seconds) bounds each column pair: alignment, synthesis and
    compilation together. A pair that runs out of time raises `Error` naming it.
    `jobs` > 1 runs each pair's cross-validation folds in that many worker processes
    (`synthesis.learn`): the same model, sooner. Progress is reported as stage
    "column pair" (k of n, the pair's name as detail; `fstsynth.progress`). (The learner
    and the compiler are imported here, not with the module: loading and applying a
    model needs neither.)
    """
    from fstsynth.alignment import with_vowel_classes
    from fstsynth.compiler import compile_program
    from fstsynth.features import with_ipa_features
    from fstsynth.progress import report
    from fstsynth.synthesis import LearnResult, Options, learn

    options = options if options is not None else Options()
    todo = list(pairs) if pairs is not None else problem.column_pairs()
    if not todo:
        raise Error(f"{problem.name}: no column pair has a row with both cells known")
    check_limits(problem, todo)
    for j in problem.unlearnable_columns():
        log.warning(
            "%s: column %r has no row with another known cell: its '?' cells cannot be "
            "learned", problem.source or problem.name, problem.columns[j],
        )
    alphabet = tuple(sorted(problem.alphabet()))
    # Learning, the transducers and the interpreter all read these features: the
    # problem's, vowel/consonant classes where it gives none, and features derived from
    # IPA for the tokens it says nothing of (used where cross-validation says they help).
    features = with_ipa_features(
        with_vowel_classes(problem.features, alphabet), [tok for tok in alphabet if not problem.features.get(tok)]
    )
    learned: dict[tuple[int, int], PairModel] = {}
    for k, (s, t) in enumerate(todo):
        label = f"{problem.columns[s]} -> {problem.columns[t]}"
        report("column pair", k, len(todo), label)
        # One deadline for the column pair: learning (every fold and variant of `auto`)
        # and compilation share it.
        deadline = None if options.time_limit is None else time.monotonic() + options.time_limit
        try:
            result: LearnResult = learn(problem.training_pairs(s, t), features, options, jobs, deadline)
            started = time.perf_counter()
            compiled = compile_program(result.program, alphabet, features, deadline=deadline)
        except UserError as exc:
            raise Error(f"{problem.name}: column pair {label}: {exc}") from None
        seconds = dict(result.seconds, compilation=time.perf_counter() - started)
        learned[(s, t)] = PairModel(
            s, t, result.program, result.cost, result.train_correct, result.train_total,
            compiled.tables(), compiled.transducers, seconds, result.held_out, result.variant,
            alphabet=alphabet, features=features, sampled=result.sampled,
        )
    report("column pair", len(todo), len(todo), "done")
    return Model(
        problem.columns, features, saved_options(options), alphabet, learned, problem.name, rows=problem.cells
    )


# ------------------------------------------------------------------ loading


def _need(cond: bool, json_path: Path, what: str) -> None:
    if not cond:
        raise Error(f"{json_path}: damaged model JSON: {what}")


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_file_name(name: Any) -> bool:
    """A plain file name inside the model directory (no paths elsewhere)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name


def load_model(directory: str | Path) -> Model:
    """Read a model directory written by `Model.save`; refuse anything damaged.

    The JSON is read as plain data and every field is type-checked; every other file is
    used only if its SHA-256 matches the JSON (the arrays are read without pickle and
    range-checked; the FAR, when needed, first by a child process: see
    `fstsynth.far.read_far`). Nothing in the files is ever executed. The files are
    read through `fileio.stable_directory`, so a `learn` replacing the model meanwhile
    cannot make this read one version's JSON and the other's tables; the FAR, read
    later if at all, is read from `directory` and checked against the JSON's checksum
    (a model replaced by then: `ModelChangedError`). Where the directory cannot be held
    so, a model replaced while it is read is read again (`LOAD_ATTEMPTS` times at most).
    """
    directory = Path(directory)
    if not directory.is_dir():
        if directory.exists():
            raise Error(f"{directory}: not a model directory (it is a file)")
        raise Error(f"{directory}: no such model directory")
    with stable_directory(directory) as stable:
        try:
            return _load_model(stable, directory)
        except UserError as exc:  # name the user's path, not /proc/PID/fd/N
            raise type(exc)(str(exc).replace(str(stable), str(directory))) from None


def _load_model(stable: Path, directory: Path) -> Model:
    """`load_model`, reading the files through `stable` (see `stable_directory`)."""
    for _ in range(LOAD_ATTEMPTS):
        try:
            return _load(stable, directory)
        except _Changed:
            continue
    raise ModelChangedError(f"{directory}: the model changed while loading, retry")


def _load(stable: Path, directory: Path) -> Model:
    json_path = stable / MODEL_JSON
    try:
        data = json_path.read_bytes()
    except FileNotFoundError:
        raise Error(f"{json_path}: missing; is {directory} a model made by fstsynth learn?") from None
    except OSError as exc:
        raise Error(f"{json_path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Error(f"{json_path}: damaged model JSON: not valid UTF-8") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Error(
            f"{json_path}: line {exc.lineno}: damaged model JSON: {exc.msg}"
            # A string cut off by the end of the file is reported at its start.
            + (
                " (the file is truncated)"
                if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
                else ""
            )
        ) from None
    except RecursionError:
        raise Error(f"{json_path}: damaged model JSON: nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise Error(f"{json_path}: not an fstsynth model (no \"format\": \"{FORMAT_NAME}\")")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise Error(f"{json_path}: damaged model JSON: bad format version {version!r}")
    if version > FORMAT_VERSION:
        raise Error(
            f"{json_path}: model format version {version} is newer than this fstsynth "
            f"supports ({FORMAT_VERSION}); upgrade fstsynth"
        )
    reader = _Reader(stable, json_path, _digest(data), directory)
    try:
        return _model_from_json(reader, doc, version)
    except (Error, _Changed):
        raise
    except RecursionError:
        raise Error(f"{json_path}: damaged model JSON: nested too deeply") from None
    except (KeyError, TypeError, ValueError, AttributeError, UserError) as exc:
        raise Error(f"{json_path}: damaged model JSON ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class _Reader:
    """Reads a model directory's files against the checksums of one JSON document
    (whose own bytes had checksum `json_sha256`)."""

    directory: Path
    json_path: Path
    json_sha256: str
    # The directory as the user named it: what files read later (the FAR) are read from.
    named: Path

    def read(self, name: str, sha256: str, what: str) -> bytes:
        """The file's bytes; Error if missing or damaged, _Changed if the model was
        replaced since the JSON was read."""
        path = self.directory / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self.unchanged()
            raise Error(f"{path}: missing {what}") from None
        except OSError as exc:
            raise Error(f"{path}: cannot read: {exc.strerror or exc}") from None
        if _digest(data) != sha256:
            self.unchanged()
            raise Error(f"{path}: damaged (checksum does not match model.json)")
        return data

    def unchanged(self) -> None:
        """Raise _Changed if the JSON is no longer the one read."""
        if _sha256_of(self.json_path) != self.json_sha256:
            raise _Changed


def _model_from_json(reader: _Reader, doc: dict[str, Any], version: int) -> Model:
    json_path = reader.json_path
    columns: Any = doc.get("columns")
    _need(_is_str_list(columns) and len(columns) >= 2, json_path, "'columns' must list column names")
    alphabet: Any = doc.get("alphabet")
    _need(_is_str_list(alphabet), json_path, "'alphabet' must be a list of tokens")
    raw_features: Any = doc.get("features")
    _need(
        isinstance(raw_features, dict)
        and all(
            isinstance(f, dict) and all(isinstance(v, bool) for v in f.values())
            for f in raw_features.values()
        ),
        json_path,
        "'features' must map tokens to {feature: true/false}",
    )
    features = {tok: dict(f) for tok, f in raw_features.items()}
    entries: Any = doc.get("pairs")
    _need(isinstance(entries, list), json_path, "'pairs' must be a list")
    opts: Any = doc.get("options")
    _need(
        isinstance(opts, dict) and all(v is None or isinstance(v, (str, int, float, bool)) for v in opts.values()),
        json_path, "'options' must be an object of plain values",
    )
    if version >= 3:
        files: Any = doc.get("files")
        _need(
            isinstance(files, dict) and all(_is_file_name(k) and isinstance(v, str) for k, v in files.items()),
            json_path, "'files' must map file names in the model directory to checksums",
        )
        _need(
            MODEL_FAR in files and MODEL_TABLES in files, json_path, f"'files' must list {MODEL_FAR} and {MODEL_TABLES}"
        )
        far_name, far_sha = MODEL_FAR, files[MODEL_FAR]
    else:
        far: Any = doc.get("far")
        _need(isinstance(far, dict), json_path, "'far' must be an object")
        far_name, far_sha = far.get("file"), far.get("sha256")
        _need(
            _is_file_name(far_name), json_path,
            f"'far.file' must be a file name in the model directory, not {far_name!r}",
        )
        _need(isinstance(far_sha, str), json_path, "'far.sha256' must be a string")
    # The archive is read, and its checksum checked, only when its transducers are
    # needed (`FarStages.load`): `apply` reads the JSON and the tables alone.
    if not (reader.directory / far_name).is_file():
        reader.unchanged()
        raise Error(f"{reader.directory / far_name}: missing model transducers")
    arrays = None
    if version >= 3:
        arrays = _arrays(reader, files[MODEL_TABLES])
    pairs: dict[tuple[int, int], PairModel] = {}
    for n, entry in enumerate(entries, start=1):
        _need(isinstance(entry, dict), json_path, f"pair {n} must be an object")
        s, t = entry["source"], entry["target"]
        _need(
            all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < len(columns) for c in (s, t)),
            json_path,
            f"pair {n}: source and target must be column indices",
        )
        program = dsl.from_json(entry["program"])
        if version >= 3:
            keys, tables = _v3_pair(json_path, reader.directory / MODEL_TABLES, entry, n, arrays, program)
        else:
            from fstsynth.bimachine import program_tables

            # Version 1 kept one composed FST per pair; it is read as a one-stage chain.
            keys = entry["far_keys"] if version >= 2 else [entry["far_key"]]
            _need(_is_str_list(keys) and len(keys) >= 1, json_path, f"pair {n}: 'far_keys' must list FAR keys")
            tables = program_tables(program, alphabet, features)
        stages = FarStages(
            reader.named / far_name, far_sha, tuple(keys), tables.tokens, reader.named / MODEL_JSON,
            reader.json_sha256,
        )
        pairs[(s, t)] = PairModel(
            s, t, program, float(entry["cost"]),
            int(entry["train_correct"]), int(entry["train_total"]),
            tables, stages,
            held_out=None if entry.get("held_out") is None else float(entry["held_out"]),
            variant=str(entry.get("variant", "")),
            alphabet=tuple(alphabet),
            features=features,
        )
    name_ = doc.get("name", "")
    rows: Any = doc.get("rows", [])  # absent in models saved before it was kept
    # (Checked a type at a time over all cells: a model keeps its thousands of training
    # rows, and `apply` loads them too.)
    _need(
        isinstance(rows, list)
        and all(isinstance(row, list) and len(row) == len(columns) for row in rows)
        and set(map(type, chain.from_iterable(rows))) <= {str, type(None)},
        json_path,
        "'rows' must list rows of one word (or null) per column",
    )
    return Model(
        tuple(columns), features, dict(opts), tuple(alphabet), pairs, name_ if isinstance(name_, str) else "",
        rows=tuple(tuple(map(_cell_tokens, row)) for row in rows),
    )


def _cell_tokens(cell: str | None) -> Word | None:
    return None if cell is None else tuple(cell.split())


def _arrays(reader: _Reader, sha256: str) -> Mapping[str, Array]:
    """Every array of the tables file (integers only, read without numpy), or Error
    naming the file."""
    path = reader.directory / MODEL_TABLES
    data = reader.read(MODEL_TABLES, sha256, "apply tables")
    try:
        return read_npz(data)
    except ArraysError as exc:
        raise Error(f"{path}: damaged apply tables: {exc}") from None


def _v3_pair(
    json_path: Path, tables_path: Path, entry: dict[str, Any], n: int,
    arrays: Mapping[str, Array] | None, program: dsl.Program,
) -> tuple[list[str], Tables]:
    keys = entry["stages"]
    _need(_is_str_list(keys) and len(keys) >= 1, json_path, f"pair {n}: 'stages' must list FAR keys")
    tokens = entry["tokens"]
    _need(_is_str_list(tokens) and UNK in tokens, json_path, f"pair {n}: 'tokens' must list the pair's tokens")
    prefix, count = entry["tables"], entry["passes"]
    _need(isinstance(prefix, str), json_path, f"pair {n}: 'tables' must be the prefix of its arrays")
    _need(
        isinstance(count, int) and not isinstance(count, bool) and count == len(program.passes),
        json_path, f"pair {n}: 'passes' must be the number of passes of its program",
    )
    assert arrays is not None
    try:
        tables = Tables.from_arrays(tokens, arrays, count, prefix)
    except TablesError as exc:
        raise Error(f"{tables_path}: {exc}") from None
    return keys, tables
