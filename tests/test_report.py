"""`fstsynth report`: one self-contained HTML page, checked as text and in a real browser
(headless Chromium, which skips saying so where it is not installed)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import DATA, plural_copy
from fstsynth.spe import rule_to_spe
from fstsynth.cli import app
from fstsynth.model_file import load_model, save_model
from fstsynth.problem import load_problem
from fstsynth.report import report_html

runner = CliRunner()


@pytest.fixture(scope="module")
def plural(plural_features_learned, tmp_path_factory) -> Path:
    """`learn data/plural.tsv --features data/plural-features.json` (run once per
    session, exit 0): this module's copy."""
    return plural_copy(plural_features_learned[0], tmp_path_factory, "report")


@pytest.fixture(scope="module")
def page(plural, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("page") / "report.html"
    result = runner.invoke(app, ["report", str(plural), "-o", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote {path}\n"
    return path


def test_the_page_shows_rules_where_they_fire_and_needs_nothing_else(plural, page):
    text = page.read_text(encoding="utf-8")
    model = load_model(plural)
    pm = model.pair()
    for rule in pm.program.passes[0].rules:
        assert rule_to_spe(rule).replace(">", "&gt;") in text  # SPE, escaped
        assert str(rule).replace('"', "&quot;") in text  # and the DSL form
    # The sibilant rule fires on b ʌ s, at the s, giving b ʌ s ɪ z.
    assert 'b ʌ <mark>s</mark><span class="arrow">→</span>b ʌ s ɪ z' in text
    assert "None: all 20 are reproduced." in text
    assert text.count("<svg") == 1  # the one pass, drawn inline
    # Self-contained: no script, no stylesheet or image to fetch, no address but the
    # SVG namespace names.
    assert "<script" not in text and "<link" not in text and "<img" not in text
    addresses = set(re.findall(r"https?://[^\s\"'<>]+", text))
    assert addresses <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, addresses


def test_training_pairs_the_model_gets_wrong_are_listed_with_their_rules(plural):
    model = load_model(plural)
    held_out = load_problem(DATA / "plural-test.tsv")  # as if these were the training rows
    text = report_html(model, rows=held_out.cells)
    assert "2 of 12:" in text
    assert '<td class="word">f ʊ t</td><td class="word bad">f ʊ t s</td><td class="word">f iː t</td>' in text


def test_the_page_counts_the_words_a_rule_fires_in_and_says_how_many_it_shows(plural):
    """`fires in 10 words` above 8 words said nothing of the other 2; a rule firing
    twice in a word counted it twice."""
    model = load_model(plural)
    rows = [(tuple(w), tuple(w) + ("z",)) for w in ("bɛl", "pɪg", "sʌn", "dɒg", "kæb")]
    text = report_html(model, rows=rows, max_examples=3)
    assert '<td class="count">5 words (the first 3 shown)</td>' in text
    voiced = text[text.index("∅ -&gt; z"):].split("</tr>", 1)[0]
    assert voiced.count('<div class="word">') == 3


def test_the_cross_validation_figure_says_what_it_is(plural):
    model = load_model(plural)
    pm = model.pair().replace(held_out=0.9)
    text = report_html(model, pairs=[pm])
    assert "training rows predicted in cross-validation (each by a program learned without it)" in text
    assert "held-out rows predicted" not in text


def test_report_of_a_model_without_training_words(plural, tmp_path):
    model = load_model(plural).replace(rows=())  # a Model is frozen
    bare = tmp_path / "bare"
    save_model(model, bare)
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(bare), "-o", str(out)]).exit_code == 0
    assert "The model keeps no training words" in out.read_text(encoding="utf-8")
    result = runner.invoke(app, ["report", str(bare), "-o", str(out), "--data", str(DATA / "plural.tsv")])
    assert result.exit_code == 0
    assert "None: all 20 are reproduced." in out.read_text(encoding="utf-8")
    result = runner.invoke(app, ["report", str(bare), "-o", str(out), "--data", str(DATA / "paradigm.json")])
    assert result.exit_code == 2 and "has 3 columns; the model was learned from 2" in result.stderr


def test_report_of_several_column_pairs_and_of_one(tmp_path):
    model_dir = tmp_path / "paradigm"
    learned = runner.invoke(app, ["learn", str(DATA / "paradigm.json"), "-o", str(model_dir), "--variant", "feature"])
    assert learned.exit_code == 0
    out = tmp_path / "all.html"
    assert runner.invoke(app, ["report", str(model_dir), "-o", str(out)]).exit_code == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("<h2 id=") == 6 and '<a href="#pair-0-2">stem → in stem</a>' in text
    one = tmp_path / "one.html"
    assert runner.invoke(app, ["report", str(model_dir), "-o", str(one), "-s", "stem", "-t", "in stem"]).exit_code == 0
    assert one.read_text(encoding="utf-8").count("<h2 id=") == 1


# ---------------------------------------------------------------- in a browser

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
    "--force-device-scale-factor=1",
]
WIDTH, HEIGHT = 1280, 1600


def _chromium() -> str:
    found = next((shutil.which(b) for b in ("chromium", "chromium-browser") if shutil.which(b)), None)
    if found is None:
        message = "needs chromium for the screenshot (Debian package chromium; scripts/install-test-deps installs it)"
        if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
            pytest.fail(f"FSTSYNTH_REQUIRE_TOOLS=1 but {message}")
        pytest.skip(message)
    return found


def _screenshot(chromium: str, page: Path, png: Path, profile: Path) -> None:
    proc = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
         f"--screenshot={png}", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0 and png.is_file(), proc.stderr[-2000:]


def _ink_rows(png: Path) -> tuple[int, int, list[bool]]:
    """Width, height, and for each row whether anything is drawn on it: a PNG row of
    one colour, filtered as encoders filter it (by the pixel to the left or above), is
    all zeros after its first pixel."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    idat = b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IDAT":
            idat += body
        chunks.setdefault(kind, body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and colour in (2, 6) and interlace == 0
    pixel = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = 1 + width * pixel
    rows = []
    for y in range(height):
        row = raw[y * stride : (y + 1) * stride]
        body = row[1 + pixel :] if row[0] != 0 else row[1:]
        rows.append(body.count(body[:1]) != len(body) if row[0] == 0 else any(body))
    return width, height, rows


def test_the_page_in_headless_chromium(page, tmp_path):
    """The report and its drawing render: the screenshot (which the developer looked at)
    has text over most of the page, and the figure alone draws a transducer."""
    chromium = _chromium()
    png = tmp_path / "report.png"
    _screenshot(chromium, page, png, tmp_path / "profile")
    width, height, rows = _ink_rows(png)
    assert (width, height) == (WIDTH, HEIGHT)
    assert sum(rows) > HEIGHT // 4, f"only {sum(rows)} of {HEIGHT} rows have anything drawn"
    # The drawing alone, on a page of its own: Chromium draws it (hundreds of rows).
    text = page.read_text(encoding="utf-8")
    figure = text[text.index("<figure>") : text.index("</figure>") + len("</figure>")]
    alone = tmp_path / "figure.html"
    alone.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{figure}</body></html>',
                     encoding="utf-8")
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body><figure><figcaption>x</figcaption></figure></body></html>")
    _screenshot(chromium, alone, tmp_path / "figure.png", tmp_path / "profile2")
    _screenshot(chromium, blank, tmp_path / "blank.png", tmp_path / "profile3")
    drawn = sum(_ink_rows(tmp_path / "figure.png")[2])
    empty = sum(_ink_rows(tmp_path / "blank.png")[2])
    assert drawn > empty + 150, (drawn, empty)
