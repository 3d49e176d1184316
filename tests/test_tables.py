"""The apply tables (`fstsynth.tables`, built by `fstsynth.bimachine`) against the
interpreter, on seeded random programs and words with unseen tokens, and on the
hand-written programs of every construct, through every walker (tests/backends.py):
one word at a time from Python lists, batches through numpy and through the compiled
walker, blocks of lines through both block walkers. Damaged arrays are refused."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from fstsynth.arrays import Array, read_npz, write_npz
from fstsynth.bimachine import program_tables, program_tokens
from fstsynth.dsl import IsToken, Pass, Program, ReplaceBy, Rule, TierIs, CopyReplace, Insert
from fstsynth.interpreter import run
from fstsynth.random_programs import ALPHABET, FEATURES, random_program, random_word
from fstsynth.table_format import compiled_fields
from fstsynth.tables import LONG_WORD, SMALL_BATCH, UNK, Error, Tables
from backends import BACKENDS, run_many
from programs import ALPHABET as EDGE_ALPHABET
from programs import FEATURES as EDGE_FEATURES
from programs import PROGRAMS
from walkers import batch_walkers, compiled_walker


def _mapped(tables: Tables, word):
    return tuple(t if t in tables.index else UNK for t in word)


def test_batches_of_every_size_and_long_words_take_the_same_path_results():
    rng = random.Random(7)
    program = random_program(rng, passes=2, max_rules=5, tiers=True)
    tables = program_tables(program, ALPHABET, FEATURES)
    words = [random_word(rng, ALPHABET, 0, 12) for _ in range(3 * SMALL_BATCH)]
    one_by_one = [tables.apply(w) for w in words]
    for size in (1, SMALL_BATCH - 1, SMALL_BATCH, 3 * SMALL_BATCH):
        assert tables.apply_many(words[:size]) == one_by_one[:size]
    long_word = random_word(rng, ALPHABET, LONG_WORD + 1, LONG_WORD + 1)
    mixed = words + [long_word] + words
    expected = one_by_one + [tables.apply(long_word)] + one_by_one
    assert tables.apply_many(mixed) == expected
    for walker in batch_walkers(tables):
        assert tables.apply_many(mixed, walker) == expected, walker
    assert tables.apply(long_word) == run(program, long_word, FEATURES)


def test_a_rule_reading_far_right_along_a_tier():
    # "a becomes e if no vowel follows, however far": a right tier, unbounded.
    program = Program((Pass((Rule((TierIs("vowel", None, 1),), ReplaceBy("a", ("e",))),)),))
    tables = program_tables(program, ALPHABET, FEATURES)
    word = ("a",) + ("t",) * 50 + ("a",) + ("t",) * 30
    assert tables.apply(word) == ("a",) + ("t",) * 50 + ("e",) + ("t",) * 30
    for walker in batch_walkers(tables):
        assert tables.apply_many([word] * SMALL_BATCH, walker) == [tables.apply(word)] * SMALL_BATCH


#: A prefix written at the start position, and a copy of the token to the left.
START_AND_COPY = Program((
    Pass((
        Rule((IsToken(None, 0), IsToken("b", 1)), Insert(("p",))),
        Rule((IsToken("t", -1),), CopyReplace(-1)),
    )),
))


def test_copies_and_prefixes_at_the_start_position():
    program = START_AND_COPY
    tables = program_tables(program, ALPHABET, FEATURES)
    for word in [(), ("b", "a"), ("t", "a", "t", "i"), ("b", "t", "zz")]:
        expected = run(program, _mapped(tables, word), FEATURES)
        assert tables.apply(word) == expected
        for walker in batch_walkers(tables):
            assert tables.apply_many([word] * SMALL_BATCH, walker)[0] == expected, walker


def test_saved_arrays_round_trip_and_damage_is_refused(tmp_path):
    program = random_program(random.Random(3), passes=2, max_rules=5, tiers=True)
    tables = program_tables(program, ALPHABET, FEATURES)
    arrays = tables.arrays("p.")
    with open(tmp_path / "t.npz", "wb") as handle:
        write_npz(handle, arrays)
    data = (tmp_path / "t.npz").read_bytes()
    read = read_npz(data)
    # numpy reads what the standard library reads, value for value.
    with np.load(tmp_path / "t.npz", allow_pickle=False) as npz:
        assert sorted(npz.files) == sorted(read)
        for key in npz.files:
            assert npz[key].tolist() == read[key].tolist() and npz[key].dtype.str == read[key].dtype
    again = Tables.from_arrays(tables.tokens, read, len(tables.passes), "p.")
    words = [random_word(random.Random(k), ALPHABET, 0, 8) for k in range(50)]
    assert again.apply_many(words) == tables.apply_many(words) == [tables.apply(w) for w in words]

    def broken(key: str, values: np.ndarray) -> dict[str, Array]:
        changed = dict(arrays)
        changed[key] = Array.of(values)
        return changed

    ranged = (".left_next", ".right_next", ".left_row", ".right_row", ".left_column", ".right_column",
              ".symbol_class", ".out_tag")
    for key in [k for k in arrays if k.endswith(ranged)]:
        with pytest.raises(Error):
            Tables.from_arrays(tables.tokens, broken(key, np.full(arrays[key].shape, 10**6, np.int32)), 2, "p.")
    key = next(k for k in arrays if k.endswith(".template_kind"))
    with pytest.raises(Error, match="template kinds"):
        Tables.from_arrays(tables.tokens, broken(key, np.full(arrays[key].shape, 7, np.int32)), 2, "p.")
    missing = {k: v for k, v in arrays.items() if not k.endswith(".right_mask")}
    with pytest.raises(Error, match="no array"):
        Tables.from_arrays(tables.tokens, missing, len(tables.passes), "p.")
    first = next(k for k in arrays if k.endswith(".left_mask"))
    with pytest.raises(Error, match="not <u8"):
        Tables.from_arrays(tables.tokens, broken(first, arrays[first].numpy().astype(np.int32)), 2, "p.")


def test_damage_is_refused_at_load_without_the_word_walkers_lists(monkeypatch):
    """Loading large tables checks every array's shape and range on the arrays
    themselves; the lists one word is walked with are made at the first such word, and
    never pickled (German spelling at 10,000 pairs: ~1 GB of lists). Small tables make
    them at load, their check."""
    import pickle

    import fstsynth.tables

    program = random_program(random.Random(3), passes=2, max_rules=5, tiers=True)
    tables = program_tables(program, ALPHABET, FEATURES)
    arrays = tables.arrays()
    assert "_checked" in vars(Tables.from_arrays(tables.tokens, arrays, len(tables.passes)))
    monkeypatch.setattr(fstsynth.tables, "LISTS_AT_LOAD", 0)  # these tables as large ones
    loaded = Tables.from_arrays(tables.tokens, arrays, len(tables.passes))
    assert "_checked" not in vars(loaded)
    word = random_word(random.Random(4), ALPHABET, 1, 8)
    assert loaded.apply(word) == run(program, _mapped(loaded, word), FEATURES)
    assert "_checked" in vars(loaded)
    again = pickle.loads(pickle.dumps(loaded))
    assert "_checked" not in vars(again) and again.apply(word) == loaded.apply(word)

    def refused(key: str, value: Array) -> None:
        with pytest.raises(Error, match="damaged tables"):
            Tables.from_arrays(tables.tokens, {**arrays, key: value}, len(tables.passes))

    for side in ("left", "right"):
        row, mask, nxt, mask_of = (arrays[f"pass1.{side}_{name}"].numpy()
                                   for name in ("row", "mask", "next", "mask_of"))
        refused(f"pass1.{side}_row", Array.of(row[:-1] if len(row) > 1 else np.zeros(2, np.int32)))
        refused(f"pass1.{side}_row", Array.of(np.full_like(row, nxt.shape[0])))
        refused(f"pass1.{side}_row", Array.of(np.full_like(row, -1)))
        refused(f"pass1.{side}_mask", Array.of(np.zeros((mask.shape[0], mask.shape[1] + 1), np.uint64)))
        refused(f"pass1.{side}_mask", Array.of(np.zeros((0, mask.shape[1]), np.uint64)))
        # A mask number per state, each of a mask the tables have.
        refused(f"pass1.{side}_mask_of", Array.of(np.append(mask_of, 0).astype(np.int32)))
        refused(f"pass1.{side}_mask_of", Array.of(np.full_like(mask_of, mask.shape[0])))
        refused(f"pass1.{side}_mask_of", Array.of(np.full_like(mask_of, -1)))
        refused(f"pass1.{side}_start", Array.of(np.array(len(row), np.int32)))
    classes = arrays["pass1.symbol_class"].numpy()
    refused("pass1.symbol_class", Array.of(classes[:, :-1]))
    refused("pass1.symbol_class", Array.of(np.full_like(classes, -1)))
    refused("pass2.out_tag", Array.of(np.full_like(arrays["pass2.out_tag"].numpy(), 1)))
    refused("pass1.start_mask", Array.of(np.zeros(2, np.uint64)))
    starts = arrays["pass1.template_start"].numpy().copy()
    starts[1], starts[2] = starts[2] + 1, starts[1]
    refused("pass1.template_start", Array.of(starts))


def test_the_steps_are_kept_as_distinct_rows_over_distinct_columns():
    """Each automaton's steps in compact form: no two rows and no two columns of
    `next` equal (else they would be one), and expanded, the full table."""
    compacted = 0
    for seed in range(6):
        program = random_program(random.Random(seed), passes=2, max_rules=6, tiers=True)
        for p in program_tables(program, ALPHABET, FEATURES).passes:
            t = p.numpy()
            for side in ("left", "right"):
                nxt, row, column = (getattr(t, f"{side}_{name}") for name in ("next", "row", "column"))
                assert len(np.unique(nxt, axis=0)) == nxt.shape[0]
                assert np.unique(nxt, axis=1).shape[1] == nxt.shape[1]
                assert sorted(set(row.tolist())) == list(range(nxt.shape[0]))
                assert sorted(set(column.tolist())) == list(range(nxt.shape[1]))
                full = t.left_table() if side == "left" else t.right_table()
                assert full.shape == (len(row), len(column))
                assert (full == nxt[row][:, column]).all()
                compacted += nxt.size < full.size
    assert compacted  # (some automaton of these programs is smaller compact)


@pytest.mark.parametrize("seed", range(8))
def test_the_numpy_walker_steps_through_the_compact_form_of_large_tables(seed, monkeypatch):
    """With every automaton counted as too large to expand, numpy's walker steps
    through the compact form and decides from the masks: what the reference gives."""
    from fstsynth import batch_walker

    monkeypatch.setattr(batch_walker, "EXPANDED_STEPS_MAX", 0)
    rng = random.Random(seed)
    program = random_program(rng, passes=1 + seed % 3, max_rules=5 + seed % 4 * 10, tiers=seed % 2 == 0)
    tables = program_tables(program, ALPHABET[:-2], FEATURES)
    words = [random_word(rng, ALPHABET, 0, 9) for _ in range(100)] + [()]
    assert all(b.compact is not None for b in tables._numpy[2])
    assert tables.apply_many(words, "numpy") == [tables.apply(w) for w in words], str(program)


def test_npz_reader_refuses_what_is_not_integer_arrays(tmp_path):
    import io

    from fstsynth.arrays import Error as ArraysError

    for values in (np.array(["a"]), np.array([1.5]), np.asfortranarray(np.arange(4, dtype=np.int32).reshape(2, 2))):
        buffer = io.BytesIO()
        np.savez(buffer, x=values)
        with pytest.raises(ArraysError):
            read_npz(buffer.getvalue())
    buffer = io.BytesIO()
    np.savez(buffer, x=np.array([object()], dtype=object))  # pickled: never read
    with pytest.raises(ArraysError):
        read_npz(buffer.getvalue())
    with pytest.raises(ArraysError):
        read_npz(b"PK\x03\x04 not a zip")


def test_the_token_alphabet_is_the_programs():
    program = Program((Pass((Rule((), ReplaceBy("a", ("q", "r"))),)),))
    assert program_tokens(program, ["a", "b"]) == {"a", "b", "q", "r", UNK}
    tables = program_tables(program, ["a", "b"], {})
    assert tables.apply(("a", "b", "zz")) == ("q", "r", "b", UNK)


def test_passes_without_context_are_one_lookup_per_symbol_in_batches():
    """A pass whose rules read nothing around the position (the batch walker looks its
    output up per symbol) and a later pass testing what it did."""
    from fstsynth.dsl import ReplaceAnyBy, TransformationApplied

    program = Program((
        Pass((Rule((), ReplaceBy("a", ("i",))), Rule((IsToken("k", 0),), ReplaceAnyBy(("t",))))),
        Pass((Rule((TransformationApplied(ReplaceBy("a", ("i",)), 0),), ReplaceAnyBy(("u",))),)),
    ))
    tables = program_tables(program, ALPHABET, FEATURES)
    words = [random_word(random.Random(k), ALPHABET + ("zz",), 0, 9) for k in range(3 * SMALL_BATCH)]
    expected = [run(program, _mapped(tables, w), FEATURES) for w in words]
    assert [tables.apply(w) for w in words] == expected
    for walker in batch_walkers(tables):
        assert tables.apply_many(words, walker) == expected, walker
    assert any("u" in e for e in expected) and any("t" in e for e in expected)


def test_tables_travel_to_worker_processes_after_a_batch():
    """`solve --jobs` sends models between processes: tables that ran a batch (and
    keep numpy views of it) pickle, and work on the other side."""
    import pickle

    tables = program_tables(random_program(random.Random(1), passes=2, tiers=True), ALPHABET, FEATURES)
    words = [random_word(random.Random(k), ALPHABET) for k in range(3 * SMALL_BATCH)]
    for walker in batch_walkers(tables):
        expected = tables.apply_many(words, walker)
        assert pickle.loads(pickle.dumps(tables)).apply_many(words, walker) == expected


def _walker(tables: Tables):
    """The compiled walker of `tables`, every token seen but UNK (or a skip: see walkers.py)."""
    return compiled_walker(tables, [t != UNK for t in tables.tokens])


@pytest.mark.parametrize("seed", range(64))
def test_the_compiled_walker_agrees_with_the_python_walker(seed):
    """`fstsynth._walk` on random programs and words (the empty word, unseen tokens,
    long words) prints what `Tables.apply` gives, and lists the lines with unseen tokens."""
    rng = random.Random(seed)
    # The last seeds: more than 64 rules in a pass (masks of several words).
    big = seed >= 60
    program = random_program(rng, passes=1 if big else 1 + seed % 3, max_rules=150 if big else 5 + seed % 4 * 10,
                             tiers=seed % 2 == 0)
    tables = program_tables(program, ALPHABET[:-2], FEATURES)
    assert not big or max(p.rules for p in tables.passes) > 64
    walker = _walker(tables)
    def unseen(word):
        return any(t not in tables.index or t == UNK for t in word)

    words = [random_word(rng, ALPHABET, 0, 9) for _ in range(200)]
    words += [random_word(rng, ALPHABET, 30, 300) for _ in range(5)]
    # A one-token line of an unseen token may be an unspaced word: the caller reads it.
    alone = [w for w in words if len(w) == 1 and unseen(w)]
    words = [w for w in words if not (len(w) == 1 and unseen(w))]
    expected = [tables.apply(w) for w in words]
    data = "".join(" ".join(w) + "\n" for w in words).encode()
    # The same walker stepping through the compact form (small tables are expanded).
    from fstsynth import _walk

    compact = _walk.Walker([t.encode("utf-8") for t in tables.tokens], tables.unk,
                           bytes(t != UNK for t in tables.tokens), compiled_fields(tables.passes), full_steps_max=0)
    for each in (walker, compact):
        for sep in (" ", "", "+-"):
            printed, fix = each.apply_block(data, sep.encode())
            assert printed.decode().split("\n")[:-1] == [sep.join(out) for out in expected], str(program)
            assert fix == [k for k, w in enumerate(words) if unseen(w)]
        for word in alone:
            assert each.apply_block(f"{word[0]}\n".encode(), b" ") is None


def test_a_compiled_walker_older_than_its_source_is_not_used(tmp_path, monkeypatch):
    """In a checkout where fstsynth/_walk.c changed after the module was built, the
    module is the old code: `Tables.compiled` gives None (numpy's walker is used)."""
    import os

    from fstsynth import tables as tables_module

    built, source = tmp_path / "_walk.so", tmp_path / "_walk.c"
    built.write_bytes(b"")
    source.write_text("")
    os.utime(built, (1_000_000, 1_000_000))
    os.utime(source, (2_000_000, 2_000_000))
    assert tables_module.built_before_its_source(str(built), str(source))
    assert not tables_module.built_before_its_source(str(source), str(built))
    assert not tables_module.built_before_its_source(str(built), str(tmp_path / "missing.c"))
    tables = program_tables(START_AND_COPY, ALPHABET, FEATURES)
    _walker(tables)  # built here (or a skip)
    from fstsynth import _walk

    os.utime(source, (os.stat(_walk.__file__).st_mtime + 10,) * 2)
    monkeypatch.setattr(tables_module, "_WALK_SOURCE", str(source))
    assert tables.compiled([True] * len(tables.tokens)) is None


def test_the_compiled_walker_refuses_damaged_tables_as_the_python_walker_does():
    program = START_AND_COPY
    tables = program_tables(program, ALPHABET, FEATURES)
    _walker(tables)
    arrays = tables.arrays()
    # A template that copies from two tokens to the left: reads outside a short word.
    value = arrays["pass1.template_value"].numpy().copy()
    kinds = arrays["pass1.template_kind"].numpy()
    value[kinds == 1] = -2
    damaged = Tables.from_arrays(tables.tokens, {**arrays, "pass1.template_value": Array.of(value)}, 1)
    walker = _walker(damaged)
    with pytest.raises(Error, match="reads outside the word"):
        damaged.apply(("t", "a"))
    for batch_walker in batch_walkers(damaged):
        with pytest.raises(Error, match="reads outside the word"):
            damaged.outputs([("t", "a")] * SMALL_BATCH, batch_walker)
    with pytest.raises(ValueError, match="damaged tables: a template reads outside the word"):
        walker.apply_block(b"t a\n", b" ")
    # Arrays of the wrong size are refused when the walker is made.
    from fstsynth import _walk

    sizes = ("rules", "tags", "classes", "lefts", "rights", "left_rows", "left_groups", "right_rows",
             "right_groups", "left_masks", "right_masks", "next_tags")
    passes = [{**{name: 1 for name in sizes}, "left_start": 0, "right_start": 0,
               **{name: b"" for name in ("symbol_class", "left_next", "left_row", "left_column", "right_next",
                                         "right_row", "right_column", "left_mask", "left_mask_of", "right_mask",
                                         "right_mask_of", "class_mask", "start_mask", "template_start",
                                         "template_kind", "template_value", "out_tag")}}]
    with pytest.raises(ValueError, match="damaged tables"):
        _walk.Walker([b"a", b"<unk>"], 1, b"\x01\x00", passes)
    # Steps, rows or columns out of range, in the compact form and expanded alike.
    tokens = [t.encode("utf-8") for t in tables.tokens]
    seen = b"\x01" * len(tokens)
    for name in ("left_next", "left_row", "left_column", "right_next", "right_row", "right_column"):
        fields = compiled_fields(tables.passes)
        assert fields is not None
        fields[0][name] = np.full(len(fields[0][name]) // 4, 10**6, "<i4").tobytes()
        with pytest.raises(ValueError, match="damaged tables: automaton"):
            _walk.Walker(tokens, tables.unk, seen, fields)
    # Mask numbers out of range, or no masks, whether the masks stay one each or are
    # expanded to a row per state.
    for name, value in [("left_mask_of", 10**6), ("right_mask_of", 10**6), ("left_mask_of", -1)]:
        for full_steps_max in (0, 1 << 18):
            fields = compiled_fields(tables.passes)
            assert fields is not None
            fields[0][name] = np.full(len(fields[0][name]) // 4, value, "<i4").tobytes()
            with pytest.raises(ValueError, match="damaged tables: masks"):
                _walk.Walker(tokens, tables.unk, seen, fields, full_steps_max=full_steps_max)
    for side in ("left", "right"):
        fields = compiled_fields(tables.passes)
        assert fields is not None
        fields[0][f"{side}_masks"], fields[0][f"{side}_mask"] = 0, b""
        with pytest.raises(ValueError, match="damaged tables: sizes"):
            _walk.Walker(tokens, tables.unk, seen, fields)


def _edge_words() -> list[tuple[str, ...]]:
    """Every word of up to three tokens over the edge programs' alphabet and an unseen token."""
    import itertools

    sample = (*EDGE_ALPHABET, "q")
    return [w for n in range(4) for w in itertools.product(sample, repeat=n)]


@functools.cache
def _edge_expected(name: str) -> list[tuple[str, ...]]:
    """The interpreter's outputs of edge program `name` on `_edge_words()`, once per
    program: each of its backends' tests compares with them (the interpreter is the
    slowest path but one, and the words are the same for every backend)."""
    return run_many("interpreter", PROGRAMS[name], _edge_words(), EDGE_FEATURES, EDGE_ALPHABET)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_edge_construct_programs_through_every_apply_path(name, backend):
    """Every hand-written program (every construct: copies and inserts at the start,
    deletions, tiers, passes testing earlier ones) on every word of up to three tokens
    over its alphabet and an unseen token, in one batch, through `backend`: what the
    interpreter gives."""
    program = PROGRAMS[name]
    words = _edge_words()
    expected = _edge_expected(name)
    got = run_many(backend, program, words, EDGE_FEATURES, EDGE_ALPHABET)
    wrong = [(w, g, e) for w, g, e in zip(words, got, expected) if g != e]
    assert not wrong, f"{len(wrong)} words differ, the first: {wrong[0]}"


def test_every_apply_path_is_a_backend():
    """tests/backends.py lists every walker the library has: the `WALKERS` of
    `Tables.outputs` and the `BLOCK_WALKERS` of the byte front end, and no module of
    the package defines a walk (a function `walk_*`, a method `apply_block`) or the C
    walker a method that is not one of those."""
    import ast
    import re
    from pathlib import Path

    from fstsynth.stream import BLOCK_WALKERS
    from fstsynth.tables import WALKERS

    listed = {"interpreter", "transducer"} | {f"tables-{w}" for w in WALKERS} | {f"bytes-{w}" for w in BLOCK_WALKERS}
    assert listed <= set(BACKENDS), listed - set(BACKENDS)
    package = Path(__file__).resolve().parent.parent / "fstsynth"
    found = set()
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and (node.name.startswith("walk") or node.name == "apply_block"):
                found.add(f"{path.stem}.{node.name}")
    found |= {f"_walk.{m}" for m in re.findall(r'\{"(\w+)", \(PyCFunction\)', (package / "_walk.c").read_text())}
    # Each walk and the path of BACKENDS it is.
    known = {
        "word_walker.walk_word": "tables-word",
        "batch_walker.walk_batch": "tables-numpy",
        "tables.walk_ids": "tables-numpy",  # (numpy's, on arrays: what the numpy block walker calls)
        "block_walker.apply_block": "bytes-numpy",
        "stream.apply_block": "bytes-compiled",  # (the block walker protocol)
        "_walk.walk_words": "tables-compiled",
        "_walk.apply_block": "bytes-compiled",
    }
    assert found == set(known), f"walks not in tests/backends.py: {sorted(found - set(known))}"
    assert set(known.values()) <= set(BACKENDS)


def test_the_compiled_batch_walk_refuses_bad_input():
    from array import array

    tables = program_tables(START_AND_COPY, ALPHABET, FEATURES)
    walker = _walker(tables)
    ids = array("i", [0, 1])
    assert walker.walk_words(ids, array("q", [0, 2]))[1] == array("q", [0, len(tables.apply(
        tuple(tables.tokens[i] for i in ids)))]).tobytes()
    for bad_ids, bounds in [(array("i", [0, 99]), [0, 2]), (ids, [0, 3]), (ids, [0, 2, 1]), (ids, [1, 2])]:
        with pytest.raises(ValueError, match="walk_words"):
            walker.walk_words(bad_ids, array("q", bounds))
