"""Models: programs learned for the column pairs of a problem, compiled, saved, loaded.

Public API:
    FORMAT_VERSION, PairModel, Model, Error
    learn_model(problem, options, progress=None) -> Model
    Model.save(directory), load_model(directory) -> Model
    Model.pair(source, target), Model.predict(pair, word), Model.check(pair, words)

A model directory holds `model.json` (format name and version, options, features,
columns, token inventory, and per column pair its program in readable and JSON form)
and `model.far` (one FST per column pair under the key `pair-S-T`, with the symbol
table attached), plus `symbols.txt` for tools that want the table on its own. The FAR's
SHA-256 is recorded in the JSON, so a damaged archive is refused before OpenFst reads
it. Loading never executes anything from the files.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from exporters.far import read_far, write_far
from fstsynth import dsl
from fstsynth.alignment import with_vowel_classes
from fstsynth.compiler import UNK, Compiled, compile_program
from fstsynth.errors import UserError
from fstsynth.fileio import atomic_directory
from fstsynth.interpreter import run
from fstsynth.problem import Problem
from fstsynth.synthesis import LearnResult, Options, learn

FORMAT_NAME = "fstsynth-model"
FORMAT_VERSION = 1
MODEL_JSON = "model.json"
MODEL_FAR = "model.far"
SYMBOLS_TXT = "symbols.txt"

Token = str
Word = tuple[Token, ...]


class Error(UserError):
    """A model file is missing, damaged, or of an unsupported version; or a bad pair."""


def far_key(source: int, target: int) -> str:
    return f"pair-{source}-{target}"


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

    def predict(self, word: Sequence[Token]) -> Word:
        """The transducer's output; unseen tokens are handled as in `restore_unknown`."""
        mapped = self.compiled.map_unknown(word)
        return restore_unknown(word, mapped, self.compiled.apply(word))

    def interpret(self, word: Sequence[Token], features: Mapping) -> Word:
        mapped = self.compiled.map_unknown(word)
        return restore_unknown(word, mapped, run(self.program, mapped, features))


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
                "variant": self.options.variant,
                "window": self.options.window,
                "max_conjuncts": self.options.max_conjuncts,
                "max_passes": self.options.max_passes,
                "alignment": self.options.alignment,
                "affinity": self.options.affinity,
                "token_map": self.options.token_map,
                "tiers": self.options.tiers,
                "folds": self.options.folds,
            },
            "columns": list(self.columns),
            "alphabet": list(self.alphabet),
            "features": self.features,
            "far": {"file": MODEL_FAR, "sha256": far_sha256},
            "pairs": [
                {
                    "source": pm.source,
                    "target": pm.target,
                    "far_key": far_key(pm.source, pm.target),
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
        }

    def save(self, directory: str | Path) -> None:
        """Write the model directory atomically (an existing one is replaced only at the end)."""
        with atomic_directory(directory) as tmp:
            write_far(
                tmp / MODEL_FAR,
                {far_key(s, t): pm.compiled.fst for (s, t), pm in self.pairs.items()},
            )
            sha = hashlib.sha256((tmp / MODEL_FAR).read_bytes()).hexdigest()
            (tmp / MODEL_JSON).write_text(
                json.dumps(self.to_json(sha), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
            )
            symbols = next(iter(self.pairs.values())).compiled.symbols if self.pairs else None
            if symbols is not None:
                symbols.write_text(str(tmp / SYMBOLS_TXT))


def learn_model(
    problem: Problem,
    options: Options = Options(),
    progress: Callable[[int, int, str], None] | None = None,
    pairs: Iterable[tuple[int, int]] | None = None,
) -> Model:
    """Learn and compile a program for every column pair with training rows."""
    todo = list(pairs) if pairs is not None else problem.column_pairs()
    if not todo:
        raise Error(f"{problem.name}: no column pair has a row with both cells known")
    alphabet = tuple(sorted(problem.alphabet()))
    # Learning, the transducers and the interpreter all read these features.
    features = with_vowel_classes(problem.features, alphabet)
    learned: dict[tuple[int, int], PairModel] = {}
    for k, (s, t) in enumerate(todo):
        label = f"{problem.columns[s]} -> {problem.columns[t]}"
        if progress:
            progress(k, len(todo), label)
        result: LearnResult = learn(problem.training_pairs(s, t), features, options)
        started = time.perf_counter()
        compiled = compile_program(result.program, alphabet, features)
        seconds = dict(result.seconds, compilation=time.perf_counter() - started)
        learned[(s, t)] = PairModel(
            s, t, result.program, result.cost, result.train_correct, result.train_total,
            compiled, seconds, result.held_out, result.variant,
        )
    if progress:
        progress(len(todo), len(todo), "done")
    return Model(problem.columns, features, options, alphabet, learned, problem.name)


def load_model(directory: str | Path) -> Model:
    """Read a model directory written by `Model.save`; refuse anything damaged."""
    directory = Path(directory)
    json_path = directory / MODEL_JSON
    if not directory.is_dir():
        raise Error(f"{directory}: not a model directory")
    try:
        text = json_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Error(f"{json_path}: missing; is {directory} a model made by fstsynth learn?") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise Error(f"{json_path}: cannot read: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Error(f"{json_path}: line {exc.lineno}: damaged model JSON: {exc.msg}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise Error(f"{json_path}: not an fstsynth model")
    version = doc.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise Error(
            f"{json_path}: model format version {version} is newer than this fstsynth "
            f"supports ({FORMAT_VERSION}); upgrade fstsynth"
        )
    try:
        far_path = directory / doc["far"]["file"]
        expected = doc["far"]["sha256"]
        if not far_path.is_file():
            raise Error(f"{far_path}: missing model transducers")
        if hashlib.sha256(far_path.read_bytes()).hexdigest() != expected:
            raise Error(f"{far_path}: damaged (checksum does not match model.json)")
        fsts = read_far(far_path)
        opts = doc["options"]
        options = Options(
            variant=opts["variant"],
            window=opts["window"],
            max_conjuncts=opts["max_conjuncts"],
            max_passes=opts["max_passes"],
            alignment=opts["alignment"],
            # Absent from models written before these options existed.
            affinity=bool(opts.get("affinity", True)),
            token_map=bool(opts.get("token_map", True)),
            tiers=bool(opts.get("tiers", True)),
            folds=int(opts.get("folds", 3)),
        )
        columns = tuple(doc["columns"])
        features = {tok: dict(f) for tok, f in doc["features"].items()}
        pairs: dict[tuple[int, int], PairModel] = {}
        for entry in doc["pairs"]:
            s, t = int(entry["source"]), int(entry["target"])
            fst = fsts.get(entry["far_key"])
            if fst is None:
                raise Error(f"{far_path}: no transducer {entry['far_key']!r}")
            symbols = fst.input_symbols()
            if symbols is None:
                raise Error(f"{far_path}: transducer {entry['far_key']!r} has no symbol table")
            compiled = Compiled(fst, symbols.copy())
            pairs[(s, t)] = PairModel(
                s, t, dsl.from_json(entry["program"]), float(entry["cost"]),
                int(entry["train_correct"]), int(entry["train_total"]), compiled,
                held_out=None if entry.get("held_out") is None else float(entry["held_out"]),
                variant=str(entry.get("variant", "")),
            )
        return Model(columns, features, options, tuple(doc["alphabet"]), pairs, doc.get("name", ""))
    except Error:
        raise
    except (KeyError, TypeError, ValueError, dsl.Error, UserError) as exc:
        raise Error(f"{json_path}: damaged model JSON ({type(exc).__name__}: {exc})") from None
