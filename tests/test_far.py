"""OpenFst FAR archives (`fstsynth.far`): written atomically in key order, read back
whole, and refused with one clear error when missing, damaged or not a FAR at all."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pynini
import pytest

from fstsynth.far import ChecksumError, Error, check_far, read_far, write_far


def _fsts() -> dict[str, pynini.Fst]:
    """Three small transducers under keys given out of sorted order."""
    return {
        "pair-1-0": pynini.cross("b", "bb").optimize(),
        "pair-0-1": pynini.cross("a", "ab").optimize(),
        "pair-0-2": pynini.accep("abc").optimize(),
    }


def _strings(fst: pynini.Fst) -> set[tuple[str, str]]:
    return {(i, o) for i, o, _ in fst.paths().items()}


def test_an_archive_round_trips_every_transducer_under_its_key(tmp_path: Path) -> None:
    path = tmp_path / "model.far"
    fsts = _fsts()
    write_far(path, fsts)
    assert check_far(path) == sorted(fsts)  # written in sorted order, every key kept
    back = read_far(path, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    assert sorted(back) == sorted(fsts)
    for key, fst in fsts.items():
        assert _strings(back[key]) == _strings(fst), key
    # Written beside the target under a temporary name and renamed: nothing else left.
    assert [p.name for p in tmp_path.iterdir()] == ["model.far"]


def test_a_missing_a_damaged_and_a_foreign_file_are_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.far"
    with pytest.raises(Error, match="FAR file not found"):
        read_far(path)
    write_far(path, _fsts())
    good = path.read_bytes()
    with pytest.raises(ChecksumError, match="checksum does not match"):
        read_far(path, sha256="0" * 64)
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(Error, match="FAR archive"):
        read_far(path)
    path.write_text("not an archive\n", encoding="utf-8")
    with pytest.raises(Error, match="not a FAR archive|not a readable FAR archive"):
        check_far(path)
