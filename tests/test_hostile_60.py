"""Attack round 60 (issue 13): hostile input against session 33's new code. Each test builds its reproducer and
asserts the one line passprice now gives (it was a traceback, a hang, or a silent acceptance before).

1. The shipped list of pricing-model digests (:mod:`passprice.modelhistory`): a list nested 10^5 deep
   (``RecursionError``), a digest, date or commit with a final newline (passed the schema's ``$``, then failed
   :class:`KnownModel`'s validator: a cattrs traceback), a FIFO in its place (blocked forever), one digest listed
   twice with two versions (read silently, the second winning), a version holding terminal escapes (shown as is by
   ``reproduce``) and a day 2026-99-99 (accepted).
2. A kept header (:func:`passprice.gguf_header._seen_before`, slip 55's offset check ``_span_holds``) whose long
   array's length is no u64 (-1, 2^64, ``1100.0``, ``"1100"``): ``struct.error`` reached the user from every read of
   that header; now a miss, and the header is parsed again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from passprice.errors import InputError

GOOD = {"digest": "sha256:" + "a" * 64, "version": "0.1.0", "first_locked": "2026-12-01", "commit": "c23cf4390948"}


def _listed(tmp_path: Path, models: list[dict[str, Any]] | str) -> Path:
    path = tmp_path / "pricing_models.json"
    path.write_text(models if isinstance(models, str) else json.dumps({"models": models}), encoding="utf-8")
    return path


@pytest.mark.parametrize(("models", "says"), [
    ("[" * 100_000, "not passprice's list of pricing models: JSON nested too deep"),
    ([{**GOOD, "digest": GOOD["digest"] + "\n"}], r"models\[0\].digest: 'sha256:a{64}\\n' is too long"),
    ([{**GOOD, "first_locked": "2026-12-01\n"}], r"models\[0\].first_locked: '2026-12-01\\n' is too long"),
    ([{**GOOD, "commit": "c23cf4390948\n"}], r"models\[0\].commit: 'c23cf4390948\\n' is too long"),
    ([GOOD, {**GOOD, "version": "9.9"}], r"models\[1\].digest: sha256:a{64} is listed already \(models\[0\]\)"),
    ([{**GOOD, "version": "0.1\x1b[31m"}], r"models\[0\].version: '0.1\\x1b\[31m' does not match"),
    ([{**GOOD, "first_locked": "2026-99-99"}], r"models\[0\].first_locked: '2026-99-99' is not a 'date'"),
    ({"models": {}}.__repr__().replace("'", '"'), r"not passprice's list of pricing models: models: \{\} is not of"),
])
def test_a_damaged_list_of_pricing_models_is_one_line_naming_file_and_entry(
        tmp_path: Path, models: list[dict[str, Any]] | str, says: str) -> None:
    from passprice.modelhistory import read_known

    with pytest.raises(InputError, match=r"^.*pricing_models\.json: .*" + says):
        read_known(_listed(tmp_path, models))


def test_a_list_of_pricing_models_that_is_a_fifo_or_too_big_is_refused_unread(tmp_path: Path) -> None:
    """A FIFO blocked ``read_known`` (and ``add_running`` on a checkout holding one) forever; a list over 1 MiB
    (some 6,700 digests: 4 MiB read in 3.2 s) is refused by its size."""
    from passprice.modelhistory import KNOWN_BYTES, read_known

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"fifo\.json: is a FIFO \(named pipe\), not a regular file"):
        read_known(fifo)
    big = _listed(tmp_path, " " * (KNOWN_BYTES + 1))
    with pytest.raises(InputError, match=r"pricing_models\.json: holds over 1,048,576 bytes"):
        read_known(big)


def test_the_shipped_list_reads_and_lists_no_digest_twice() -> None:
    from passprice.modelhistory import KNOWN, read_known

    listed = read_known(KNOWN)
    assert len(listed) == len(json.loads(KNOWN.read_text(encoding="utf-8"))["models"]) >= 1


@pytest.mark.parametrize("length", [-1, 2**64, 1100.0, "1100"])
def test_a_kept_header_whose_long_array_length_is_no_u64_is_a_miss(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, length: Any) -> None:
    from passprice import cache, gguf_header
    from passprice.gguf_records import LongArray
    from test_header_seen_before import write

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    gguf_header.clear_cache()
    path = write(tmp_path / "h.gguf", tokens=1100)
    key = "tokenizer.ggml.tokens"
    expected = gguf_header.read_header(path, cache=False).metadata[key].sha256
    gguf_header.read_header(path, array_digests=False)  # keeps the entry with its offsets
    gguf_header.clear_cache()
    real, cap = os.path.realpath(path), gguf_header.header_cap()
    kept = cache.kept_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), tuple)
    assert kept is not None
    metadata = {**kept[2], key: LongArray(kept[2][key].element_type, length)}
    cache.keep_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), (*kept[:2], metadata, *kept[3:]))
    assert gguf_header._seen_before(real, Path(path), cap) is None
    assert gguf_header.read_header(path).metadata[key].sha256 == expected


def test_duplicate_locks_are_found_by_key_for_thousands_of_unlike_locks_of_one_serving() -> None:
    """Attack 60: locks of one serving and price that differ only in one fact's note (or a derivation's input) were
    compared with 64 candidates each, then unstructured to JSON (5,000: 2.7 s of CPU); now keyed by
    ``_frozen``: a copy (its own objects) is found, one note or input apart is not."""
    import copy

    import attrs

    from cli_helpers import REPO
    from passprice.check import _frozen, duplicate_lines
    from passprice.locks import read_lock
    from passprice.registry import find_root

    root = find_root(REPO)
    lock = read_lock(REPO / "locks" / "r1-qwen7b-h200.lock.toml")
    path, fact = next((p, f) for p, f in lock.facts.items() if f.derivation is not None)
    noted = attrs.evolve(lock, facts={**lock.facts, path: attrs.evolve(fact, note="mine")})
    first = fact.derivation.inputs[0]
    moved = attrs.evolve(fact.derivation, inputs=(attrs.evolve(first, locator="elsewhere"),
                                                  *fact.derivation.inputs[1:]))
    derived = attrs.evolve(lock, facts={**lock.facts, path: attrs.evolve(fact, derivation=moved)})
    blank = attrs.evolve(lock, info=attrs.evolve(lock.info, name="", digest=""))
    assert _frozen(blank) is not None and _frozen(blank) == _frozen(copy.deepcopy(blank))
    locks = [(REPO / "locks" / f"{n}.lock.toml", one) for n, one in
             (("a", lock), ("b", noted), ("c", derived), ("d", copy.deepcopy(lock)), ("e", copy.deepcopy(noted)))]
    pairs = [pair for pair, _ in duplicate_lines(root, locks)]
    assert pairs == [("locks/a.lock.toml", "locks/d.lock.toml"), ("locks/b.lock.toml", "locks/e.lock.toml")]


@pytest.mark.parametrize("card_own", [False, True])
def test_a_lock_whose_stack_reserve_fills_its_card_is_one_line_naming_the_lock(
        tmp_path: Path, card_own: bool) -> None:
    """Attack 60: re-digested with ``stack.memory.reserved = 1e18 B`` and its record doubled, the llama.cpp lock was
    priced by ``price --lock`` (exit 0, the forged record never re-priced), and ``reproduce``/``check`` named
    ``facts/stacks/llamacpp-cuda-2405.toml``; a card's own reserve (``stack.cards.CARD.memory.reserved``) alike."""
    import attrs

    from cli_helpers import REPO
    from passprice.locks import read_lock
    from test_hostile_59 import _forged

    def change(facts: dict[str, Any]) -> None:
        path = "stack.cards.h200_sxm_141gb.memory.reserved" if card_own else "stack.memory.reserved"
        facts[path] = attrs.evolve(facts["stack.memory.reserved"], value=141e9, amount=141.0, unit="GB")

    forged = _forged(REPO / "locks" / "r1-qwen7b-h200-llamacpp.lock.toml", tmp_path / "l.lock.toml", change)
    key = "stack.cards.h200_sxm_141gb.memory.reserved" if card_own else "stack.memory.reserved"
    with pytest.raises(InputError, match=(rf'^{forged}: facts."{key}": 141,000,000,000 bytes reserved is at or '
                                          r"above the pinned memory.capacity of card h200_sxm_141gb \(141,000,000,000 "
                                          "bytes\\)")):
        read_lock(forged)


def test_a_package_without_its_list_of_pricing_models_says_what_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An install without ``pricing_models.json`` stopped every price of a lock on "PATH: no such file"."""
    from passprice import modelhistory

    monkeypatch.setattr(modelhistory, "KNOWN", tmp_path / "pricing_models.json")
    with pytest.raises(InputError, match=r"pricing_models\.json: no such file: passprice's list of pricing models "
                                         r"\(shipped in the package beside its modules: reinstall passprice\)$"):
        modelhistory.read_known(modelhistory.KNOWN)


@pytest.mark.parametrize("command", ["max-batch", "best"])
def test_a_memory_use_too_small_for_the_weights_names_the_fraction_and_the_whole(command: str) -> None:
    """``--memory-use 1e-9`` on the 80 GB H100: "the card memory must hold 269,419,008 bytes but holds 80", naming
    no fraction, advising "a larger card"; now the fraction, the card's whole and a larger memory use are named."""
    from cli_helpers import REPO, invoke

    result = invoke(command, "gemma3-270m-h100", "--memory-use", "1e-9", root=REPO)
    assert result.exit_code == 1, result.output
    assert ("NotResident: the card memory must hold 269,419,008 bytes but holds 80 (memory use 1e-09 of its "
            "80,000,000,000): the weights and embedding table alone take 246,587,904 bytes") in result.stderr
    assert "a smaller type mix, a larger card or a larger memory use (--memory-use)" in result.stderr


def test_max_batch_of_one_sequence_is_said_in_the_singular() -> None:
    from cli_helpers import REPO, invoke

    result = invoke("max-batch", "gemma3-270m-h100", "--memory-use", "0.0034", root=REPO)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("gemma3-270m-q4_k_m on h100_sxm5_80gb: at most 1 sequence a pass filling at most "
                                    "0.34 % of card memory (memory use)\n")


@pytest.mark.parametrize(("origin", "said"), [(None, True), ("Downloaded from https://example.org/a.gguf", False)])
def test_header_says_not_kept_of_a_synthetic_entry_only(tmp_path: Path, origin: str | None, said: bool) -> None:
    """Attack 60: an entry of a shipped synthetic header's bytes whose origin says it was downloaded was told "this
    shipped synthetic header was built by passprice synth" by ``header`` (``checkpoints`` and ``audit`` did not)."""
    import re

    from cli_helpers import REPO, invoke

    text = (REPO / "registry" / "checkpoints" / "llama2-7b-q4_0.toml").read_text(encoding="utf-8")
    if origin is not None:
        text = re.sub(r'^origin = ".*"$', f'origin = "{origin}"', text, count=1, flags=re.M)
    entry = tmp_path / "llama2-7b-q4_0.toml"
    entry.write_text(text, encoding="utf-8")
    result = invoke("header", str(entry), root=REPO)
    assert result.exit_code == 0, result.output
    line = "  header file   not kept: this shipped synthetic header was built by passprice synth"
    assert (line in result.stdout) is said
