"""Every word the price table prints, and every refusal's name, has a glossary entry (`passprice explain WORD`), and a
misspelling suggests each term once: `explain` of a misspelled term suggested duplicates ("did you mean pass,
pass?"), and "per-block scaling", sub32, "state", "MAC", "conv ring", "windowed attention" and FlatCurve had none."""

from __future__ import annotations

import re

import pytest

from cli_helpers import REPO, bad, invoke
from passprice import glossary
from passprice.decode import DecodeRefusal
from passprice.errors import InputError
from passprice.serving import ServingRefusal

#: Prices whose tables, between them, print every label, legend word and choice a price prints.
PRICES = [
    ("price", "r1-qwen7b-h200"),
    ("price", "qwen35-27b-h200-mtp"),
    ("price", "r1-qwen7b-h200", "--kv-page", "16", "--shared-prefix", "512", "--prefix-read-once", "--scaling",
     "sub32", "--kv-rotated", "--kv-bytes", "1", "--attention", "array", "--host-memory", "--no-lock"),
    ("price", "qwen3-30b-a3b-h200", "--batch", "600", "--no-lock"),
]


def _refusal_names() -> set[str]:
    """Every refusal's name: the ServingRefusal and DecodeRefusal variants, every class naming itself with
    ``name = "…"`` in the sources, and the names written into a refusal's JSON (``{"refusal": "LockFloor"}``) or
    chosen at run time (``CheckpointChanged`` / ``CheckpointMissing``)."""

    def walk(cls: type) -> set[str]:
        return {getattr(c, "name", c.__name__) for c in cls.__subclasses__()} | {
            n for c in cls.__subclasses__() for n in walk(c)
        }

    import passprice.batching
    import passprice.scopes
    import passprice.stacks  # noqa: F401  (their refusals subclass ServingRefusal)

    names = walk(ServingRefusal) | walk(DecodeRefusal)
    for path in (REPO / "src" / "passprice").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r'^    name = "([A-Z]\w+)"', text, re.M))
        names |= set(re.findall(r'\{"refusal": "([A-Z]\w+)"', text))
        names |= {n for pair in re.findall(r'self\.name = "([A-Z]\w+)" if .* else "([A-Z]\w+)"', text) for n in pair}
    return names


def test_every_refusal_name_is_defined() -> None:
    names = _refusal_names()
    assert {"FlatCurve", "NotResident", "LockFloor", "LockMismatch", "CheckpointMissing", "MissingMetadata"} <= names
    for name in sorted(names):
        term = glossary.lookup(name)
        assert name in (term.name, *term.aliases), (name, term.name)
        assert "refusal" in term.short, name


def _words(output: str) -> set[str]:
    """The words a price's text output labels things with: the term table's column headers, the legend's names, and
    each summary line's label."""
    lines = output.splitlines()
    words: set[str] = set()
    header = next(i for i, line in enumerate(lines) if line.startswith("term "))
    words |= set(re.split(r"\s{2,}", lines[header].strip()))
    legend = next(line for line in lines if " = " in line and "(passprice explain TERM)" in line)
    words |= {part.split(" = ")[0].strip() for part in legend.split(" · ")}
    words |= {m.group(1) for line in lines if (m := re.match(r"^  ([a-z][a-z/ ]*?)\s{2,}\S", line))}
    return words


def _choices(output: str) -> list[str]:
    """The serving's choices the line under the title lists (``contiguous KV at 2 B/element``, ``1 activation
    word`` …), a leading count or share taken off."""
    return [re.sub(r"^[\d.,]+ (?:× )?", "", piece) for piece in output.splitlines()[1].strip().split(" · ")]


def _defined(phrase: str) -> bool:
    """Whether the phrase's first words (the longest run of them the glossary knows, at least one) name a term:
    ``flush every-pass`` is flush's, ``shared prefix 512 positions`` the shared prefix's."""
    words = phrase.split()
    for n in range(len(words), 0, -1):
        try:
            glossary.lookup(" ".join(words[:n]))
            return True
        except InputError:
            continue
    return False


@pytest.mark.parametrize("args", PRICES, ids=lambda a: " ".join(a[1:3]))
def test_every_word_of_a_price_table_is_defined(args: tuple[str, ...]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    words = _words(result.stdout)
    assert {"term", "time", "of pass", "bind", "memory", "binds", "tokens/s", "held", "rests on"} <= words
    missing = []
    for word in sorted(words):
        try:
            glossary.lookup(word)
        except InputError:
            missing.append(word)
    assert missing == []
    choices = _choices(result.stdout)
    assert len(choices) >= 7
    assert [c for c in choices if not _defined(c)] == []


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("per-block scaling", "scaling"),
        ("sub32", "scaling"),
        ("state", "state"),
        ("MAC", "MAC"),
        ("MAC/s", "MAC"),
        ("conv ring", "conv ring"),
        ("windowed attention", "windowed attention"),
        ("global attention", "windowed attention"),
        ("FlatCurve", "FlatCurve"),
        ("contiguous KV", "paged KV"),
        ("attention on vector", "attention"),
    ],
)
def test_the_words_the_report_found_undefined(word: str, name: str) -> None:
    result = invoke("explain", word)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{name}: ")


def test_a_misspelling_suggests_each_term_once() -> None:
    # "token row" and "token rows" are both token-row's: one suggestion, not two.
    lines = bad("explain", "token rowz", says="explain: 'token rowz' is not a term passprice defines; did you mean ")
    suggested = lines[0].split("did you mean ")[1].split("?")[0].split(", ")
    assert suggested[0] == "token-row" and len(suggested) == len(set(suggested))
    # only the matches about as close as the closest (walk107: routing, through its alias "token slot", and
    # tokens/s were offered too, as `explain bindz` offered "out of date already on BASE" through "behind")
    assert lines == [
        "passprice: error: explain: 'token rowz' is not a term passprice defines; did you mean token-row? "
        "(passprice explain lists them)"
    ]
    # the alias itself still explains its term (walkthrough 32: every MoE price's routing line prints the word)
    assert invoke("explain", "token-slots").stdout.startswith("routing: ")
