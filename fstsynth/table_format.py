"""The apply tables' format: a compiled program's passes as flat integer arrays, and
their validation.

Public API:
    UNK, CONSTANT, OFFSET, Error, PassTables, NumpyPass, CheckedPass
    lowest_rule(mask, rules), lowest_rules(np, masks, rules)
    pass_arrays(passes, prefix) -> dict[str, Array],
    passes_from_arrays(arrays, count, prefix, compact=True, mask_numbers=True)
    identity_steps(next_array), COMPACT_FIELDS, MASK_NUMBER_FIELDS, distinct_rows(a)
    compiled_fields(passes) -> list[dict]
    need(ok, what), checked_templates(t, tokens)  (the checks of loaded tables)

Each pass is a bimachine (`fstsynth.bimachine`): a right automaton read right to left,
a left automaton read left to right, and rule masks whose lowest common rule is the
decision at each position (`lowest_rule`); the decision's template writes the pass's
output. The walkers (`fstsynth.word_walker`, the reference; `fstsynth.batch_walker`,
numpy; `fstsynth._walk`, C) read these arrays; `fstsynth.tables.Tables` picks one.

A model's tables come from a file someone may have doctored or cut: `CheckedPass`
checks every array for shape and range before anything walks it (an error, not a crash
or a read out of bounds), and the C walker checks the same on its side.
"""

from __future__ import annotations

import array
import sys
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple, Sequence

from fstsynth.arrays import Array
from fstsynth.errors import UserError

if TYPE_CHECKING:
    import numpy as np

UNK = "<unk>"

#: Template item kinds (see `fstsynth.bimachine`): a constant token, or the token at an
#: offset from the position.
CONSTANT, OFFSET = 0, 1

#: Words longer than this are walked one at a time (a batch steps through positions
#: one array operation at a time, so one long word would cost an operation per token).
LONG_WORD = 4096


class Error(UserError):
    """The tables are damaged (a model file doctored or cut), or give no output."""


# (The records below are NamedTuples, not dataclasses: making a frozen dataclass of 14
# fields costs a millisecond or two of every `apply`'s start-up.)
class PassTables(NamedTuple):
    """One pass as arrays (`fstsynth.arrays.Array`: int32 unless said; masks uint64
    words, rule r in bit r % 64 of word r // 64; see `fstsynth.bimachine.PassMachine`,
    which documents every field).

    Each automaton's steps are kept compact: from state s on class c to
    `next[row[s], column[c]]`, `next` holding the distinct rows of steps over groups
    of classes the automaton reads alike (tables before format version 6 are one row
    per state and one column per class: `identity_steps`).

    Each automaton's masks are kept once: `{side}_mask` holds the distinct masks (rows
    of words), `{side}_mask_of[s]` the number of state s's (tables before format
    version 7 keep a row per state: they read as masks numbered 0..states-1)."""

    rules: int
    symbol_class: Array
    left_next: Array
    left_row: Array
    left_column: Array
    left_start: int
    left_mask: Array
    left_mask_of: Array
    right_next: Array
    right_row: Array
    right_column: Array
    right_start: int
    right_mask: Array
    right_mask_of: Array
    class_mask: Array
    start_mask: Array
    template_start: Array
    template_kind: Array
    template_value: Array
    out_tag: Array

    @property
    def tags(self) -> int:
        return self.symbol_class.shape[0] if self.symbol_class.shape else 0

    @property
    def lefts(self) -> int:
        """The left automaton's states."""
        return self.left_row.shape[0] if self.left_row.shape else 0

    @property
    def rights(self) -> int:
        return self.right_row.shape[0] if self.right_row.shape else 0

    def numpy(self) -> "NumpyPass":
        """The same arrays as numpy views."""
        return NumpyPass._make(value.numpy() if isinstance(value, Array) else value for value in self)


class NumpyPass(NamedTuple):
    """`PassTables` with numpy arrays (for the batch walker and the compiler)."""

    rules: int
    symbol_class: "np.ndarray"
    left_next: "np.ndarray"
    left_row: "np.ndarray"
    left_column: "np.ndarray"
    left_start: int
    left_mask: "np.ndarray"
    left_mask_of: "np.ndarray"
    right_next: "np.ndarray"
    right_row: "np.ndarray"
    right_column: "np.ndarray"
    right_start: int
    right_mask: "np.ndarray"
    right_mask_of: "np.ndarray"
    class_mask: "np.ndarray"
    start_mask: "np.ndarray"
    template_start: "np.ndarray"
    template_kind: "np.ndarray"
    template_value: "np.ndarray"
    out_tag: "np.ndarray"

    def left_table(self) -> "np.ndarray":
        """The left automaton as one table, `[state, class]` (lefts x classes: what the
        compact form avoids keeping; for the numpy walker and the transducers)."""
        return self.left_next[self.left_row][:, self.left_column]

    def right_table(self) -> "np.ndarray":
        return self.right_next[self.right_row][:, self.right_column]


#: Element type of each array field (the others are int32).
DTYPES = {"left_mask": "<u8", "right_mask": "<u8", "class_mask": "<u8", "start_mask": "<u8"}
SCALARS = ("rules", "left_start", "right_start")


def lowest_rule(mask: int, rules: int) -> int:
    """The decision of a position whose masks' common rules are the bits of `mask` (a
    Python int): the lowest one, or `rules` (no rule) if there is none. The numpy form
    is `lowest_rules`, the C one `decide` in fstsynth/_walk.c."""
    return (mask & -mask).bit_length() - 1 if mask else rules


def lowest_rules(np: Any, masks: "np.ndarray", rules: int) -> "np.ndarray":
    """`lowest_rule` of every row of uint64 words (any leading shape)."""
    flat = masks.reshape(-1, masks.shape[-1])
    out = np.full(flat.shape[0], rules, dtype=np.int64)
    open_ = np.ones(flat.shape[0], dtype=bool)
    one = np.uint64(1)
    for w in range(flat.shape[1]):
        word = flat[:, w]
        hit = open_ & (word != 0)
        if hit.any():
            x = word[hit]
            low = x & (~x + one)
            out[hit] = 64 * w + np.log2(low.astype(np.float64)).astype(np.int64)
            open_ &= ~hit
    return out.reshape(masks.shape[:-1])


def _mask_ints(a: Array, words: int) -> list[int]:
    """Each row of uint64 mask words as one Python int: word w holds bits 64w.., so
    a row's little-endian bytes are the int's (one C call a row)."""
    step, data, from_bytes = 8 * words, a.data, int.from_bytes
    return [from_bytes(data[k : k + step], "little") for k in range(0, len(data), step)]


def need(ok: bool, what: str) -> None:
    """Error("damaged tables: `what`") unless `ok`: the check of loaded tables."""
    if not ok:
        raise Error(f"damaged tables: {what}")


def checked_templates(t: PassTables, tokens: int) -> tuple[list[int], list[int], list[int]]:
    """A pass's output templates as lists (where each starts, then every part's kind
    and value); Error if they are not of the shapes, or in the ranges, a walker reads."""
    count = 2 * (t.rules + 1)
    starts = t.template_start.tolist()
    need(t.template_start.shape == (count + 1,) and starts[0] == 0, "templates")
    need(all(a <= b for a, b in zip(starts, starts[1:])), "templates")
    kinds, values = t.template_kind.tolist(), t.template_value.tolist()
    need(t.template_kind.shape == t.template_value.shape == (starts[-1],), "templates")
    need(not kinds or (min(kinds) >= CONSTANT and max(kinds) <= OFFSET), "template kinds")
    need(all(0 <= v < tokens for k, v in zip(kinds, values) if k == CONSTANT), "template tokens")
    return starts, kinds, values


class CheckedPass:
    """A pass's tables as Python lists and ints, checked for shape and range (what the
    reference walker reads: `fstsynth.word_walker.walk_word`). Masks are Python ints."""

    left_next: list[list[int]]  # per state, its (shared) row: state = left_next[state][left_column[c]]
    right_next: list[list[int]]
    left_column: list[int]
    right_column: list[int]
    left_mask: list[int]  # per state, its (shared) mask
    right_mask: list[int]
    left_start: int
    right_start: int

    def __init__(self, t: PassTables, tokens: int, next_tags: int) -> None:
        self.rules = t.rules
        words = (t.rules + 63) // 64 or 1

        def rows(a: Array, width: int, what: str, bound: int | None = None) -> list[list[int]]:
            """The rows of a 2-d array `width` wide (values below `bound`, if given)."""
            need(len(a.shape) == 2 and a.shape[1] == width and a.shape[0] >= 1, what)
            flat = a.flat()
            if bound is not None:
                need(min(flat) >= 0 and max(flat) < bound, what)
            return [flat[k : k + width] for k in range(0, len(flat), width)]

        def vector(a: Array, length: int, what: str, bound: int) -> list[int]:
            """The values of a 1-d array `length` long, each below `bound`."""
            need(a.shape == (length,), what)
            flat = a.flat()
            need(min(flat) >= 0 and max(flat) < bound, what)
            return flat

        classes = t.class_mask.shape[0] if len(t.class_mask.shape) == 2 else 0
        need(classes >= 1, "class masks")
        need(len(t.class_mask.shape) == 2 and t.class_mask.shape[1] == words, "class masks")
        self.class_mask = _mask_ints(t.class_mask, words)
        self.symbol_class = rows(t.symbol_class, tokens, "symbol classes", classes)
        for name in ("left", "right"):
            nxt_array, mask_array = getattr(t, f"{name}_next"), getattr(t, f"{name}_mask")
            row_array, column_array = getattr(t, f"{name}_row"), getattr(t, f"{name}_column")
            states = row_array.shape[0] if len(row_array.shape) == 1 else 0
            groups = nxt_array.shape[1] if len(nxt_array.shape) == 2 else 0
            need(states >= 1 and groups >= 1, f"{name} automaton")
            nxt = rows(nxt_array, groups, f"{name} automaton", states)
            row_of = vector(row_array, states, f"{name} automaton", len(nxt))
            column_of = vector(column_array, classes, f"{name} automaton", groups)
            need(len(mask_array.shape) == 2 and mask_array.shape[1] == words and mask_array.shape[0] >= 1,
                 f"{name} masks")
            masks = _mask_ints(mask_array, words)
            mask_of = vector(getattr(t, f"{name}_mask_of"), states, f"{name} masks", len(masks))
            start = getattr(t, f"{name}_start")
            need(0 <= start < states, f"{name} states")
            # One list per state, the rows it shares: a step is two list lookups, as
            # with a full table, but only the distinct rows are made. The same for the
            # masks: per state a reference to its distinct mask's int (a lookup a
            # position, as when the tables kept a row per state; no int per state).
            setattr(self, f"{name}_next", [nxt[r] for r in row_of])
            setattr(self, f"{name}_column", column_of)
            setattr(self, f"{name}_mask", [masks[k] for k in mask_of])
            setattr(self, f"{name}_start", start)
        need(t.start_mask.shape == (words,), "start mask")
        self.start_mask = _mask_ints(t.start_mask, words)[0]
        self.looks_right = len(self.right_next) > 1
        starts, kinds, values = checked_templates(t, tokens)
        #: Template d (d <= rules: at a position; rules + 1 + d: at the start position).
        self.templates = [tuple(zip(kinds[a:b], values[a:b])) for a, b in zip(starts, starts[1:])]
        self.out_tag = t.out_tag.flat()
        tags_ok = min(self.out_tag) >= 0 and max(self.out_tag) < next_tags
        need(t.out_tag.shape == (t.rules + 1,) and tags_ok, "output tags")


def pass_arrays(passes: Sequence[PassTables], prefix: str = "") -> dict[str, Array]:
    """Every pass's arrays, named `{prefix}pass{k}.{field}` (k from 1); the numbers
    (rules, start states) as 0-d int32 arrays."""
    out = {}
    for k, p in enumerate(passes, start=1):
        for name, value in p._asdict().items():
            if not isinstance(value, Array):
                value = Array("<i4", (), int(value).to_bytes(4, "little", signed=True))
            out[f"{prefix}pass{k}.{name}"] = value
    return out


#: The fields tables before format version 6 lack: their steps are one row per state
#: and one column per class (`identity_steps`).
COMPACT_FIELDS = ("left_row", "left_column", "right_row", "right_column")
#: The fields tables before format version 7 lack: their masks are one row per state
#: (`distinct_rows` makes the distinct masks and numbers of them at load).
MASK_NUMBER_FIELDS = ("left_mask_of", "right_mask_of")


def distinct_rows(a: Array) -> tuple[Array, Array]:
    """The distinct rows of a 2-d array (in order of first appearance), and the number
    of each row among them (int32): an old model's masks of one row per state as the
    masks kept once, so that it walks, and saves again, as a model of this version. A
    dictionary of the rows' bytes, without numpy (loading does not import it); an
    array not 2-d is left as it is, numbered as rows 0..n-1, for the checks to refuse."""
    if len(a.shape) != 2 or a.size == 0:
        return a, Array.range(a.shape[0] if a.shape else 0)
    rows, step, data = a.shape[0], len(a.data) // a.shape[0], a.data
    number: dict[bytes, int] = {}
    of = array.array("i", (number.setdefault(data[k : k + step], len(number)) for k in range(0, len(data), step)))
    if sys.byteorder != "little":
        of.byteswap()
    return Array(a.dtype, (len(number), a.shape[1]), b"".join(number)), Array("<i4", (rows,), of.tobytes())


def identity_steps(next_array: Array) -> tuple[Array, Array]:
    """The row of each state and the column of each class of a full step table
    (`[state, class]`, as before format version 6): each its own."""
    states, classes = next_array.shape if len(next_array.shape) == 2 else (0, 0)
    return Array.range(states), Array.range(classes)


def passes_from_arrays(
    arrays: Mapping[str, Array], count: int, prefix: str = "", compact: bool = True, mask_numbers: bool = True
) -> list[PassTables]:
    """The passes saved by `pass_arrays` (`count` of them; `compact`: with the steps'
    rows and columns, format version 6 on; `mask_numbers`: with the distinct masks and
    a mask number per state, version 7 on, the older rows per state made so at load:
    `distinct_rows`); Error if an array is missing or of the
    wrong type or shape (ranges: `CheckedPass`)."""
    passes = []
    absent = (() if compact else COMPACT_FIELDS) + (() if mask_numbers else MASK_NUMBER_FIELDS)
    for k in range(1, count + 1):
        values: dict[str, Any] = {}
        for name in PassTables._fields:
            if name in absent:
                continue
            key = f"{prefix}pass{k}.{name}"
            if key not in arrays:
                raise Error(f"damaged tables: no array {key!r}")
            value = arrays[key]
            dtype = DTYPES.get(name, "<i4")
            if value.dtype != dtype:
                raise Error(f"damaged tables: {key!r} is {value.dtype}, not {dtype}")
            if name in SCALARS:
                if value.shape != ():
                    raise Error(f"damaged tables: {key!r} is not a number")
                values[name] = value.tolist()
            else:
                values[name] = value
        if not compact:
            for side in ("left", "right"):
                values[f"{side}_row"], values[f"{side}_column"] = identity_steps(values[f"{side}_next"])
        if not mask_numbers:
            for side in ("left", "right"):
                values[f"{side}_mask"], values[f"{side}_mask_of"] = distinct_rows(values[f"{side}_mask"])
        passes.append(PassTables(**values))
    return passes


def _step_sizes(side: str, next_array: Array) -> dict[str, int]:
    rows, groups = next_array.shape if len(next_array.shape) == 2 else (0, 0)
    return {f"{side}_rows": rows, f"{side}_groups": groups}


def _rows(a: Array) -> int:
    """The rows of a 2-d array (0 if it is not 2-d: the C walker refuses it)."""
    return a.shape[0] if len(a.shape) == 2 else 0


def compiled_fields(passes: Sequence[PassTables]) -> list[dict[str, int | bytes]] | None:
    """The passes as the C walker's constructor reads them (`fstsynth._walk.Walker`:
    the little-endian bytes of every array, the numbers and sizes), or None if an array
    is not of its type (the C walker reads int32 and uint64 as they are)."""
    out: list[dict[str, int | bytes]] = []
    for k, p in enumerate(passes):
        arrays = {name: value for name, value in p._asdict().items() if name not in SCALARS}
        if any(a.dtype != DTYPES.get(name, "<i4") for name, a in arrays.items()):
            return None
        out.append({
            **{name: a.data for name, a in arrays.items()},
            "rules": p.rules, "left_start": p.left_start, "right_start": p.right_start,
            "tags": p.tags, "classes": p.class_mask.shape[0], "lefts": p.lefts, "rights": p.rights,
            **_step_sizes("left", p.left_next), **_step_sizes("right", p.right_next),
            "left_masks": _rows(p.left_mask), "right_masks": _rows(p.right_mask),
            "next_tags": passes[k + 1].tags if k + 1 < len(passes) else 1,
        })
    return out
