"""A model as one HTML page to look at and pass around (`fstsynth report`).

Public API:
    report_html(model, pairs=None, rows=None, max_examples=8) -> str
    write_report(model, path, pairs=None, rows=None) -> None
    grouped_dot(fst, title="") -> str   (DOT with the arcs between two states as one edge)
    MAX_DRAWN_STATES

For each column pair: its figures, the rules pass by pass in SPE and DSL notation, for
each rule the training words where it fires (the word before and after the pass, the
segment it fired at marked), the training pairs the model gets wrong (with the rules
that fired), and for each pass of at most `MAX_DRAWN_STATES` states its transducer drawn
as SVG by Graphviz's `dot` (a note says so where it is missing, the pass is larger, or
the program's transducers were too large to build: `PairModel.unbuilt`).

The page is self-contained: its style is inline, the drawings are inline SVG, and it
has no script and loads nothing (it opens the same offline). The training words are the
rows the model keeps (`Model.rows`), or `rows` given (a problem read again, for a model
saved without them).
"""

from __future__ import annotations

import html
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from fstsynth.evaluation import Firing, derive
from fstsynth.fileio import atomic_write_text
from fstsynth.learning import COMPILED
from fstsynth.progress import report
from fstsynth.types import Word

if TYPE_CHECKING:
    import pynini

    from fstsynth.model import Model, PairModel

#: Passes with more states are not drawn: the drawing would be unreadable (and slow).
MAX_DRAWN_STATES = 60
#: A pass whose stages compose into at most this many states is composed to be drawn.
MAX_COMPOSED_STATES = 200_000
#: Training words shown under each rule (the count says how many there are).
MAX_EXAMPLES = 8
#: Wrong training pairs listed per column pair.
MAX_WRONG = 200

EMPTY = "∅"

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2em; border-bottom: 2px solid #ccd; }
h3 { margin: 1.4em 0 .4em; }
.muted { color: #667; } .figures td { padding: 0 1.2em 0 0; }
table.rules { border-collapse: collapse; width: 100%; margin: .4em 0 1em; }
table.rules > tbody > tr > td, table.rules > thead > tr > th { border-top: 1px solid #dde;
  padding: .35em .5em; vertical-align: top; text-align: left; }
.n { width: 2.5em; color: #667; } .spe { font: 15px/1.4 ui-monospace, monospace; }
.dsl { font: 12px/1.3 ui-monospace, monospace; color: #556; word-break: break-all; }
.word { font: 14px ui-monospace, monospace; white-space: nowrap; }
mark { background: #ffe08a; padding: 0 .1em; border-radius: 2px; }
.arrow { color: #889; padding: 0 .4em; } .count { color: #556; white-space: nowrap; }
.examples div { margin: .1em 0; } .wrong td { padding: .2em .8em .2em 0; vertical-align: top; }
.bad { color: #a01c1c; } .good { color: #19692c; }
figure { margin: 1em 0; overflow-x: auto; } figure svg { max-width: 100%; height: auto; }
figcaption { color: #667; font-size: .9em; }
"""


@dataclass(frozen=True)
class _Example:
    """A training word as one pass saw it, and where a rule fired in it."""

    before: Word
    after: Word
    firing: Firing


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _word(tokens: Sequence[str]) -> str:
    return _esc(" ".join(tokens)) if tokens else EMPTY


def _marked(tokens: Sequence[str], position: int) -> str:
    """A word with the token at `position` (1-based; 0: the start) marked."""
    parts = [_esc(tok) for tok in tokens]
    if 1 <= position <= len(parts):
        parts[position - 1] = f"<mark>{parts[position - 1]}</mark>"
    elif position == 0:
        parts.insert(0, "<mark>#</mark>")
    return " ".join(parts) if parts else EMPTY


def _dot_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def grouped_dot(fst: "pynini.Fst", title: str = "") -> str:
    """Graphviz DOT of a transducer with the arcs between two states drawn as one edge:
    tokens kept (`a:a`) listed as `a b c`, the others as `x:y` (`∅`: nothing; not `ε`,
    which reads as the vowel `ɛ`); an arrow from a dot points at the start state. A pass
    has one arc per token of the alphabet on most transitions: drawn one by one (as
    `export --format dot` does, for exactness) they bury its shape."""
    isyms, osyms = fst.input_symbols(), fst.output_symbols()
    lines = [
        "digraph FST {", "rankdir = LR;", 'node [shape = circle, fontname = "sans-serif", fontsize = 11];',
        'edge [fontname = "sans-serif", fontsize = 10];',
        f'label = "{_dot_label(title)}";' if title else "",
    ]
    import pynini

    zero = pynini.Weight.zero(fst.weight_type())
    for state in fst.states():
        final = fst.final(state) != zero
        shape = "doublecircle" if final else "circle"
        lines.append(f'{state} [label = "{state}", shape = {shape}];')
        if state == fst.start():
            lines.append(f'start [shape = point, width = 0.08]; start -> {state};')
        groups: dict[int, tuple[list[str], list[str]]] = {}
        for arc in fst.arcs(state):
            kept, changed = groups.setdefault(arc.nextstate, ([], []))
            i = isyms.find(arc.ilabel) if arc.ilabel else EMPTY
            o = osyms.find(arc.olabel) if arc.olabel else EMPTY
            if i == o:
                kept.append(i)
            else:
                changed.append(f"{i}:{o}")
        for target, (kept, changed) in groups.items():
            words = [*changed, *kept]
            rows = [_dot_label(" ".join(words[n : n + 8])) for n in range(0, len(words), 8)]
            label = "\\n".join(rows)  # DOT's line break inside a label
            lines.append(f'{state} -> {target} [label = "{label}"];')
    lines.append("}")
    return "\n".join(line for line in lines if line)


def _svg(pm: "PairModel", k: int) -> str:
    """Pass k's transducer drawn as inline SVG, or a note saying why it is not."""
    from fstsynth.drawing import Error as DrawingError
    from fstsynth.drawing import to_svg

    if pm.unbuilt is not None:
        return f'<p class="muted">No transducer: {_esc(pm.unbuilt)}.</p>'
    transducers = pm.transducers()
    if transducers.pass_states_bound(k + 1) > MAX_COMPOSED_STATES:
        # Composing the pass's stages could take long; no drawing this large is read.
        return f'<p class="muted">The transducer of pass {k + 1} is too large to draw here.</p>'
    fst = transducers.pass_transducer(k + 1)
    states = fst.num_states()
    if states > MAX_DRAWN_STATES:
        return f'<p class="muted">The transducer of pass {k + 1} has {states} states: too many to draw here.</p>'
    if shutil.which("dot") is None:
        return '<p class="muted">No drawing: Graphviz\'s <code>dot</code> is not installed.</p>'
    try:
        svg = to_svg(grouped_dot(fst)).decode("utf-8")
    except DrawingError as exc:
        return f'<p class="muted">No drawing: {_esc(str(exc))}</p>'
    # Inline: no XML prolog or doctype (which names a DTD by URL), no comments.
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return (
        f"<figure>{svg}<figcaption>Pass {k + 1} as a transducer ({states} states; double circle: "
        "final). An arc reads input:output; a token alone is kept as it is; ∅ is nothing.</figcaption></figure>"
    )


def _pair_section(model: "Model", pm: "PairModel", pairs: list[tuple[Word, Word]], max_examples: int) -> str:
    from fstsynth.spe import rule_to_spe

    name = f"{model.columns[pm.source]} → {model.columns[pm.target]}"
    out = [f'<h2 id="pair-{pm.source}-{pm.target}">{_esc(name)}</h2>']
    predictions = pm.predict_many([s for s, _ in pairs]) if pairs else []
    wrong = [(s, p, t) for (s, t), p in zip(pairs, predictions) if p != t]
    fired: dict[tuple[int, int], list[_Example]] = defaultdict(list)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    derivations = {}
    for n, (source, _) in enumerate(pairs):
        if n % 100 == 0:
            report("tracing training words", n, len(pairs), name)
        forms, found = derivations[source] = derive(pm, source)
        in_this_word: set[tuple[int, int]] = set()
        for f in found:
            key = (f.pass_number, f.rule_number)
            if key in in_this_word:
                continue  # words, not firings: a rule firing twice in a word counts it once
            in_this_word.add(key)
            counts[key] += 1
            if len(fired[key]) < max_examples:
                fired[key].append(_Example(forms[f.pass_number - 1], forms[f.pass_number], f))
    # Written rules (`fstsynth compile`): its rows are words it was compiled for, not learned from.
    compiled = pm.variant == COMPILED
    held_out = (
        "" if pm.held_out is None
        else "<tr><td>training rows predicted in cross-validation (each by a program learned "
        f"without it)</td><td>{100 * pm.held_out:.1f}%</td></tr>"
    )
    out.append(
        '<table class="figures">'
        f"<tr><td>rules</td><td>{pm.program.rule_count} in {len(pm.program.passes)} pass(es)</td></tr>"
        f"<tr><td>{'rows' if compiled else 'training pairs'} reproduced</td>"
        f"<td>{pm.train_correct}/{pm.train_total}</td></tr>"
        f"{held_out}"
        + (f"<tr><td>variant</td><td>{_esc(pm.variant)}</td></tr>" if pm.variant else "")
        + "</table>"
    )
    if not pairs and compiled:
        out.append('<p class="muted">The model keeps no words: it was compiled from written rules without '
                   "<code>--data</code>. Give words with <code>--data</code> to see the rules at work.</p>")
    elif not pairs:
        out.append('<p class="muted">The model keeps no training words (it was saved without them): '
                   "give the training file with <code>--data</code> to see the rules at work.</p>")
    if not pm.program.passes:
        out.append("<p>No rules: every token is kept.</p>")
    for k, pass_ in enumerate(pm.program.passes):
        out.append(f"<h3>Pass {k + 1}</h3>")
        out.append(
            '<p class="muted">At each position the first rule that applies fires, reading the '
            "pass's input; where none does, the token is kept. Under each rule: training words "
            "where it fires, before and after the pass, the segment it fired at marked.</p>"
        )
        out.append('<table class="rules"><thead><tr><th class="n">#</th><th>rule</th>'
                   "<th>fires in</th><th>training words</th></tr></thead><tbody>")
        for r, rule in enumerate(pass_.rules, start=1):
            examples = fired.get((k + 1, r), [])
            shown = "".join(
                f'<div class="word">{_marked(e.before, e.firing.position)}<span class="arrow">→</span>'
                f"{_word(e.after)}</div>"
                for e in examples
            )
            count = counts.get((k + 1, r), 0)
            first = f" (the first {len(examples)} shown)" if count > len(examples) else ""
            out.append(
                f'<tr><td class="n">{r}</td><td><div class="spe">{_esc(rule_to_spe(rule))}</div>'
                f'<div class="dsl">{_esc(str(rule))}</div></td>'
                f'<td class="count">{count} word{"s" if count != 1 else ""}{first}</td>'
                f'<td class="examples">{shown}</td></tr>'
            )
        out.append("</tbody></table>")
        out.append(_svg(pm, k))
    out.append("<h3>Training pairs the model gets wrong</h3>")
    if not pairs:
        out.append('<p class="muted">(no training words kept)</p>')
    elif not wrong:
        out.append(f'<p class="good">None: all {len(pairs)} are reproduced.</p>')
    else:
        first = f" (the first {MAX_WRONG})" if len(wrong) > MAX_WRONG else ""
        out.append(f"<p>{len(wrong)} of {len(pairs)}{first}:</p>")
        out.append('<table class="wrong"><tr><th>word</th><th>predicted</th><th>expected</th>'
                   "<th>rules that fired</th></tr>")
        for source, prediction, target in wrong[:MAX_WRONG]:
            rules = "<br>".join(_esc(str(f)) for f in derivations[source][1]) or "(none)"
            out.append(
                f'<tr><td class="word">{_word(source)}</td><td class="word bad">{_word(prediction)}</td>'
                f'<td class="word">{_word(target)}</td><td class="dsl">{rules}</td></tr>'
            )
        out.append("</table>")
    return "\n".join(out)


def report_html(
    model: "Model",
    pairs: Iterable["PairModel"] | None = None,
    rows: Sequence[Sequence[Word | None]] | None = None,
    max_examples: int = MAX_EXAMPLES,
) -> str:
    """The report page for the chosen column pairs (default: all), as HTML text."""
    chosen = list(pairs) if pairs is not None else [pm for _, pm in sorted(model.pairs.items())]
    table = model.rows if rows is None else tuple(tuple(r) for r in rows)
    title = f"fstsynth model {model.name}".strip()
    sections = []
    for pm in chosen:
        training = [
            (row[pm.source], row[pm.target])
            for row in table
            if row[pm.source] is not None and row[pm.target] is not None
        ]
        sections.append(_pair_section(model, pm, training, max_examples))  # type: ignore[arg-type]
    contents = "".join(
        f'<li><a href="#pair-{pm.source}-{pm.target}">{_esc(model.columns[pm.source])} → '
        f"{_esc(model.columns[pm.target])}</a> ({pm.program.rule_count} rules)</li>"
        for pm in chosen
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_esc(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_esc(title)}</h1>"
        f'<p class="muted">{len(model.columns)} columns, {len(model.alphabet)} tokens; '
        "rules in SPE notation (a reading aid) above their exact DSL form.</p>"
        + (f"<ul>{contents}</ul>" if len(chosen) > 1 else "")
        + "\n".join(sections)
        + "</body></html>\n"
    )


def write_report(
    model: "Model",
    path: str | Path,
    pairs: Iterable["PairModel"] | None = None,
    rows: Sequence[Sequence[Word | None]] | None = None,
) -> None:
    """Write `report_html(...)` to `path` (atomically)."""
    atomic_write_text(path, report_html(model, pairs, rows))
