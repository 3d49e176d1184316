from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from fstsynth.model import Error
from fstsynth.model_file import MODEL_FAR, MODEL_JSON, MODEL_TABLES, load_model, save_model


@pytest.fixture(scope="module")
def paradigm_model(tmp_path_factory, paradigm_default):
    problem, model = paradigm_default
    directory = tmp_path_factory.mktemp("m") / "model"
    save_model(model, directory)
    return problem, model, directory


def test_save_load_round_trip(paradigm_model):
    problem, model, directory = paradigm_model
    loaded = load_model(directory)
    assert loaded.columns == model.columns
    assert sorted(loaded.pairs) == sorted(model.pairs)
    for key, pm in model.pairs.items():
        other = loaded.pairs[key]
        assert other.program == pm.program
        words = problem.known_words(pm.source)
        expected = [pm.interpret(word, model.features) for word in words]
        assert [other.predict(w) for w in words] == [pm.predict(w) for w in words] == expected
        assert other.predict_many(words) == expected
        # The transducers read back from the FAR (the reference path) agree too.
        assert [other.transduce(w) for w in words] == expected


def test_model_json_is_versioned_and_readable(paradigm_model):
    _, model, directory = paradigm_model
    doc = json.loads((directory / MODEL_JSON).read_text(encoding="utf-8"))
    assert doc["format"] == "fstsynth-model" and doc["version"] == 7
    assert len(doc["pairs"]) == len(model.pairs)
    for name in (MODEL_FAR, MODEL_TABLES, "symbols.txt"):
        assert doc["files"][name] == hashlib.sha256((directory / name).read_bytes()).hexdigest()
    for first in doc["pairs"]:
        prefix = f"pair-{first['source']}-{first['target']}"
        passes = len(first["rules"])
        assert first["passes"] == passes and first["tables"] == f"{prefix}."
        # One or two stages per pass, in order.
        numbers = [key.removeprefix(prefix + ".pass").split(".") for key in first["stages"]]
        assert [int(k) for k, _ in numbers] == sorted(int(k) for k, _ in numbers)
        assert {int(k) for k, _ in numbers} == set(range(1, passes + 1))
        assert all(isinstance(rule, str) for p in first["rules"] for rule in p)
        assert "<unk>" in first["tokens"]
    arrays = np.load(directory / MODEL_TABLES, allow_pickle=False)
    assert all(arrays[key].dtype.kind in "iu" for key in arrays.files)


def test_far_opens_in_a_fresh_process_with_the_same_outputs(paradigm_model):
    problem, model, directory = paradigm_model
    pm = model.pair("stem", "in stem")
    doc = json.loads((directory / MODEL_JSON).read_text(encoding="utf-8"))
    keys = next(e["stages"] for e in doc["pairs"] if (e["source"], e["target"]) == (pm.source, pm.target))
    words = problem.known_words(0)
    script = f"""
import pynini, sys
far = pynini.Far({str(directory / MODEL_FAR)!r}, mode="r")
fsts = {{}}
while not far.done():
    fsts[far.get_key()] = far.get_fst().copy()
    far.next()
stages = [fsts[k] for k in {keys!r}]
syms = stages[0].input_symbols()
for line in sys.stdin:
    out = pynini.accep(line.strip(), token_type=syms)
    for fst in stages:  # each stage's output is the next one's input
        out = pynini.compose(out, fst).project("output").rmepsilon()
    print(pynini.shortestpath(out).string(token_type=syms))
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        input="\n".join(" ".join(w) for w in words),
        capture_output=True, text=True, check=True,
    )
    assert result.stdout.splitlines() == [" ".join(pm.predict(w)) for w in words]


def _old_model(model, target, version: int) -> None:
    """`model` saved as format version 1 (one composed transducer per pair, under
    `pair-S-T`) or 2 (one transducer per pass, `pair-S-T.passK`), without tables."""
    import pynini

    from fstsynth.far import write_far

    save_model(model, target)
    (target / MODEL_TABLES).unlink()
    fsts = {}
    for (s, t), pm in model.pairs.items():
        trans = pm.transducers()
        if version == 1:
            fsts[f"pair-{s}-{t}"] = trans.composed()
            continue
        for k in sorted(set(trans.stage_pass)):
            stages = [f for f, p in zip(trans.stages, trans.stage_pass) if p == k]
            fst = stages[0]
            for later in stages[1:]:
                fst = pynini.compose(fst, later)
            fsts[f"pair-{s}-{t}.pass{k}"] = fst.optimize()
    write_far(target / MODEL_FAR, fsts)
    doc = json.loads((target / MODEL_JSON).read_text(encoding="utf-8"))
    doc["version"] = version
    doc["far"] = {"file": MODEL_FAR, "sha256": hashlib.sha256((target / MODEL_FAR).read_bytes()).hexdigest()}
    del doc["files"]
    for entry in doc["pairs"]:
        key = f"pair-{entry['source']}-{entry['target']}"
        if version == 1:
            entry["far_key"] = key
        else:
            entry["far_keys"] = [f"{key}.pass{k}" for k in range(1, len(entry["rules"]) + 1)]
        for new in ("stages", "tables", "passes", "tokens"):
            del entry[new]
    (target / MODEL_JSON).write_text(json.dumps(doc), encoding="utf-8")


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_model_still_loads(paradigm_model, tmp_path, version):
    """Versions 1 and 2 kept no tables: they are compiled from the program on loading;
    the old transducers still serve exports and the reference path."""
    problem, model, _ = paradigm_model
    target = tmp_path / "old"
    _old_model(model, target, version)
    old = load_model(target)
    for key, pm in model.pairs.items():
        words = problem.known_words(pm.source)
        expected = [pm.predict(w) for w in words]
        assert [old.pairs[key].predict(w) for w in words] == expected
        assert old.pairs[key].predict_many(words) == expected
        assert [old.pairs[key].transduce(w) for w in words] == expected
        stages = old.pairs[key].transducers().stages
        assert len(stages) == (1 if version == 1 else len(pm.program.passes))


def test_an_older_model_saved_again_is_the_current_version(paradigm_model, tmp_path):
    problem, model, _ = paradigm_model
    _old_model(model, tmp_path / "old", 2)
    save_model(load_model(tmp_path / "old"), tmp_path / "new")
    doc = json.loads((tmp_path / "new" / MODEL_JSON).read_text(encoding="utf-8"))
    assert doc["version"] == 7
    again = load_model(tmp_path / "new")
    for key, pm in model.pairs.items():
        words = problem.known_words(pm.source)
        assert again.pairs[key].predict_many(words) == pm.predict_many(words)
        assert [again.pairs[key].transduce(w) for w in words] == pm.predict_many(words)


def test_saving_replaces_an_existing_model_only_when_complete(paradigm_model, tmp_path):
    _, model, _ = paradigm_model
    target = tmp_path / "model"
    save_model(model, target)
    before = (target / MODEL_JSON).read_bytes()
    save_model(model, target)
    assert (target / MODEL_JSON).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_newer_version_and_damage_are_refused(paradigm_model, tmp_path):
    _, model, _ = paradigm_model
    target = tmp_path / "model"
    save_model(model, target)
    doc = json.loads((target / MODEL_JSON).read_text(encoding="utf-8"))
    doc["version"] = 99
    (target / MODEL_JSON).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Error, match="version 99 is newer"):
        load_model(target)
    save_model(model, target)
    far = target / MODEL_FAR
    far.write_bytes(far.read_bytes()[:100])
    loaded = load_model(target)  # the archive is read only for the transducers
    with pytest.raises(Error, match="damaged"):
        loaded.pair("stem", "my stem").transducers()
    tables = target / MODEL_TABLES
    tables.write_bytes(tables.read_bytes()[:100])
    with pytest.raises(Error, match="damaged"):
        load_model(target)
    with pytest.raises(Error, match="no such model directory"):
        load_model(tmp_path / "nothing")


def test_choosing_a_pair(paradigm_model):
    _, model, _ = paradigm_model
    assert model.pair("stem", "my stem").target == 1
    assert model.pair(0, 2).target == 2
    with pytest.raises(Error, match="choose one with --source/--target"):
        model.pair()
    with pytest.raises(Error, match="no column named 'nope'"):
        model.pair("nope", None)


def test_model_records_are_immutable_and_replace_gives_a_changed_copy(tmp_path):
    from fstsynth.model import Model, PairModel

    model = Model(("a", "b"), {}, {}, ("x",), {}, name="m")
    with pytest.raises(AttributeError, match="immutable"):
        model.name = "other"  # type: ignore[misc]
    other = model.replace(name="other")
    assert (other.name, model.name, other.columns, other.rows) == ("other", "m", ("a", "b"), ())
    with pytest.raises(TypeError, match="no field nme"):
        model.replace(nme="x")
    assert "name='m'" in repr(model)
    assert PairModel.FIELDS[:8] == ("source", "target", "program_or_stored", "cost", "train_correct",
                                    "train_total", "tables", "stages")


def test_each_record_lists_exactly_its_annotated_fields():
    # FIELDS drives replace() and repr(): a field annotated but not listed would be
    # dropped by replace(), one listed but not annotated is a typo.
    from fstsynth import api, cluster
    from fstsynth.model import Model, PairModel

    for record in (PairModel, Model, api.Model, cluster.ShippedModel):
        annotated = [
            name
            for cls in reversed(record.__mro__)
            for name, kind in vars(cls).get("__annotations__", {}).items()
            if not str(kind).startswith("ClassVar")
        ]
        assert list(record.FIELDS) == annotated, record
