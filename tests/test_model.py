from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import DATA, ROOT
from fstsynth.model import MODEL_FAR, MODEL_JSON, Error, learn_model, load_model
from fstsynth.problem import load_problem
from fstsynth.synthesis import Options


@pytest.fixture(scope="module")
def paradigm_model(tmp_path_factory):
    problem = load_problem(DATA / "paradigm.json")
    model = learn_model(problem, Options())
    directory = tmp_path_factory.mktemp("m") / "model"
    model.save(directory)
    return problem, model, directory


def test_save_load_round_trip(paradigm_model):
    problem, model, directory = paradigm_model
    loaded = load_model(directory)
    assert loaded.columns == model.columns
    assert sorted(loaded.pairs) == sorted(model.pairs)
    for key, pm in model.pairs.items():
        other = loaded.pairs[key]
        assert other.program == pm.program
        for word in problem.known_words(pm.source):
            assert other.predict(word) == pm.predict(word) == pm.interpret(word, model.features)


def test_model_json_is_versioned_and_readable(paradigm_model):
    _, model, directory = paradigm_model
    doc = json.loads((directory / MODEL_JSON).read_text(encoding="utf-8"))
    assert doc["format"] == "fstsynth-model" and doc["version"] == 2
    assert len(doc["pairs"]) == len(model.pairs)
    first = doc["pairs"][0]
    prefix = f"pair-{first['source']}-{first['target']}"
    assert first["far_keys"] == [f"{prefix}.pass{k}" for k in range(1, len(first["rules"]) + 1)]
    assert all(isinstance(rule, str) for p in first["rules"] for rule in p)
    assert (directory / "symbols.txt").is_file()


def test_far_opens_in_a_fresh_process_with_the_same_outputs(paradigm_model):
    problem, model, directory = paradigm_model
    pm = model.pair("stem", "in stem")
    words = problem.known_words(0)
    script = f"""
import pynini, sys
far = pynini.Far({str(directory / MODEL_FAR)!r}, mode="r")
fsts = {{}}
while not far.done():
    fsts[far.get_key()] = far.get_fst().copy()
    far.next()
passes = [fsts[k] for k in sorted(fsts) if k.startswith("pair-{pm.source}-{pm.target}.pass")]
syms = passes[0].input_symbols()
for line in sys.stdin:
    out = pynini.accep(line.strip(), token_type=syms)
    for fst in passes:  # each pass's output is the next one's input
        out = pynini.compose(out, fst).project("output").rmepsilon()
    print(pynini.shortestpath(out).string(token_type=syms))
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        input="\n".join(" ".join(w) for w in words),
        capture_output=True, text=True, check=True,
    )
    assert result.stdout.splitlines() == [" ".join(pm.predict(w)) for w in words]


def test_a_version_1_model_with_one_composed_transducer_still_loads(paradigm_model, tmp_path):
    """Version 1 kept each pair's passes composed, under `pair-S-T`."""
    import hashlib

    from exporters.far import write_far

    problem, model, _ = paradigm_model
    target = tmp_path / "old"
    model.save(target)
    write_far(target / MODEL_FAR, {f"pair-{s}-{t}": pm.compiled.fst for (s, t), pm in model.pairs.items()})
    doc = json.loads((target / MODEL_JSON).read_text(encoding="utf-8"))
    doc["version"] = 1
    doc["far"]["sha256"] = hashlib.sha256((target / MODEL_FAR).read_bytes()).hexdigest()
    for entry in doc["pairs"]:
        entry["far_key"] = f"pair-{entry['source']}-{entry['target']}"
        del entry["far_keys"]
    (target / MODEL_JSON).write_text(json.dumps(doc), encoding="utf-8")
    old = load_model(target)
    for key, pm in model.pairs.items():
        assert len(old.pairs[key].compiled.passes) == 1
        words = problem.known_words(pm.source)
        assert [old.pairs[key].predict(w) for w in words] == [pm.predict(w) for w in words]
        assert old.with_tables(old.pairs[key]).predict_many(words) == pm.predict_many(words)


def test_saving_replaces_an_existing_model_only_when_complete(paradigm_model, tmp_path):
    _, model, _ = paradigm_model
    target = tmp_path / "model"
    model.save(target)
    before = (target / MODEL_JSON).read_bytes()
    model.save(target)
    assert (target / MODEL_JSON).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_newer_version_and_damage_are_refused(paradigm_model, tmp_path):
    _, model, _ = paradigm_model
    target = tmp_path / "model"
    model.save(target)
    doc = json.loads((target / MODEL_JSON).read_text(encoding="utf-8"))
    doc["version"] = 99
    (target / MODEL_JSON).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Error, match="version 99 is newer"):
        load_model(target)
    model.save(target)
    far = target / MODEL_FAR
    far.write_bytes(far.read_bytes()[:100])
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
