"""Attack round 9 (issue 13): the code landed in the last hours — the name-not-found hints and ``fact recompute``.
Each test builds the input that broke the landed main and asserts what passprice now does with it."""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke


def test_a_mistyped_name_in_a_registry_of_many_long_names_scores_a_bounded_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hint for a name not found ran :func:`difflib.get_close_matches` over every registered name, whose full
    ratio is quadratic in a name's length: 2,000 servings named by 120 letters of ``a`` and ``b`` (240 KB of names)
    made one mistyped ``price NAME`` take 4.7 s. Only ``MAX_HINT_SCORED`` names (those with the best linear upper
    bound) are now scored in full; the hint still names the closest."""
    from passprice import registry

    rng = random.Random(1)
    names = ["".join(rng.choice("ab") for _ in range(120)) for _ in range(300)]
    root = copy_root(tmp_path)
    for name in names:
        (root / "registry" / "servings" / f"{name}.toml").write_text("x = 1\n", encoding="utf-8")
    typo = names[17][:60] + ("b" if names[17][60] == "a" else "a") + names[17][61:]
    full: list[int] = []
    ratio = difflib.SequenceMatcher.ratio

    def counted(self: difflib.SequenceMatcher[str]) -> float:
        full.append(1)
        return ratio(self)

    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", counted)
    lines = bad("price", typo, root=root, says=f"serving '{typo}': not found in ")
    assert len(lines) == 1 and f" registry/servings; did you mean {names[17]} or " in lines[0]
    assert 0 < len(full) <= registry.MAX_HINT_SCORED < len(names)


# --- fact recompute: a derivation without digits -------------------------------------------------------------------

_READ = (
    'derivation.formula = "dot / bandwidth"\nderivation.digits = 4\n'
    'derivation.inputs.dot = { value = 4.48, unit = "TB/s", locator = "Azure_Results/ND_H200_v5_results.md, HBM '
    'Bandwidth table (BabelStream): row \'| Dot   | 4.48              |\' in TB/s" }\n'
)


def _exact_read(root: Path, dot: str, bandwidth: str) -> Path:
    """The H200 card with ``streams.read`` derived exactly (no digits) from a Dot rate of ``dot`` TB/s, and the
    card's memory.bandwidth (recorded in the derivation as 4.8 TB/s) moved to ``bandwidth``."""
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert _READ in text
    text = text.replace(_READ, _READ.replace("derivation.digits = 4\n", "").replace("4.48", dot))
    text = text.replace('value = 0.9333\n', 'value = 0.9\n', 1)
    text = text.replace("[memory.bandwidth]\nvalue = 4.8\n", f"[memory.bandwidth]\nvalue = {bandwidth}\n", 1)
    card.write_text(text, encoding="utf-8")
    return card


def test_recompute_writes_an_exact_derivation_to_every_digit(tmp_path: Path) -> None:
    """A derivation without ``digits`` holds its fact to exactly the formula's result, but ``fact recompute`` wrote
    the result rounded to 10 significant digits (the text ``check`` shows people) and then refused its own edit: a
    Dot of 4.1234567891 TB/s over a bandwidth of 5 TB/s gave ``streams.read: 0.824691 does not follow from its
    derivation: dot / bandwidth gives 0.8246913578``, exit 2, though 0.82469135782 is the exact result."""
    from cli_helpers import invoke

    root = copy_root(tmp_path)
    card = _exact_read(root, "4.1234567891", "5")
    result = invoke("fact", "recompute", "h200_sxm_141gb", "streams.read", root=root)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "facts/cards/h200_sxm_141gb.toml: streams.read: 0.9 -> 0.82469135782 (recomputed from today's inputs)\n"
        "facts/cards/h200_sxm_141gb.toml: provenance kept: streams.read stays measured (a recompute moves the value "
        "its formula gives from today's inputs, not what the fact rests on: still the figure it cites, as its "
        "provenance says; `passprice fact set` changes the provenance by hand)\n"  # slip 53
    )
    assert "[streams.read]\nvalue = 0.82469135782\n" in card.read_text(encoding="utf-8")
    assert 'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 5, unit = "TB/s" }' in card.read_text(
        encoding="utf-8")


def test_recompute_refuses_an_exact_derivation_no_decimal_writes(tmp_path: Path) -> None:
    """4.48 / 4.9 repeats: no decimal is the exact result, so the derivation needs digits; the refusal said
    ``streams.read: 0.914286 does not follow from its derivation`` (a figure it did not write). It now names the
    result and the key to add, and leaves the file as it was."""
    root = copy_root(tmp_path)
    card = _exact_read(root, "4.48", "4.9")
    before = card.read_bytes()
    bad("fact", "recompute", "h200_sxm_141gb", "streams.read", root=root,
        says="h200_sxm_141gb.toml: streams.read: dot / bandwidth gives 0.9142857143… from today's inputs, which no "
        "decimal of at most 15 digits writes exactly, and its derivation has no digits: add "
        "streams.read.derivation.digits (the significant digits it is rounded to), then recompute")
    assert card.read_bytes() == before


# --- fact recompute: a long chain of derivations ------------------------------------------------------------------


def _chain(root: Path, links: int) -> Path:
    """A drafting method whose acceptance.N (N = 2 … links) derives from acceptance.N-1 less 0.001, each following
    from acceptance.1 = 0.99; acceptance.1 then moved to 0.98, so every link is stale in turn."""
    parts = ['[method]\nname = "chain"\nkind = "mtp"\ncheckpoints = ["qwen35-27b-like"]\n',
             '[acceptance.1]\nvalue = 0.98\nunit = "1"\nprovenance = "assumed"\nsource = "qwen35-mtp-review"\n'
             'locator = "a chain"\n']
    for i in range(2, links + 1):
        parts.append(
            f'[acceptance.{i}]\nvalue = {0.99 - 0.001 * (i - 1):.3f}\nunit = "1"\nprovenance = "assumed"\n'
            f'source = "qwen35-mtp-review"\nlocator = "a chain"\nderivation.formula = "prev - step"\n'
            f'derivation.inputs.prev = {{ fact = "acceptance.{i - 1}", value = {0.99 - 0.001 * (i - 2):.3f}, '
            'unit = "1" }\nderivation.inputs.step = { value = 0.001, unit = "1", constant = "a step" }\n')
    file = root / "facts" / "drafts" / "chain.toml"
    file.write_text("\n".join(parts), encoding="utf-8")
    return file


def test_recompute_of_a_long_chain_parses_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fact recompute NAME`` recomputed each stale fact as a ``fact set`` of its own: the file read, parsed by
    tomlkit, validated and written again for each, so 63 chained acceptances (a 12 KB file) took 14.2 s. It now
    parses the file once, validates the whole edit once and writes it once; every link is recomputed in order
    (acceptance.64 = 0.98 - 63 × 0.001 = 0.917)."""
    import tomlkit

    from cli_helpers import invoke

    root = copy_root(tmp_path)
    file = _chain(root, 64)
    parsed: list[int] = []
    parse = tomlkit.parse

    def counted(text: str) -> tomlkit.TOMLDocument:
        parsed.append(len(text))
        return parse(text)

    monkeypatch.setattr(tomlkit, "parse", counted)
    result = invoke("fact", "recompute", "chain", "--draft", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 64
    assert lines[0] == "facts/drafts/chain.toml: acceptance.2: 0.989 -> 0.979 (recomputed from today's inputs)"
    assert lines[-2] == "facts/drafts/chain.toml: acceptance.64: 0.927 -> 0.917 (recomputed from today's inputs)"
    # slip 53: the provenance kept, said once, the 63 facts named by their first 8
    assert lines[-1].startswith("facts/drafts/chain.toml: provenance kept: acceptance.2, acceptance.3, acceptance.4, "
                                "acceptance.5, acceptance.6, acceptance.7, acceptance.8, acceptance.9 and 55 more stay "
                                "assumed (a recompute moves")
    assert len(parsed) == 1
    text = file.read_text(encoding="utf-8")
    assert "[acceptance.64]\nvalue = 0.917\n" in text
    assert 'derivation.inputs.prev = { fact = "acceptance.63", value = 0.918, unit = "1" }' in text
    assert invoke("fact", "recompute", "chain", "--draft", root=root).stdout == (
        "facts/drafts/chain.toml: nothing to recompute: every derived fact follows from its inputs\n")


def test_recompute_of_a_chain_that_leaves_the_range_writes_nothing(tmp_path: Path) -> None:
    """A chain whose tenth link would fall below the schema's least acceptance is refused naming that key, and
    nothing is written: the links before it were written one by one, then the command failed (exit 2) with the
    file half recomputed."""
    root = copy_root(tmp_path)
    file = _chain(root, 12)
    text = file.read_text(encoding="utf-8").replace("[acceptance.1]\nvalue = 0.98\n", "[acceptance.1]\nvalue = 0.005\n")
    file.write_text(text, encoding="utf-8")
    bad("fact", "recompute", "chain", "--draft", root=root,
        says="facts/drafts/chain.toml: acceptance.10.value: -0.004 is less than the minimum of 0")
    assert file.read_text(encoding="utf-8") == text


def test_a_lock_made_when_servings_took_16_bytes_a_kv_element_still_reproduces(tmp_path: Path) -> None:
    """Round 9: serving files now take at most 8 bytes a KV element, and a lock made before with 16 stopped reading
    ('serving.kv_bytes: 16.0 is greater than the maximum of 8'): a historic price no longer reproduced. A lock keeps
    what it was made with (up to 64); a new serving file is held to 8."""
    from passprice.locks import lock_text, make_lock
    from passprice.registry import find_root
    from passprice.servings import load_spec, override, resolve

    root_path = copy_root(tmp_path)
    root = find_root(root_path)
    lock = make_lock("old16", "price", resolve(root, override(load_spec(root, "r1-qwen7b-h200"), kv_bytes=16.0)),
                     root)
    file = root_path / "old16.lock.toml"
    file.write_text(lock_text(lock), encoding="utf-8")
    result = invoke("reproduce", str(file), root=root_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].startswith(
        f"  reproduces exactly: {lock.price['tokens_per_s']!r} tokens/s at batch 1, binds on memory")
