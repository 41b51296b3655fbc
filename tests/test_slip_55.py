"""Slip round 55 (issue 13): a forged lock that still priced, and gaps of the review and of ``check``. Each test
builds its reproducer (a lock re-locked by this code into a private copy of the registry, then edited by hand and
re-digested, as an attacker who knows the digest rule writes it) and asserts the exit status and the words said."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import attrs
import pytest

from cli_helpers import REPO, copy_root, invoke, refused
from test_slip_53 import R1, forge_record, relock

# --- 1. a lock whose record AND pricing model are forged is refused by every pricing command -------------------------

#: The first pricing model passprice locked this repository with (git log -p -- locks/).
OLDEST = "sha256:d82efb38ac4484db2f213716078153839f163d99696ae2274cf103681a94fc2e"


def _with_model(root: Path, rel: str, model: str) -> None:
    """Lock ``rel``'s ``pricing_model`` set to ``model``, every digest recomputed."""
    from passprice.locks import lock_text, read_lock

    lock = read_lock(root / rel)
    (root / rel).write_text(lock_text(attrs.evolve(lock, info=attrs.evolve(lock.info, pricing_model=model))),
                            encoding="utf-8")


@pytest.fixture(scope="module")
def forged_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry whose r1-qwen7b-h200 lock records 1,000 tokens/s (its pins give 996.1) and pins pricing model
    ``sha256:111…`` (no code's), re-digested."""
    root = copy_root(tmp_path_factory.mktemp("slip55"))
    relock(root, "r1-qwen7b-h200", R1)
    forge_record(root, R1, tokens_per_s=1000.0)
    _with_model(root, R1, "sha256:" + "1" * 64)
    return root


def test_the_list_holds_every_pricing_model_the_locks_pin() -> None:
    """Every ``pricing_model`` a lock of ``locks/`` pins is listed, with the passprice version that wrote it."""
    from passprice.modelhistory import written_by

    pinned = {tomllib.loads(p.read_text(encoding="utf-8"))["lock"]["pricing_model"]
              for p in (REPO / "locks").glob("*.lock.toml")}
    assert pinned and all(written_by(m) is not None for m in pinned), pinned
    oldest = written_by(OLDEST)
    assert oldest is not None and (oldest.version, oldest.first_locked, oldest.commit) == (
        "0.1.0", "2026-12-01", "c23cf4390948")


def test_the_list_holds_the_running_code() -> None:
    """The running code's digest is listed: a re-lock of this repository adds it (fails on a branch that changed
    the pricing code until the lead re-locks)."""
    from passprice.modelhistory import written_by
    from passprice.pins import pricing_model_digest

    assert written_by(pricing_model_digest()) is not None


@pytest.mark.parametrize("command", ["price", "best"])
def test_a_lock_of_no_code_s_pricing_model_is_refused(forged_root: Path, command: str) -> None:
    """Before: exit 0, "the pricing model (code) or the checkpoint moved it". Now: ``LockModelForged``, exit 1."""
    out = refused(command, "r1-qwen7b-h200", "--lock", str(forged_root / R1), root=forged_root, name="LockModelForged")
    assert out["pricing_model"] == "sha256:" + "1" * 64 and out["known"] >= 94
    assert out["message"].startswith(
        "lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml) is forged: it pins pricing model 111111111111…, the "
        "digest neither of the running code nor of any of the ")


def test_reproduce_refuses_a_lock_of_no_code_s_pricing_model(forged_root: Path) -> None:
    result = invoke("reproduce", str(forged_root / R1), root=forged_root)
    assert result.exit_code == 1 and not result.stdout
    assert result.stderr.startswith("passprice: refused: LockModelForged: lock r1-qwen7b-h200 ")
    assert len(result.stderr.splitlines()) == 1 and "(--no-lock)" not in result.stderr


def test_check_fails_a_lock_of_no_code_s_pricing_model(forged_root: Path) -> None:
    """``check`` fails the lock every price refuses (before: a forged model beside an honest record read "pricing
    model: changed since the lock; every recorded field reproduces", exit 0)."""
    from passprice.check import _judge_lock
    from passprice.registry import Root

    status, _ = _judge_lock(Root(forged_root), forged_root / R1)
    assert not status.ok(False) and status.refusal == "LockModelForged"
    assert status.verdict.startswith("today's inputs refuse the price: lock r1-qwen7b-h200 "
                                     "(locks/r1-qwen7b-h200.lock.toml) is forged: it pins pricing model 111111111111…")


def test_a_lock_of_a_real_older_model_says_which_passprice_wrote_it(tmp_path: Path) -> None:
    """The limit: a forger naming a real older digest still prices (exit 0), and the line says whose code it was."""
    root = copy_root(tmp_path)
    relock(root, "r1-qwen7b-h200", R1)
    forge_record(root, R1, tokens_per_s=1000.0)
    _with_model(root, R1, OLDEST)
    result = invoke("price", "r1-qwen7b-h200", "--lock", str(root / R1), root=root)
    assert result.exit_code == 0, result.output
    assert ("no pinned fact or serving choice drifted: the pricing model (code) or the checkpoint moved it; the "
            "lock's pricing model d82efb38ac44… is passprice 0.1.0's, first locked 2026-12-01 at commit c23cf4390948; "
            "`passprice reproduce r1-qwen7b-h200` says which") in result.stdout


def test_a_re_lock_of_the_checkout_lists_the_running_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`add_running` adds the running digest once, with version and day; a folder holding no list is left."""
    from passprice import modelhistory, pins

    package = tmp_path / "src" / "passprice"
    package.mkdir(parents=True)
    (package / "pins.py").write_text("", encoding="utf-8")
    listed = package / "pricing_models.json"
    listed.write_text(json.dumps({"models": [{"digest": OLDEST, "version": "0.1.0", "first_locked": "2026-12-01",
                                              "commit": "c23cf4390948"}]}), encoding="utf-8")
    monkeypatch.setattr(pins, "checkout_model", lambda root: None)
    monkeypatch.setattr(pins, "pricing_model_digest", lambda folder=None: "sha256:" + "2" * 64)
    added = modelhistory.add_running(tmp_path, today="2026-12-05")
    assert added == modelhistory.KnownModel("sha256:" + "2" * 64, "0.1.0", "2026-12-05", "")
    assert list(modelhistory.read_known(listed)) == [OLDEST, "sha256:" + "2" * 64]
    assert modelhistory.add_running(tmp_path) is None  # listed already
    assert modelhistory.add_running(tmp_path / "src") is None  # no checkout there


def test_a_damaged_list_is_one_line(tmp_path: Path) -> None:
    from passprice.errors import InputError
    from passprice.modelhistory import read_known

    bad = tmp_path / "pricing_models.json"
    bad.write_text('{"models": [{"digest": "sha256:00", "version": "x", "first_locked": "2026-12-05", "commit": ""}]}',
                   encoding="utf-8")
    with pytest.raises(InputError, match=r"pricing_models.json: not passprice's list of pricing models: "
                                         r"models\[0\]\.digest: 'sha256:00' does not match"):
        read_known(bad)


# --- 3. a card whose [card] note is copied identical from another card is flagged by check -------------------------


def test_a_card_copied_with_its_note_is_a_warning_naming_both_cards(tmp_path: Path) -> None:
    """Before: a copy of the MI300X's card (its own title, its note as the MI300X's) passed ``check`` silently on its
    note. Now one warning names both cards; a note of its own (or white space alone differing: no) says nothing."""
    from cli_helpers import copy_card
    from passprice.cards import card_from_document
    from passprice.check import _validate_folder
    from passprice.registry import Root

    root = copy_root(tmp_path)
    cards = root / "facts" / "cards"
    copy_card(cards / "mi300x.toml", cards / "mi325x.toml")
    for other in cards.glob("*.toml"):  # the two cards alone: each read costs
        if other.stem not in ("mi300x", "mi325x", "h200_sxm_141gb"):
            other.unlink()
    warnings: list[str] = []
    _validate_folder(Root(root), cards, "card", card_from_document, warnings=warnings)
    said = [w for w in warnings if "card.note" in w]
    assert said == [f"{cards / 'mi325x.toml'}: card.note: the same text as the note of mi300x.toml: one card copied "
                    "from the other with its note? a card's note says what its own figures are and were checked "
                    "against; give each card its own"]
    text = (cards / "mi325x.toml").read_text(encoding="utf-8")
    (cards / "mi325x.toml").write_text(text.replace('note = "8 XCDs', 'note = "A copy: 8 XCDs', 1), encoding="utf-8")
    warnings.clear()
    _validate_folder(Root(root), cards, "card", card_from_document, warnings=warnings)
    assert not [w for w in warnings if "card.note" in w]


# --- 4. a kept header whose array offsets lie in range but are not the array's is a miss ----------------------------


@pytest.mark.parametrize("shift", [(1, 1), (0, -1), (-12, -12), (8, 0)])
def test_kept_offsets_in_range_but_not_the_array_s_are_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              shift: tuple[int, int]) -> None:
    """Before: an entry whose vocabulary's offsets were moved inside the header (a byte on, a byte short, onto the
    array's type and length) was served, with the sha256 of those bytes as the vocabulary's. Now a miss: the header
    is parsed and the digest is the parse's."""
    import os

    from passprice import cache, gguf_header
    from test_header_seen_before import write

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    gguf_header.clear_cache()
    path = write(tmp_path / "h.gguf", tokens=1100)
    expected = gguf_header.read_header(path, cache=False).metadata["tokenizer.ggml.tokens"].sha256
    gguf_header.read_header(path, array_digests=False)  # keeps the entry with its offsets
    gguf_header.clear_cache()
    real, cap = os.path.realpath(path), gguf_header.header_cap()
    kept = cache.kept_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), tuple)
    assert kept is not None and kept[9] is not None
    start, end = kept[9]["tokenizer.ggml.tokens"]
    assert gguf_header._seen_before(real, Path(path), cap) is not None  # the entry as kept is served
    forged = {**kept[9], "tokenizer.ggml.tokens": (start + shift[0], end + shift[1])}
    cache.keep_object(gguf_header._KEPT_KIND, gguf_header._kept_data(real, cap), (*kept[:9], forged))
    assert gguf_header._seen_before(real, Path(path), cap) is None
    assert gguf_header.read_header(path).metadata["tokenizer.ggml.tokens"].sha256 == expected
