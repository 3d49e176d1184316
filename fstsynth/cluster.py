"""Models that travel to other processes and machines, and the Dask path: `apply` on
files of words and `solve` on many problems, run as tasks of a Dask cluster.

Public API:
    ShippedModel, load(path) -> ShippedModel, from_files(files) -> ShippedModel
    ShippedModel.apply_partition(lines, source=None, target=None, fmt="plain", join=False) -> list[str]
    FileNotes, apply_file(model, path, output, source=None, target=None, fmt="plain", join=False) -> FileNotes
    apply_files(model_dir, paths, output_dir, scheduler=None, ...) -> None
    solve_on_cluster(paths, options, scheduler, check=False) -> Iterator[FileResult]
    DASK_MISSING

A model goes to a worker as its files, not as Python objects: `load` (what
`fstsynth.load` returns) keeps the bytes of the model directory's files, and a
`ShippedModel` pickles as those bytes alone (`__reduce__`: `from_files` and a dict of
file names to bytes; no code, no tables, no transducers). The worker rebuilds it with
`from_files`, which writes the files to a private temporary directory and reads them
with `load_model`, every check included (the directory is removed when the model is
garbage collected); so a worker runs the very tables the client loaded.

`apply_file` is `fstsynth apply MODEL < path > output` as a library call, block by
block through the same readers (comments skipped, the source of `source<TAB>target`
lines, the byte path where it applies): its output file is byte for byte the command's
standard output, written atomically. What the command warns of on standard error (a
line with a tab, tokens never seen in training) comes back as `FileNotes`, which
`apply_files` prints on the client once for all files. `apply_partition` does the same
for a list of lines (a `dask.bag` partition), returning the output lines; its notes go
to Python's logging on the worker.

Dask (`pip install 'fstsynth[dask]'`: `dask[distributed]`) is imported only by the
functions that talk to a scheduler; nothing else in fstsynth imports this module's
Dask side. Input and output paths are made absolute on the client and read and written
by the workers: on a cluster of several machines they must see the same file system.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from fstsynth import api
from fstsynth.errors import UserError
from fstsynth.fileio import commit_file, stable_directory, temporary_file
from fstsynth.model import Error, Model
from fstsynth.model_file import MODEL_JSON, FarStages, digest, load_model

if TYPE_CHECKING:
    from distributed import Client

    from fstsynth.parallel import FileResult
    from fstsynth.stream import Applied, BlockApplier
    from fstsynth.synthesis import Options
    from fstsynth.types import Features

log = logging.getLogger(__name__)

DASK_MISSING = "--scheduler needs Dask, an optional extra: pip install 'fstsynth[dask]'"
#: Seconds to wait for a scheduler to answer before giving up.
CONNECT_SECONDS = 30
#: A model directory being replaced while it is read is read again, this many times.
LOAD_ATTEMPTS = 4


class ShippedModel(api.Model):
    """A model (as `fstsynth.load` gives it) that pickles as the bytes of its model
    files (see the module doc). `files`: file name -> bytes, the whole model directory
    as loaded."""

    FIELDS = (*api.Model.FIELDS, "files")
    UNPRINTED = ("files",)
    files: Mapping[str, bytes]

    def __init__(self, *args: Any, files: Mapping[str, bytes] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._set(files={} if files is None else files)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, bytes]]]:
        return (from_files, (dict(self.files),))

    def apply_partition(
        self,
        lines: Iterable[str],
        source: int | str | None = None,
        target: int | str | None = None,
        fmt: str = "plain",
        join: bool = False,
    ) -> list[str]:
        """The lines `fstsynth apply` prints for `lines` (each with or without its
        newline, as `dask.bag.read_text` gives them), one per line, without newlines:
        `bag.map_partitions(model.apply_partition).to_textfiles(..., last_endline=True)`.
        Comments are skipped and tab lines read as `apply` reads them; the warnings
        `apply` would print are logged (Python `logging`, on the worker)."""
        data = "".join(line if line.endswith("\n") else line + "\n" for line in lines).encode("utf-8")
        if not data:
            return []
        from fstsynth.stream import Block

        name = "<partition>"
        applied = _block_applier(self, source, target, fmt, join, name).apply(Block(data, 0, True))
        notes = FileNotes(name)
        notes.add(applied)
        for message in notes.warnings(self.alphabet, self.features):
            log.warning("%s", message)
        out = _printed(applied).decode("utf-8").split("\n")
        out.pop()  # after the last newline
        return out


def load(path: str | Path) -> ShippedModel:
    """The model directory at `path`, loaded with `load_model`, holding its files'
    bytes (so that it can be shipped). The bytes are read with the directory held
    (`stable_directory`) and must be the ones the model was loaded from: a model
    replaced meanwhile is read again."""
    path = Path(path)
    for _ in range(LOAD_ATTEMPTS):
        model = load_model(path)  # errors name `path`, and come first
        with stable_directory(path) as stable:
            files = {p.name: p.read_bytes() for p in stable.iterdir() if p.is_file() and not p.name.startswith(".")}
        if _loaded_from(model, files):
            return _shipped(model, files)
    raise Error(f"{path}: the model changed while loading, retry")


def _loaded_from(model: Model, files: Mapping[str, bytes]) -> bool:
    """Whether `files` holds the model JSON `model` was read from (its pairs remember
    its checksum; the JSON holds the checksums of the other files, checked on load)."""
    if MODEL_JSON not in files:
        return False
    json_sha256 = digest(files[MODEL_JSON])
    stages = [pm.stages for pm in model.pairs.values() if isinstance(pm.stages, FarStages)]
    return all(s.json_sha256 == json_sha256 for s in stages)


def _shipped(model: Model, files: Mapping[str, bytes]) -> ShippedModel:
    # The user's methods on the model and its pairs (`api.Model.of`), and the files.
    return api._same_as(ShippedModel, api.Model.of(model), files=dict(files))


def from_files(files: Mapping[str, bytes]) -> ShippedModel:
    """The model whose directory holds `files` (name -> bytes), read with every check
    of `load_model` from a private temporary directory, removed with the model."""
    for name in files:
        if name in ("", ".", "..") or "/" in name or "\\" in name or name.startswith("."):
            raise Error(f"not a model file name: {name!r}")
    directory = Path(tempfile.mkdtemp(prefix="fstsynth-model-"))
    try:
        for name, data in files.items():
            (directory / name).write_bytes(data)
        model = _shipped(load_model(directory), files)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    # The transducers (`model.far`) are read from there when first asked for.
    weakref.finalize(model, shutil.rmtree, directory, True)
    return model


# ------------------------------------------------------------------ apply


@dataclass
class FileNotes:
    """What `apply` would have warned of for one input: the tokens never seen in
    training (with the number of lines each is in), and the first line with a tab."""

    name: str
    unseen: Counter = field(default_factory=Counter)
    tab_line: int | None = None

    def add(self, applied: "Applied") -> None:
        self.unseen.update(applied.unseen)
        if self.tab_line is None:
            self.tab_line = applied.tab_line

    def warnings(self, alphabet: Iterable[str], features: "Features | None" = None) -> list[str]:
        from fstsynth.formatting import tab_warning, unseen_warning

        found = [] if self.tab_line is None else [tab_warning(self.name, self.tab_line)]
        unseen = unseen_warning(self.unseen, alphabet, features)
        return found + ([unseen] if unseen else [])


def _block_applier(model: Model, source: int | str | None, target: int | str | None, fmt: str, join: bool,
                   name: str) -> "BlockApplier":
    """`fstsynth apply`'s reading of standard input, for the file `name`, its output
    bytes UTF-8 (`stream.BlockApplier`)."""
    from fstsynth.formatting import APPLY_FORMATS
    from fstsynth.stream import BlockApplier, lazy_splitter

    if fmt not in APPLY_FORMATS:
        raise UserError(f"unknown --format {fmt!r}; choose one of {', '.join(APPLY_FORMATS)}")
    alphabet = set(model.alphabet)
    pm = model.pair(source, target)
    return BlockApplier(pm, alphabet, "" if join else " ", fmt, "utf-8", lazy_splitter(alphabet), name)


def _printed(applied: "Applied") -> bytes:
    return applied.data or applied.text.encode("utf-8")


def apply_file(
    model: Model,
    path: str | Path,
    output: str | Path,
    source: int | str | None = None,
    target: int | str | None = None,
    fmt: str = "plain",
    join: bool = False,
) -> FileNotes:
    """Write to `output` (atomically) what `fstsynth apply` prints for the words of
    the file `path`, read as standard input is; what it would warn of comes back."""
    from fstsynth.stream import blocks

    name = str(path)
    applier = _block_applier(model, source, target, fmt, join, name)
    notes = FileNotes(name)
    with temporary_file(output) as tmp:
        with open(path, "rb") as words, open(tmp, "wb") as out:
            for block in blocks(words):
                applied = applier.apply(block)
                notes.add(applied)
                out.write(_printed(applied))
        commit_file(tmp, output)
    return notes


def output_paths(paths: Sequence[Path], output_dir: Path) -> list[Path]:
    """Where each input's predictions go: a file of the same name in `output_dir`
    (two inputs of one name, or an input in `output_dir`, are refused)."""
    outputs = [output_dir / path.name for path in paths]
    seen: dict[Path, Path] = {}
    for path, out in zip(paths, outputs):
        if out in seen:
            raise UserError(f"{path} and {seen[out]} would both be written to {out}: rename one")
        seen[out] = path
        if out.exists() and path.exists() and os.path.samefile(out, path):
            raise UserError(f"{path}: the output would overwrite the input: choose another --output-dir")
    return outputs


def apply_files(
    model_dir: str | Path,
    paths: Sequence[str | Path],
    output_dir: str | Path,
    scheduler: str | None = None,
    source: int | str | None = None,
    target: int | str | None = None,
    fmt: str = "plain",
    join: bool = False,
) -> None:
    """`fstsynth apply MODEL FILE... --output-dir DIR [--scheduler ADDRESS]`: each
    FILE's predictions to DIR/<its name> (`apply_file`), here or, with `scheduler`, as
    one Dask task per file; then the warnings of all files, on standard error."""
    from fstsynth.formatting import tab_warning
    from fstsynth.command_errors import warn
    from fstsynth.formatting import unseen_warning

    if not paths:
        raise UserError("apply --output-dir: give the files of words to read after the model directory")
    inputs = [Path(p).absolute() for p in paths]
    for path in inputs:
        if not path.is_file():
            raise UserError(f"{path}: no such file")
    out_dir = Path(output_dir).absolute()
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = output_paths(inputs, out_dir)
    args = (source, target, fmt, join)
    if scheduler is None:
        model = load_model(model_dir)
        model.pair(source, target)  # a bad column is reported before any file is read
        notes = [apply_file(model, path, out, *args) for path, out in zip(inputs, outputs)]
    else:
        model = load(model_dir)
        model.pair(source, target)
        with _client(scheduler) as client:
            [remote] = client.scatter([model], broadcast=True)
            futures = [
                client.submit(apply_file, remote, path, out, *args, pure=False) for path, out in zip(inputs, outputs)
            ]
            notes = client.gather(futures)
    for note in notes:
        if note.tab_line is not None:
            warn(tab_warning(note.name, note.tab_line))
    unseen = unseen_warning(sum((note.unseen for note in notes), Counter()), model.alphabet, model.features)
    if unseen:
        warn(unseen)


# ------------------------------------------------------------------ solve


def solve_on_cluster(
    paths: Sequence[Path], options: "Options", scheduler: str, *, check: bool = False
) -> Iterator["FileResult"]:
    """`parallel.solve_files` with one Dask task per problem: each file is read here
    (its problem shipped as data) and solved by the same `solve_problem` call on a
    worker; results in the order of `paths`."""
    from fstsynth.parallel import load_one, solve_loaded

    loaded = [load_one(path) for path in paths]
    with _client(scheduler) as client:
        futures: dict[int, Any] = {}
        # Largest first (by training cells), as `solve --jobs` hands them out.
        todo = sorted((k for k, r in enumerate(loaded) if r.problem is not None), key=lambda k: -_cells(loaded[k]))
        for rank, k in enumerate(todo):
            futures[k] = client.submit(solve_loaded, loaded[k], options, check, pure=False, priority=len(todo) - rank)
        for k, result in enumerate(loaded):
            yield futures[k].result() if k in futures else result


def _cells(result: "FileResult") -> int:
    problem = result.problem
    return 0 if problem is None else sum(c is not None for row in problem.cells for c in row)


def _client(address: str) -> "Client":
    """A Dask client of the scheduler at `address` (a one-line error without Dask, or
    when the scheduler does not answer)."""
    try:
        from distributed import Client
    except ImportError:
        raise UserError(DASK_MISSING) from None
    try:
        return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
