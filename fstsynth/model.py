"""Models: programs learned for the column pairs of a problem, compiled, saved, loaded.

Public API:
    FORMAT_VERSION, PairModel, Model, Error
    learn_model(problem, options, pairs=None, jobs=1) -> Model
    Model.save(directory), load_model(directory) -> Model
    Model.pair(source, target), Model.predict(pair, word), Model.check(pair, words)

A model directory holds `model.json` (format name and version, options, features,
columns, token inventory, per column pair its program in readable and JSON form, and
the training rows, optional, which `fstsynth report` shows the rules at work on)
and `model.far`: per column pair, one FST per pass of its program under the keys
`pair-S-T.pass1`, `pair-S-T.pass2`, ... (applied in that order; each maps strings to
strings), with its symbol table attached (tokens, and the tagged tokens a pair's passes
hand on to one another). `symbols.txt` is the table of word tokens, shared by every
pair, for tools that compile words with it. The
passes are kept rather than their composition because the composition of passes with
right contexts can be far larger than the passes together (one benchmark program:
4,231 states in its passes, 1.0M arcs composed); `exporters` composes them for tools
that want one transducer. Version 1 models (one composed FST under `pair-S-T`) still
load. The FAR's
SHA-256 is recorded in the JSON, so a damaged archive is refused before OpenFst reads
it. Loading never executes anything from the files: the JSON is parsed as plain data and
checked field by field, and the archive is read by OpenFst only after a child process
has read it without crashing (`exporters.far.check_far`), so even a doctored archive
whose checksum was updated to match cannot take this process down.

Limits (README "Limits"): learning refuses a training word longer than
`MAX_TRAINING_TOKENS` (alignment is quadratic in word length), more than
`MAX_ALPHABET` distinct tokens, and more than `MAX_COLUMN_PAIRS` column pairs in one run;
`Options.time_limit` bounds each column pair, alignment, synthesis and compilation
together.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from exporters.far import Error as FarError
from exporters.far import read_far, write_far
from fstsynth import dsl
from fstsynth.alignment import with_vowel_classes
from fstsynth.compiler import UNK, Compiled, compile_program, program_tokens
from fstsynth.compiler import Error as CompilerError
from fstsynth.errors import UserError
from fstsynth.fileio import atomic_directory, stable_directory
from fstsynth.interpreter import run
from fstsynth.problem import Problem
from fstsynth.features import with_ipa_features
from fstsynth.synthesis import LearnResult, Options, learn
from fstsynth.progress import report
from fstsynth.types import Features, Token, Word

if TYPE_CHECKING:
    import pynini

FORMAT_NAME = "fstsynth-model"
FORMAT_VERSION = 2
MODEL_JSON = "model.json"
MODEL_FAR = "model.far"
SYMBOLS_TXT = "symbols.txt"


#: Longest training word, in tokens: lingpy's alignment is quadratic in word length
#: (measured: 300 tokens 0.2 s, 1,000 tokens 2.4 s per pair).
MAX_TRAINING_TOKENS = 1000
#: Most distinct tokens in a problem. It does not bound compile time: one copy rule
#: compiles in time growing faster than the cube of the alphabet (measured: 100 tokens
#: 11 s, 150 tokens 40 s, 200 tokens 130 s; its rewrites, one per copied token, each
#: read the marks of those before), which `Options.time_limit` bounds.
MAX_ALPHABET = 1000
#: Most column pairs learned in one run (a table of n columns has n(n-1) of them).
MAX_COLUMN_PAIRS = 1000


log = logging.getLogger(__name__)


class Error(UserError):
    """A model file is missing, damaged, or of an unsupported version; or a bad pair."""


def far_key(source: int, target: int) -> str:
    return f"pair-{source}-{target}"


def pass_keys(source: int, target: int, count: int) -> list[str]:
    """The FAR keys of a column pair's pass transducers, in the order they apply."""
    return [f"{far_key(source, target)}.pass{k}" for k in range(1, count + 1)]


@dataclass
class PairModel:
    source: int
    target: int
    program: dsl.Program
    cost: float
    train_correct: int
    train_total: int
    compiled: Compiled
    seconds: dict[str, float] = field(default_factory=dict)
    # Cross-validated share of training rows predicted right (None: not measured); the
    # variant that learned the program (`auto` picks one per pair).
    held_out: float | None = None
    variant: str = ""
    far_key: str = ""
    # The model's token inventory and features (shared by its pairs), which reading a
    # typed word and running the interpreter need.
    alphabet: tuple[Token, ...] = ()
    features: Features = field(default_factory=dict)

    def predict(self, word: Sequence[Token]) -> Word:
        """The transducer's output; unseen tokens are handled as in `restore_unknown`.

        A transducer loaded from someone else's model may not be total, or may output
        labels outside its symbol table; that is reported as a damaged model.
        """
        mapped = self.compiled.map_unknown(word)
        try:
            output = self.compiled.apply(word)
        except (CompilerError, KeyError):
            raise Error(
                f"transducer {self.far_key or far_key(self.source, self.target)!r} gives no "
                f"valid output for {' '.join(word)!r}: the model is damaged"
            ) from None
        return restore_unknown(word, mapped, output)

    def predict_many(self, words: Sequence[Sequence[Token]]) -> list[Word]:
        """`predict` for many words at once, through the transducer's deterministic tables
        when it has them (see `Model.with_tables`), else through the pass transducers."""
        outputs = self.compiled.apply_many(words)
        # restore_unknown changes nothing when the output has no UNK: skip it then.
        return [
            restore_unknown(w, self.compiled.map_unknown(w), o) if UNK in o else o
            for w, o in zip(words, outputs)
        ]

    def interpret(self, word: Sequence[Token], features: Mapping) -> Word:
        mapped = self.compiled.map_unknown(word)
        return restore_unknown(word, mapped, run(self.program, mapped, features))

    # -- the Python API (README "Library"): words as typed in, words as typed out

    @property
    def rules(self) -> dsl.Program:
        """The learned program (prints as its rules, pass by pass)."""
        return self.program

    @property
    def fst(self) -> "pynini.Fst":
        """The pair's transducer: its passes composed into one."""
        return self.compiled.fst

    def apply(self, word: str | Sequence[Token]) -> str | Word:
        """The prediction for one word: a string gives a string (tokens separated by
        spaces, or run together if the word was typed so), tokens give tokens."""
        return self.apply_many([word])[0]

    def apply_many(self, words: Iterable[str | Sequence[Token]]) -> list:
        """`apply` for many words at once (through the transducer's tables when it has them)."""
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


@dataclass
class Model:
    columns: tuple[str, ...]
    features: dict[str, dict[str, bool]]
    options: Options
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

    def with_tables(self, pm: PairModel) -> PairModel:
        """Give a loaded pair model its per-pass tables for fast `predict_many`.

        The tables are built from the compiler's view of each pass (symbol classes and
        chunked outputs), which the FAR does not keep, so the program is compiled again
        (same program, same alphabet: the same symbols; this is checked). Costs start-up
        time once; a freshly learned model needs nothing, and one too large for tables
        (`Compiled.tables_fit`) is not compiled again: it predicts word by word."""
        compiled = pm.compiled
        if compiled.walker is not None or compiled._passes is not None or not compiled.tables_fit():
            return pm
        fresh = compile_program(pm.program, self.alphabet, self.features)
        if fresh.labels != compiled.labels:
            raise Error("the recompiled program's symbols differ from the saved transducer's")
        compiled.with_tables_of(fresh)
        return pm

    # -- the Python API for a model of one column pair (`pair` picks one of several)

    def _only(self) -> PairModel:
        if len(self.pairs) != 1:
            raise Error(
                f"the model has {len(self.pairs)} column pairs ({', '.join(self.pair_names())}): "
                "pick one with model.pair(source, target)"
            )
        return self.with_tables(next(iter(self.pairs.values())))

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

    def to_json(self, far_sha256: str) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "name": self.name,
            "options": {
                k: v for k, v in dataclasses.asdict(self.options).items() if k != "time_limit"
            },
            "columns": list(self.columns),
            "alphabet": list(self.alphabet),
            "features": self.features,
            "far": {"file": MODEL_FAR, "sha256": far_sha256},
            "pairs": [
                {
                    "source": pm.source,
                    "target": pm.target,
                    "far_keys": pass_keys(pm.source, pm.target, len(pm.compiled.passes)),
                    "rules": [[str(r) for r in p.rules] for p in pm.program.passes],
                    "program": dsl.to_json(pm.program),
                    "cost": pm.cost,
                    "train_correct": pm.train_correct,
                    "train_total": pm.train_total,
                    "held_out": pm.held_out,
                    "variant": pm.variant,
                }
                for _, pm in sorted(self.pairs.items())
            ],
            "rows": [[None if cell is None else " ".join(cell) for cell in row] for row in self.rows],
        }

    def save(self, directory: str | Path) -> None:
        """Write the model directory atomically (an existing one is replaced only at the end)."""
        with atomic_directory(directory) as tmp:
            fsts = {
                key: fst
                for (s, t), pm in self.pairs.items()
                for key, fst in zip(pass_keys(s, t, len(pm.compiled.passes)), pm.compiled.passes)
            }
            write_far(tmp / MODEL_FAR, fsts)
            sha = hashlib.sha256((tmp / MODEL_FAR).read_bytes()).hexdigest()
            (tmp / MODEL_JSON).write_text(
                json.dumps(self.to_json(sha), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            if self.pairs:
                # Every pair's compiled over the problem's alphabet: one token table.
                first = self.pairs[min(self.pairs)].compiled
                first.token_symbols().write_text(str(tmp / SYMBOLS_TXT))


def check_limits(problem: Problem, pairs: Sequence[tuple[int, int]]) -> None:
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
    problem: Problem,
    options: Options = Options(),
    pairs: Iterable[tuple[int, int]] | None = None,
    jobs: int = 1,
) -> Model:
    """Learn and compile a program for every column pair with training rows.

    `options.time_limit` (seconds) bounds each column pair: alignment, synthesis and
    compilation together. A pair that runs out of time raises `Error` naming it.
    `jobs` > 1 runs each pair's cross-validation folds in that many worker processes
    (`synthesis.learn`): the same model, sooner. Progress is reported as stage
    "column pair" (k of n, the pair's name as detail; `fstsynth.progress`).
    """
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
            compiled, seconds, result.held_out, result.variant,
            alphabet=alphabet, features=features,
        )
    report("column pair", len(todo), len(todo), "done")
    return Model(problem.columns, features, options, alphabet, learned, problem.name, rows=problem.cells)


def _need(cond: bool, json_path: Path, what: str) -> None:
    if not cond:
        raise Error(f"{json_path}: damaged model JSON: {what}")


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def load_model(directory: str | Path) -> Model:
    """Read a model directory written by `Model.save`; refuse anything damaged.

    The JSON is read as plain data and every field is type-checked; the FAR is read only
    if its SHA-256 matches the JSON and a child process could read it (see
    `exporters.far.read_far`). Nothing in either file is ever executed. The files are
    read through `fileio.stable_directory`, so a `learn` replacing the model meanwhile
    cannot make this read one version's JSON and the other's archive.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return _load_model(directory)  # says what is wrong with the path
    with stable_directory(directory) as stable:
        try:
            return _load_model(stable)
        except UserError as exc:  # name the user's path, not /proc/PID/fd/N
            raise type(exc)(str(exc).replace(str(stable), str(directory))) from None


def _load_model(directory: Path) -> Model:
    json_path = directory / MODEL_JSON
    if not directory.is_dir():
        if directory.exists():
            raise Error(f"{directory}: not a model directory (it is a file)")
        raise Error(f"{directory}: no such model directory")
    try:
        text = json_path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise Error(f"{json_path}: missing; is {directory} a model made by fstsynth learn?") from None
    except UnicodeDecodeError:
        raise Error(f"{json_path}: damaged model JSON: not valid UTF-8") from None
    except OSError as exc:
        raise Error(f"{json_path}: cannot read: {exc.strerror or exc}") from None
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
    try:
        return _model_from_json(directory, json_path, doc, version)
    except (Error, FarError):
        raise
    except RecursionError:
        raise Error(f"{json_path}: damaged model JSON: nested too deeply") from None
    except (KeyError, TypeError, ValueError, AttributeError, UserError) as exc:
        raise Error(f"{json_path}: damaged model JSON ({type(exc).__name__}: {exc})") from None


def _model_from_json(directory: Path, json_path: Path, doc: dict[str, Any], version: int) -> Model:
    far = doc.get("far")
    _need(isinstance(far, dict), json_path, "'far' must be an object")
    name, expected = far.get("file"), far.get("sha256")
    # The archive must sit inside the model directory: no paths elsewhere.
    _need(
        isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name,
        json_path,
        f"'far.file' must be a file name in the model directory, not {name!r}",
    )
    _need(isinstance(expected, str), json_path, "'far.sha256' must be a string")
    columns = doc.get("columns")
    _need(_is_str_list(columns) and len(columns) >= 2, json_path, "'columns' must list column names")
    alphabet = doc.get("alphabet")
    _need(_is_str_list(alphabet), json_path, "'alphabet' must be a list of tokens")
    raw_features = doc.get("features")
    _need(
        isinstance(raw_features, dict)
        and all(
            isinstance(f, dict) and all(isinstance(v, bool) for v in f.values())
            for f in raw_features.values()
        ),
        json_path,
        "'features' must map tokens to {feature: true/false}",
    )
    entries = doc.get("pairs")
    _need(isinstance(entries, list), json_path, "'pairs' must be a list")
    opts = doc.get("options")
    _need(isinstance(opts, dict), json_path, "'options' must be an object")
    # Options a later version added are left at their defaults; unknown ones ignored.
    known = {f.name for f in dataclasses.fields(Options)} - {"time_limit"}
    options = Options(**{k: v for k, v in opts.items() if k in known})
    far_path = directory / name
    if not far_path.is_file():
        raise Error(f"{far_path}: missing model transducers")
    if hashlib.sha256(far_path.read_bytes()).hexdigest() != expected:
        raise Error(f"{far_path}: damaged (checksum does not match model.json)")
    fsts = read_far(far_path)
    features = {tok: dict(f) for tok, f in raw_features.items()}
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
        # Version 1 kept one composed FST per pair; it is read as a one-pass chain.
        keys = entry["far_keys"] if version >= 2 else [entry["far_key"]]
        _need(_is_str_list(keys) and len(keys) >= 1, json_path, f"pair {n}: 'far_keys' must list FAR keys")
        passes = []
        for key in keys:
            fst = fsts.get(key)
            if fst is None:
                raise Error(f"{far_path}: no transducer {key!r}")
            symbols = fst.input_symbols()
            if symbols is None or symbols.find(UNK) == -1:
                raise Error(f"{far_path}: transducer {key!r} has no fstsynth symbol table")
            passes.append(fst)
        tokens = program_tokens(program, alphabet) if version >= 2 else None
        pairs[(s, t)] = PairModel(
            s, t, program, float(entry["cost"]),
            int(entry["train_correct"]), int(entry["train_total"]),
            Compiled(passes, passes[0].input_symbols().copy(), tokens),
            held_out=None if entry.get("held_out") is None else float(entry["held_out"]),
            variant=str(entry.get("variant", "")),
            far_key=far_key(s, t),
            alphabet=tuple(alphabet),
            features=features,
        )
    name_ = doc.get("name", "")
    rows = doc.get("rows", [])  # absent in models saved before it was kept
    _need(
        isinstance(rows, list)
        and all(
            isinstance(row, list) and len(row) == len(columns)
            and all(cell is None or isinstance(cell, str) for cell in row)
            for row in rows
        ),
        json_path,
        "'rows' must list rows of one word (or null) per column",
    )
    return Model(
        tuple(columns),
        features,
        options,
        tuple(alphabet),
        pairs,
        name_ if isinstance(name_, str) else "",
        rows=tuple(tuple(None if cell is None else tuple(cell.split()) for cell in row) for row in rows),
    )
