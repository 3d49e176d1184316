"""The parts of the command line that need no typer: the error guard every command's
body runs in, and `fstsynth apply` whole (its body, and a reader of a plain `apply`
command line that `python -m fstsynth` tries before typer).

Public API:
    guarded(body, debug=False) -> int, run_apply(...) -> int, lean_apply(argv) -> int | None
    APPLY_OPTIONS, APPLY_FORMATS, WATCH_BYTES, warn(message), echo(text)

Why apart from `fstsynth.cli`: importing typer (and the rest of the command line) is a
large share of a one-word `apply` (~0.07 s of CPU of ~0.25 s, Python's own start-up
included), and `apply` is the command users run in pipelines, on one word or on
millions. Here only what `apply` uses is imported: the model reader, the streaming
applier, the error types; numpy when a batch large enough for it comes. `fstsynth.cli`'s
typer command `apply` calls `run_apply` inside `guarded` too, so the two routes are one
code path past the argument parsing (tests/test_fast_apply.py runs both on the same
command lines and compares output, errors and exit codes).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, List, NamedTuple, Optional, Sequence

from fstsynth.errors import UserError
from fstsynth.fileio import completed_writes, interrupted_summary, raise_if_interrupted

if TYPE_CHECKING:
    from fstsynth.guard import Guard
    from fstsynth.stream import Block, ByteApplier

#: Exit codes: a user error (and a usage error), `--check` finding a mismatch, a closed
#: output pipe (as a shell reports SIGPIPE), Ctrl-C.
USER_ERROR, MISMATCH, BROKEN_PIPE, INTERRUPTED = 2, 1, 141, 130

APPLY_FORMATS = ("plain", "tsv")


class ApplyOption(NamedTuple):
    """One of `fstsynth apply`'s options: the parameter it sets, the words that name it,
    and whether it is a flag (else it takes the next word as its value)."""

    name: str
    decls: tuple[str, ...]
    flag: bool
    default: object


#: `fstsynth apply`'s options, as `fstsynth.cli.apply` declares them for typer (with
#: their help; tests/test_fast_apply.py checks that the two agree).
APPLY_OPTIONS = (
    ApplyOption("source", ("--source", "-s"), False, None),
    ApplyOption("target", ("--target", "-t"), False, None),
    ApplyOption("check", ("--check",), True, False),
    ApplyOption("trace", ("--trace",), True, False),
    ApplyOption("fmt", ("--format", "-f"), False, "plain"),
    ApplyOption("join", ("--join",), True, False),
    ApplyOption("output_dir", ("--output-dir", "-o"), False, None),
    ApplyOption("scheduler", ("--scheduler",), False, None),
)


def echo(text: str, err: bool = False) -> None:
    """A line on standard output (or error), flushed at once, as `typer.echo` writes it
    (a batch of predictions reaches a reader as soon as it is made)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def warn(message: str) -> None:
    echo(f"fstsynth: warning: {message}", err=True)


def _error(message: str) -> int:
    echo(f"fstsynth: error: {message}", err=True)
    return USER_ERROR


def guarded(body: Callable[[], int | None], debug: bool = False) -> int:
    """Run a command body; its exit code (None: 0). User errors become one line
    `fstsynth: error: ...` and exit code 2 (`debug`: raised, for their traceback).

    Errors from the environment (a full disk, a file that vanished, no memory) are not
    bugs either, and get one line too; anything else keeps its traceback. A closed
    output pipe (`fstsynth apply ... | head`) ends the command quietly.
    """
    from fstsynth import guard

    written_before = len(completed_writes())
    try:
        code = body()
        raise_if_interrupted()  # a Ctrl-C whose exception some C code swallowed
        return code or 0
    except UserError as exc:
        if debug:
            raise
        return _error(str(exc))
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at devnull.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE
    except OSError as exc:
        if debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        return _error(f"{where}{exc.strerror or exc}")
    except MemoryError:
        if debug:
            raise
        return _error("out of memory (see the Limits section of the README)")
    except guard.MemoryLimitExceeded as exc:
        guard.acknowledge_stop()
        return _error(str(exc))
    except KeyboardInterrupt:
        echo(f"fstsynth: interrupted; {interrupted_summary(written_before)}", err=True)
        return INTERRUPTED


def _argument_words(words: List[str]) -> List[str]:
    for n, word in enumerate(words, start=1):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes arrive as lone surrogates
            raise UserError(f"word argument {n}: not valid UTF-8") from None
    return words


def run_apply(
    model_dir: Path,
    words: Optional[List[str]] = None,
    source: Optional[str] = None,
    target: Optional[str] = None,
    check: bool = False,
    trace: bool = False,
    fmt: str = "plain",
    join: bool = False,
    on_input: Optional[Callable[[int], None]] = None,
    output_dir: Optional[str | Path] = None,
    scheduler: Optional[str] = None,
) -> int:
    """`fstsynth apply`'s body (see its help in `fstsynth.cli`): predictions on standard
    output; exit code 0, or 1 if `check` found words where the transducer and the
    interpreter differ. Errors are raised (`guarded` reports them). `on_input`: called
    with the bytes of standard input read so far, after each read. With `output_dir`,
    `words` are files of words, each predicted into a file there, on the Dask cluster
    at `scheduler` if given (`fstsynth.cluster.apply_files`)."""
    from fstsynth.model_file import load_model
    from fstsynth.stream import blocks, byte_applier, predict_batches

    if output_dir is not None or scheduler is not None:
        if output_dir is None:
            raise UserError("apply --scheduler: give --output-dir DIR and the files of words to read")
        if check or trace:
            raise UserError("apply --output-dir writes predictions only: run --check and --trace without it")
        from fstsynth.cluster import apply_files

        apply_files(model_dir, words or [], output_dir, scheduler, source, target, fmt, join)
        return 0
    if fmt not in APPLY_FORMATS:
        raise UserError(f"unknown --format {fmt!r}; choose one of {', '.join(APPLY_FORMATS)}")
    model = load_model(model_dir)
    pm = model.pair(source, target)
    alphabet = set(model.alphabet)
    mismatches = []
    unseen: Counter = Counter()
    sep = "" if join else " "
    # Read, predict and write a batch at a time (`fstsynth.stream`): memory stays
    # flat on any input, and output starts before the input ends.
    if words:
        batches: Iterable[List[str]] = [_argument_words(words)]
    else:
        # Plain blocks of many lines go from bytes to bytes (`stream.ByteApplier`);
        # the others are read as lines, one batch a block.
        fast = None
        if fmt == "plain" and not (trace or check):
            fast = byte_applier(pm, alphabet, sep, sys.stdout.encoding or "")
        batches = _stdin_words(blocks(sys.stdin.buffer, on_read=on_input), fast, unseen)
    for batch in predict_batches(pm, batches, _splitter(alphabet)):
        unseen.update(batch.unseen(alphabet))
        if not (trace or check):
            texts = batch.texts(sep)
            if fmt == "tsv":
                texts = [f"{line}\t{text}" for line, text in zip(batch.lines, texts)]
            echo("\n".join(texts))
            continue
        out = []
        for line, word, prediction in zip(batch.lines, batch.words, batch.predictions):
            out.append(_output_line(line, prediction, fmt, join))
            if trace:
                from fstsynth.spe import derivation

                mapped = pm.map_unknown(word)
                out.extend("  " + line for line in derivation(pm.program, mapped, model.features))
            if check:
                interpreted = pm.interpret(word, model.features)
                if interpreted != prediction:
                    mismatches.append((word, prediction, interpreted))
        echo("\n".join(out))
    _warn_unseen(unseen)
    if mismatches:
        for word, fst_out, interp in mismatches:
            echo(
                f"fstsynth: mismatch on {' '.join(word)!r}: transducer {' '.join(fst_out)!r}, "
                f"interpreter {' '.join(interp)!r}",
                err=True,
            )
        return MISMATCH
    return 0


def _splitter(alphabet: Iterable[str]) -> Callable[[str], tuple[str, ...]]:
    """`problem.WordSplitter` for `alphabet`, made when first needed (only unspaced
    words need it; importing `fstsynth.problem` costs start-up time)."""
    made: list[Callable[[str], tuple[str, ...]]] = []

    def split(text: str) -> tuple[str, ...]:
        if not made:
            from fstsynth.problem import WordSplitter

            made.append(WordSplitter(alphabet))
        return made[0](text)

    return split


def _stdin_words(
    read: Iterable["Block"], fast: "ByteApplier | None" = None, unseen: Counter | None = None,
    on_tab: Callable[[int], None] | None = None,
) -> Iterator[List[str]]:
    """The words of blocks of lines read from standard input: a line starting with `#`
    is a comment, as in a TSV (skipped); of a TSV line, `source<TAB>target`, the source
    is the word (a warning says so once: `evaluate` scores such lines; `on_tab`, if
    given, is told the first such line's number instead).

    `fast`: blocks it reads are printed here (and their unseen tokens counted in
    `unseen`), not yielded."""
    warned = False
    for block in read:
        if fast is not None:
            done = fast.apply(block)
            if done is not None:
                sys.stdout.flush()
                sys.stdout.buffer.write(done.data)
                if unseen is not None:
                    unseen.update(done.unseen)
                continue
        lines = block.lines()
        start = block.line
        text = "\n".join(lines)
        if "\t" not in text and "#" not in text:
            yield lines
            continue
        words = []
        for n, line in enumerate(lines, start=start + 1):
            if line.lstrip().startswith("#"):
                continue
            if "\t" in line:
                if not warned:
                    warned = True
                    if on_tab is not None:
                        on_tab(n)
                    else:
                        warn(tab_warning("<stdin>", n))
                line = line.split("\t", 1)[0]
            words.append(line)
        if words:
            yield words


def tab_warning(name: str, line: int) -> str:
    """The warning for the first `source<TAB>target` line of an input to `apply`."""
    return (
        f"{name}: line {line} has a tab: the word is its first field (the source); "
        "to score source<TAB>target lines use `fstsynth evaluate MODEL FILE`"
    )


def _output_line(word: str, prediction: Sequence[str], fmt: str, join: bool) -> str:
    """A prediction as printed: tokens separated by spaces (`--join`: run together),
    after the word as given and a tab with `--format tsv`."""
    text = ("" if join else " ").join(prediction)
    return f"{word}\t{text}" if fmt == "tsv" else text


def _warn_unseen(unseen: Counter) -> None:
    if unseen:
        warn(unseen_warning(unseen))


def unseen_warning(unseen: Counter) -> str:
    """The warning naming the tokens never seen in training (with the lines each is in)."""
    common = sorted(unseen.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    listed = ", ".join(f"{tok} ({n} word{'s' if n > 1 else ''})" for tok, n in common)
    more = f", and {len(unseen) - 20} more" if len(unseen) > 20 else ""
    return (
        f"tokens never seen in training: {listed}{more}; the model reads them as <unk> "
        "(README: Tokens the model has never seen)"
    )


def lean_apply(argv: Sequence[str]) -> int | None:
    """Run `fstsynth apply` without typer, when `argv` is a plain `apply` command line;
    its exit code, or None for anything else (then typer parses it, and prints help or
    usage errors).

    A plain command line: `apply`, then words, each an option of APPLY_OPTIONS (a flag,
    or followed by its value) or a positional word; the first positional word is the
    model directory and the rest are words. Any other form (`--help`, `--opt=value`,
    `--`, an unknown or incomplete option, no model directory, global options before
    `apply`) is left to typer. As typer's global callback would, this keeps the memory
    limit (`FSTSYNTH_MEMORY_LIMIT`; its watchdog started once `WATCH_BYTES` says) and
    sets up logging."""
    if not argv or argv[0] != "apply":
        return None
    by_word = {decl: option for option in APPLY_OPTIONS for decl in option.decls}
    kwargs: dict[str, object] = {option.name: option.default for option in APPLY_OPTIONS}
    rest = list(argv[1:])
    values: list[str] = []
    while rest:
        word = rest.pop(0)
        if word.startswith("-") and len(word) > 1:
            if word not in by_word:
                return None
            option = by_word[word]
            if option.flag:
                kwargs[option.name] = True
            elif not rest:
                return None
            else:
                kwargs[option.name] = rest.pop(0)
        else:
            values.append(word)
    if not values:
        return None
    import logging

    from fstsynth import guard

    logging.basicConfig(level=logging.WARNING, format="fstsynth: %(message)s", force=True)
    try:
        watchdog = _Watchdog(guard.limit_from_option(os.environ.get("FSTSYNTH_MEMORY_LIMIT")))
    except UserError as exc:
        return _error(str(exc))
    model_dir = Path(values[0])
    if _model_bytes(model_dir) >= WATCH_BYTES:
        watchdog.start()
    try:
        code = guarded(
            lambda: run_apply(model_dir, values[1:] or None, on_input=watchdog.input_read, **kwargs)  # type: ignore[arg-type]
        )
        sys.stdout.flush()
    finally:
        watchdog.stop()
    return code


#: `fstsynth apply` starts the memory watchdog (`fstsynth.guard`) once it has read this
#: many bytes of standard input, or before loading a model whose files are this large.
#: Until then its memory is bounded by a few megabytes of input and the model; and the
#: watchdog is a process of its own, whose start (~0.03 s on one core) would be a sixth
#: of a command on 100,000 words.
WATCH_BYTES = 1 << 22


def _model_bytes(directory: Path) -> int:
    """The size of the files loading the model in `directory` reads (0 where missing:
    loading reports that)."""
    from fstsynth.model_file import MODEL_JSON, MODEL_TABLES

    total = 0
    for name in (MODEL_JSON, MODEL_TABLES):
        try:
            total += (directory / name).stat().st_size
        except OSError:
            pass
    return total


class _Watchdog:
    """The memory watchdog of `apply` (`limit`: bytes, None for none), started on
    demand (`WATCH_BYTES`); with or without a limit it also makes a second Ctrl-C stop
    the command at once, as for every command."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.guard: "Guard | None" = None

    def start(self) -> None:
        if self.guard is None:
            from fstsynth import guard

            self.guard = guard.start(self.limit)

    def input_read(self, total: int) -> None:
        if total >= WATCH_BYTES:
            self.start()

    def stop(self) -> None:
        if self.guard is not None:
            self.guard.stop(wait=False)  # the process ends now: the watchdog ends on its own
