"""Interop on every dev benchmark problem: for each column pair, the training and test
source words give identical outputs in fstsynth, the OpenFst command-line tools (the
model's FAR), HFST and foma (the AT&T export) and foma (the rule-script export).

Models come from the session fixture `benchmark_models` (learned once per session).
Each tool runs a fixed number of processes per column pair (see fsttools.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import benchmark_problems, needs_benchmark
from exporters.export import export_model
from fsttools import foma_spaced_apply, hfst_apply, openfst_apply, require

TOOLS = (
    "farextract", "fstcompile", "fstconcat", "fstclosure", "fstcompose", "fstshortestpath",
    "hfst-txt2fst", "hfst-strings2fst", "hfst-compose", "hfst-project", "hfst-fst2strings",
    "foma", "flookup",
)


# Bigger transducers take the external tools minutes each (see the skip below). To run
# the check on them too, by hand: FSTSYNTH_INTEROP_MAX_ARCS=0 (no limit) python -m pytest
# tests/test_exports_benchmark.py -k NAME
MAX_ARCS = int(os.environ.get("FSTSYNTH_INTEROP_MAX_ARCS", 1_000_000)) or None


def _arcs(fst) -> int:
    return sum(fst.num_arcs(state) for state in fst.states())


@needs_benchmark
@pytest.mark.parametrize("name", [p.stem for p in benchmark_problems()] or ["(none)"])
def test_every_tool_gives_fstsynth_outputs(name: str, benchmark_models, tmp_path: Path) -> None:
    require(*TOOLS)
    problem, model = benchmark_models[name]
    sizes = {key: _arcs(pm.compiled.fst) for key, pm in model.pairs.items()}
    too_big = {key: n for key, n in sizes.items() if MAX_ARCS and n > MAX_ARCS}
    if too_big:
        pytest.skip(
            f"transducers over {MAX_ARCS:,} arcs ({too_big}) take HFST and foma minutes to "
            "read; outside the 10-minute suite (FSTSYNTH_INTEROP_MAX_ARCS=0 runs it)"
        )
    model_dir = tmp_path / "model"
    model.save(model_dir)
    checked = 0
    for (s, t), pm in sorted(model.pairs.items()):
        # Training rows and test rows alike: every row whose source cell is known.
        words = [row[s] for row in problem.cells if row[s] is not None]
        mapped = [pm.compiled.map_unknown(w) for w in words]
        expected = [pm.predict(w) for w in words]
        # Unseen tokens are put back by fstsynth after the transducer; the tools see the
        # transducer alone. The benchmark's alphabet covers its test words, so:
        assert mapped == words
        work = tmp_path / f"pair-{s}-{t}"
        work.mkdir()
        att = work / "model.att"
        script = work / "rules.foma"
        export_model(model, "att", att, s, t)
        export_model(model, "foma", script, s, t)
        tokens = sorted(pm.compiled.labels)
        outputs = {}
        for tool, apply in (
            ("OpenFst", lambda d: openfst_apply(model_dir / "model.far", f"pair-{s}-{t}", model_dir / "symbols.txt", words, d)),
            ("HFST", lambda d: hfst_apply(att, words, d)),
            ("foma (AT&T)", lambda d: foma_spaced_apply(f"read att {att}", tokens, words, d)),
            ("foma (rules)", lambda d: foma_spaced_apply(f"source {script}", tokens, words, d)),
        ):
            directory = work / tool.replace(" ", "_").replace("(", "").replace(")", "").replace("&", "")
            directory.mkdir()
            outputs[tool] = apply(directory)
        for tool, got in outputs.items():
            wrong = [(" ".join(w), e, g) for w, e, g in zip(words, expected, got) if e != g]
            assert not wrong, (
                f"{name} {model.columns[s]} -> {model.columns[t]}: {tool} differs from fstsynth "
                f"on {len(wrong)}/{len(words)} words, e.g. {wrong[:3]}"
            )
        checked += len(words)
    assert checked > 0
