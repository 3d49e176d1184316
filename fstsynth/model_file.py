"""The model file: a model directory written atomically, and read back validated.

Public API:
    FORMAT_VERSION, MODEL_JSON, MODEL_FAR, MODEL_TABLES, SYMBOLS_TXT
    save_model(model, directory), load_model(directory) -> Model
    FarStages (where a loaded pair's transducers are), digest(data), sha256_of(path)

A model directory (format version 7) holds
- `model.json`: format name and version, options, features, columns, token inventory,
  the SHA-256 of every other file, per column pair its program (readable and as JSON),
  its token list and the FAR keys of its transducers in the order they apply (none, and
  `unbuilt`: why, for a program whose transducers were too large to build: see
  `compiler.MAX_STAGE_ARCS`), and the training rows (optional), which `fstsynth report`
  shows the rules at work on;
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
- `symbols.txt`: the table of word tokens, for tools that compile words with it (absent
  when no pair's transducers were built).
Versions 1 and 2 (no tables; version 1: one composed transducer per pair, version 2:
one per pass) still load: their tables are compiled from the program, which takes well
under a second. Versions 3 and 4 load as they are (every pair has its transducers).

Loading never executes anything from the files: the JSON is parsed as plain data and
checked field by field, the arrays are read as plain integers (no pickle) and checked
for range, and the archive is read by OpenFst only after a child process has read it
without crashing (`fstsynth.far.check_far`). Every file's checksum is checked against
the JSON, from the very bytes then used, so a model rewritten while it is read (`learn`
swapping a new one in) is never seen half old, half new: the load starts again, and
after a few changes in a row stops with "model changed while loading, retry".
"""

from __future__ import annotations

import functools
import json
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from fstsynth.arrays import Array, read_npz, write_npz
from fstsynth.arrays import Error as ArraysError
from fstsynth.errors import UserError
from fstsynth.fileio import atomic_directory, stable_directory
from fstsynth.model import Error, Model, ModelChangedError, PairModel, StoredProgram, far_key
from fstsynth.program_json import Error as ProgramError
from fstsynth.program_json import check_program
from fstsynth.tables import UNK, Tables
from fstsynth.tables import Error as TablesError
from fstsynth.types import Token, Word

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
    from fstsynth.transducers import Transducers

FORMAT_NAME = "fstsynth-model"
#: 4: the layout of 3; its programs may hold SetFeatures, Agree and tier tests that count
#: the position itself, which a reader of version 3 would misread (an inclusive tier
#: test as a plain one), so it refuses them as newer. 5: a pair may have no transducers
#: (`unbuilt`), which a reader of version 4 would call damaged rather than newer. 6: the
#: tables' steps in compact form (`fstsynth.table_format.PassTables`). 7: each
#: automaton's distinct masks once, and a mask number per state (a reader of version 6
#: would call the tables damaged).
FORMAT_VERSION = 7
MODEL_JSON = "model.json"
MODEL_FAR = "model.far"
MODEL_TABLES = "tables.npz"
SYMBOLS_TXT = "symbols.txt"
#: A model rewritten while it is being read is read again, this many times at most.
LOAD_ATTEMPTS = 4


class _Changed(Exception):
    """Internal: a file no longer matches the JSON because the model was replaced."""


def digest(data: bytes) -> str:
    """The SHA-256 of `data`, in hex."""
    return _sha256(data).hexdigest()


def sha256_of(path: Path) -> str | None:
    try:
        return digest(path.read_bytes())
    except OSError:
        return None


# ------------------------------------------------------------------ saving


def model_json(
    model: Model, files: Mapping[str, str], stage_keys: Mapping[tuple[int, int], list[str]]
) -> dict[str, Any]:
    """The model's JSON document, given the checksums of its other files and the FAR
    keys of each pair's stages."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "name": model.name,
        "options": dict(model.options),
        "columns": list(model.columns),
        "alphabet": list(model.alphabet),
        "features": model.features,
        "files": dict(files),
        "pairs": [
            {
                "source": pm.source,
                "target": pm.target,
                "stages": stage_keys[key],
                **({} if pm.unbuilt is None else {"unbuilt": pm.unbuilt}),
                "tables": f"{far_key(*key)}.",
                "passes": len(pm.tables.passes),
                "tokens": list(pm.tables.tokens),
                "rules": [[str(r) for r in p.rules] for p in pm.program.passes],
                "program": _program_json(pm),
                "cost": pm.cost,
                "train_correct": pm.train_correct,
                "train_total": pm.train_total,
                "held_out": pm.held_out,
                "variant": pm.variant,
            }
            for key, pm in sorted(model.pairs.items())
        ],
        "rows": [[None if cell is None else " ".join(cell) for cell in row] for row in model.rows],
    }


def _program_json(pm: PairModel) -> Any:
    """The pair's program as JSON (a program read from a model file: its document)."""
    if isinstance(pm.program_or_stored, StoredProgram):
        return pm.program_or_stored.document
    from fstsynth import dsl

    return dsl.to_json(pm.program_or_stored)


def save_model(model: Model, directory: str | Path) -> None:
    """Write the model directory atomically (an existing one is replaced only at the end)."""
    from fstsynth.far import write_far  # Pynini: not imported by `apply`, which only reads

    with atomic_directory(directory) as tmp:
        fsts: dict[str, Any] = {}
        arrays: dict[str, Array] = {}
        stage_keys: dict[tuple[int, int], list[str]] = {}
        first = None
        for key, pm in sorted(model.pairs.items()):
            arrays.update(pm.tables.arrays(f"{far_key(*key)}."))
            if pm.unbuilt is not None:  # too large to build: applying needs only the tables
                stage_keys[key] = []
                continue
            trans = pm.transducers()
            first = first or trans
            stage_keys[key] = trans.stage_keys(far_key(*key))
            fsts.update(zip(stage_keys[key], trans.stages))
        write_far(tmp / MODEL_FAR, fsts)
        with open(tmp / MODEL_TABLES, "wb") as handle:
            write_npz(handle, arrays)
        if first is not None:
            # Every pair is compiled over the problem's alphabet: one token table.
            first.token_symbols().write_text(str(tmp / SYMBOLS_TXT))
        files = {
            name: digest((tmp / name).read_bytes())
            for name in (MODEL_FAR, MODEL_TABLES, SYMBOLS_TXT)
            if (tmp / name).exists()
        }
        (tmp / MODEL_JSON).write_text(
            json.dumps(model_json(model, files, stage_keys), ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8",
        )


# ------------------------------------------------------------------ loading


class FarStages(NamedTuple):
    """Where a loaded pair's transducers are: FAR `keys`, in order, of the archive at
    `path` with checksum `sha256`, as recorded in the model JSON at `json_path` (whose
    bytes had checksum `json_sha256`). `tokens`: the word tokens among their symbols.
    `reason`: why they were not built (then `keys` is empty), as
    `transducers.UnbuiltTransducers` says it; None: they are in the archive."""

    path: Path
    sha256: str
    keys: tuple[str, ...]
    tokens: tuple[Token, ...]
    json_path: Path
    json_sha256: str
    reason: str | None = None

    def load(self) -> "Transducers":
        from fstsynth.transducers import Transducers, UnbuiltTransducers
        from fstsynth.far import ChecksumError, Error as FarError

        if self.reason is not None:
            return UnbuiltTransducers(self.reason).load()  # raises StageTooLargeError
        try:
            fsts = _read_far(self.path, self.sha256)
        except ChecksumError:
            if sha256_of(self.json_path) != self.json_sha256:
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
    """The pass a FAR key belongs to: `pair-S-T.pass{k}.{j}` (versions 3 and 4),
    `pair-S-T.pass{k}` (version 2), `pair-S-T` (version 1, all passes composed)."""
    parts = key.split(".")
    if len(parts) >= 2 and parts[1].startswith("pass") and parts[1][4:].isdigit():
        return int(parts[1][4:])
    return 1


@functools.lru_cache(maxsize=4)
def _read_far(path: Path, sha256: str) -> dict:
    from fstsynth.far import read_far

    return read_far(path, sha256=sha256)


def _need(cond: bool, json_path: Path, what: str) -> None:
    if not cond:
        raise Error(f"{json_path}: damaged model JSON: {what}")


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _is_file_name(name: Any) -> bool:
    """A plain file name inside the model directory (no paths elsewhere)."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name


def load_model(directory: str | Path) -> Model:
    """Read a model directory written by `save_model`; refuse anything damaged.

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
    reader = _Reader(stable, json_path, digest(data), directory)
    try:
        return _model_from_json(reader, doc, version)
    except (Error, _Changed):
        raise
    except RecursionError:
        raise Error(f"{json_path}: damaged model JSON: nested too deeply") from None
    except (KeyError, TypeError, ValueError, AttributeError, UserError) as exc:
        raise Error(f"{json_path}: damaged model JSON ({type(exc).__name__}: {exc})") from None


class _Reader(NamedTuple):
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
        if digest(data) != sha256:
            self.unchanged()
            raise Error(f"{path}: damaged (checksum does not match model.json)")
        return data

    def unchanged(self) -> None:
        """Raise _Changed if the JSON is no longer the one read."""
        if sha256_of(self.json_path) != self.json_sha256:
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
        # Checked now (a damaged program stops any command before its output), made
        # into DSL nodes only if asked for: `apply` runs the tables alone.
        try:
            passes = check_program(entry["program"])
        except ProgramError as exc:
            raise Error(f"{json_path}: damaged model JSON (Error: {exc})") from None
        program = StoredProgram(entry["program"])
        reason = None
        if version >= 3:
            keys, tables, reason = _v3_pair(
                json_path, reader.directory / MODEL_TABLES, entry, n, arrays, passes, version
            )
        else:
            from fstsynth.bimachine import program_tables  # numpy: old models only

            # Version 1 kept one composed FST per pair; it is read as a one-stage chain.
            keys = entry["far_keys"] if version >= 2 else [entry["far_key"]]
            _need(_is_str_list(keys) and len(keys) >= 1, json_path, f"pair {n}: 'far_keys' must list FAR keys")
            tables = program_tables(program.load(), alphabet, features)
        stages = FarStages(
            reader.named / far_name, far_sha, tuple(keys), tables.tokens, reader.named / MODEL_JSON,
            reader.json_sha256, reason,
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
        and set(map(type, cells := list(chain.from_iterable(rows)))) <= {str, type(None)},
        json_path,
        "'rows' must list rows of one word (or null) per column",
    )
    return Model(
        tuple(columns), features, dict(opts), tuple(alphabet), pairs, name_ if isinstance(name_, str) else "",
        rows=_row_words(cells, len(columns)),
    )


def _row_words(cells: list[str | None], width: int) -> tuple[tuple[Word | None, ...], ...]:
    """The training rows' cells (all rows' cells in order, `width` per row) as words.
    (Split by maps, without a Python call per cell: they were a fifth of loading a
    model of 1,000 rows, and `apply` loads them too.)"""
    if None in cells:
        words: list[Word | None] = [None if cell is None else tuple(cell.split()) for cell in cells]
    else:
        words = list(map(tuple, map(str.split, cells)))  # type: ignore[arg-type]
    return tuple(zip(*[iter(words)] * width))


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
    arrays: Mapping[str, Array] | None, passes: int, version: int,
) -> tuple[list[str], Tables, str | None]:
    """A pair's FAR keys, tables and why its transducers were not built (None: they were)."""
    keys = entry["stages"]
    reason = entry.get("unbuilt") if version >= 5 else None
    _need(reason is None or (isinstance(reason, str) and reason != ""), json_path, f"pair {n}: 'unbuilt' must say why")
    _need(
        _is_str_list(keys) and (len(keys) == 0 if reason is not None else len(keys) >= 1),
        json_path,
        f"pair {n}: 'stages' must list FAR keys" if reason is None else f"pair {n}: an unbuilt pair has no 'stages'",
    )
    tokens = entry["tokens"]
    _need(_is_str_list(tokens) and UNK in tokens, json_path, f"pair {n}: 'tokens' must list the pair's tokens")
    prefix, count = entry["tables"], entry["passes"]
    _need(isinstance(prefix, str), json_path, f"pair {n}: 'tables' must be the prefix of its arrays")
    _need(
        isinstance(count, int) and not isinstance(count, bool) and count == passes,
        json_path, f"pair {n}: 'passes' must be the number of passes of its program",
    )
    assert arrays is not None
    try:
        tables = Tables.from_arrays(tokens, arrays, count, prefix, compact=version >= 6, mask_numbers=version >= 7)
    except TablesError as exc:
        raise Error(f"{tables_path}: {exc}") from None
    return keys, tables, reason
