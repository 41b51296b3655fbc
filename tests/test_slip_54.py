"""Slip 54 (issue 13): ``check`` reads a registry's locks in batches of the cache, as ``price`` reads a serving's;
``audit LOCK`` with a serving option refuses a FIFO lock file first; ``diff`` looks at a side's files as plain TOML
only through the kind's cap and :func:`passprice.schema.toml_loads`.

Each test keeps the input that broke main's code, asserting the exit status and the error line.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.cli_helpers import bad, copy_root, invoke

from passprice import cache, locks

#: Count the locks built by this module's own commands: none kept from another test's (tests/conftest.py).
FRESH_LASTING = True

R1 = "r1-qwen7b-h200"


def test_check_past_the_caches_entry_cap_builds_no_lock_again_and_still_sees_an_edited_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slip 54: `check` read every lock into an entry of its own; past the cache's MAX_ENTRIES (4,096) the prune
    # removed half of them on every run, so every warm `check` of 5,000 locks built them all again (as `price` did
    # before session 32 batched a serving's locks). Here the cap is 160 and the registry holds 130 locks: with the
    # other objects a check keeps, about 125 entries batched, 237 one a lock.
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "MAX_ENTRIES", 160)
    monkeypatch.setattr(cache, "PRUNE_EVERY", 1)
    root = copy_root(tmp_path)
    source = root / "locks" / f"{R1}.lock.toml"
    for i in range(120):
        shutil.copyfile(source, source.with_name(f"l{i:03d}-{source.name}"))
    built: list[str] = []
    real = locks._lock_of_file

    def counted(path: Path, folder: Path, data: bytes) -> locks.Lock:
        built.append(path.name)
        return real(path, folder, data)

    monkeypatch.setattr(locks, "_lock_of_file", counted)
    first = invoke("check", root=root)
    assert first.exit_code == 0, first.output
    # each content built once (scale36): the 10 registered locks' 10 contents; the 120 copies of r1's (whichever of
    # its 121 files comes first is built) are that lock with their own source, each still read and its digests checked
    assert len(built) == 10 and len({(root / "locks" / name).read_bytes() for name in built}) == 10, built
    for _ in range(2):  # the second run may store what the first's prune removed; the third builds nothing
        built.clear()
        assert invoke("check", root=root).exit_code == 0
    assert built == []
    # Correctness first: a lock edited by hand (its recorded price moved, digests not recomputed) is read again
    # and refused, batch or no batch (the one lock built).
    edited = source.with_name(f"l077-{source.name}")
    text = edited.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("tokens_per_s = "))
    edited.write_text(text.replace(line, "tokens_per_s = 99999.0", 1), encoding="utf-8")
    result = invoke("check", root=root)  # exit 2 (the lock does not read), its copies' duplicate warnings on stdout
    assert result.exit_code == 2
    assert set(built) == {edited.name}  # read by the sources' look and by the lock's judging: a refusal is not kept
    errors = [x for x in result.stderr.splitlines() if x.startswith("passprice: error:")]
    assert len(errors) == 1 and errors[0].startswith(
        f"passprice: error: locks/{edited.name}: lock.digest: the lock's contents do not match its digest sha256:"
    ), errors


def test_audit_of_a_fifo_lock_with_a_serving_option_refuses_the_fifo_first(tmp_path: Path) -> None:
    # Slip 54: `audit ff --batch 3`, locks/ff.lock.toml a FIFO, said "--batch cannot apply to lock ff: a lock pins
    # its batch" where `audit ff` refuses the FIFO.
    root = copy_root(tmp_path)
    fifo = root / "locks" / "ff.lock.toml"
    os.mkfifo(fifo)
    line = f"passprice: error: {fifo}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"
    assert bad("audit", "ff", root=root) == [line]
    assert bad("audit", "ff", "--batch", "3", root=root) == [line]
    assert bad("audit", "ff.lock.toml", "--card", "mi300x", root=root) == [line]


_HOSTILE = {
    "nested 1e5": ("x_nest = " + "[" * 100_000 + "]" * 100_000, "not valid TOML: arrays or tables nested too deeply"),
    "5,000 digits": ("x_int = " + "1" * 5000, "not valid TOML: Exceeds the limit (4300 digits) for integer string "
                     "conversion: value has 5000 digits"),
    "40 KB dotted key": ("a." * 20_000 + "b = 1", "not valid TOML: a dotted key of more than 64 parts (at line "),
    "50 MB": ('x_big = "' + "x" * 50_000_000 + '"', "larger than 256 KiB, the most a lock file may hold"),
}


#: The shipped lock each hostile tail is appended to in the "changed" case (r1's, as each case had it apart, first).
_CHANGED = dict(zip(_HOSTILE, (R1, "gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8"), strict=True))


@pytest.mark.parametrize("how", ["changed", "added beside a retitled card"])
def test_diff_of_a_pr_with_a_hostile_lock_file_is_one_line_each(tmp_path: Path, how: str) -> None:
    # Slip 54: the review looks at a lock file that does not read as a lock (hand_edits: what a hand edit changed;
    # _pinning, _pricing_with, _pins_record: every lock file of a side) with a bare tomllib.loads catching
    # TOMLDecodeError alone: a PR adding 10^5 nested arrays or an integer of 5,000 digits to a lock was a
    # RecursionError or ValueError traceback (exit 1), a 40 KB dotted key a RecursionError after 9.6 s of CPU, and a
    # 50 MB lock was parsed whole (8.5 s, 2.4 GB) before its one line. diff.side_toml now caps and parses each.
    # The four hostile locks are in one pull request for each way (four shipped locks changed; four locks added
    # beside a retitled card), each said in its one line: one review a way where each lock had its own (eight
    # reviews, ~4.4 s of CPU; session 39).
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    lock = head / "locks" / f"{R1}.lock.toml"
    text = lock.read_text(encoding="utf-8")
    said = []
    for n, (hostile, (tail, says)) in enumerate(_HOSTILE.items()):
        if how == "changed":
            target = head / "locks" / f"{_CHANGED[hostile]}.lock.toml"
            target.write_text(target.read_text(encoding="utf-8") + "\n" + tail + "\n", encoding="utf-8")
        else:
            target = head / "locks" / f"zz{n}.lock.toml"
            target.write_text(text + "\n" + tail + "\n", encoding="utf-8")
        rel = f"locks/{target.name}"
        said.append(f"passprice: error: {rel} does not read on HEAD: {says}")
    if how != "changed":
        card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
        card.write_text(card.read_text(encoding="utf-8").replace('name = "', 'name = "Re ', 1), encoding="utf-8")
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 2, result.output
    for line in said:
        assert line in result.output


def test_diff_of_a_pr_adding_a_hostile_card_parses_none_of_it_uncapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Slip 54: an added card that does not read was still parsed whole by the review's look at its [card] table
    # (diff._card_table, a bare tomllib.loads): a 40 KB dotted key of 20,000 parts cost 8.9-11 s of CPU and 2.4 GB,
    # a 50 MB card 9.1 s, before the one line (now 3.4 s and 2.4 s, 110-157 MiB in all). No bare tomllib.loads is
    # left in passprice.review: each goes through diff.side_toml, which this test watches.
    import tomllib

    from passprice.review import sides

    # Both hostile cards (a 40 KB dotted key, 50 MB) are added in one pull request, each said in its one line: one
    # review where each had its own (session 39).
    base, head = copy_root(tmp_path / "base"), copy_root(tmp_path / "head")
    cards = head / "facts" / "cards"
    said = []
    for name, hostile in (("zz", "40 KB dotted key"), ("zz2", "50 MB")):
        tail, says = _HOSTILE[hostile]
        (cards / f"{name}.toml").write_text(
            (cards / "h200_sxm_141gb.toml").read_text(encoding="utf-8") + "\n" + tail + "\n", encoding="utf-8")
        rel = f"facts/cards/{name}.toml"
        said.append(f"passprice: error: {rel} does not read on HEAD: {says.replace('lock', 'card')}")
    parsed: list[int] = []
    real = tomllib.loads

    def watched(text: str, **kw: object) -> dict[str, object]:
        parsed.append(len(text))
        return real(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(tomllib, "loads", watched)
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 2, result.output
    for line in said:
        assert line in result.output
    assert max(parsed, default=0) < 300_000  # nothing past a kind's 256 KiB cap reached tomllib
    review = Path(sides.__file__).parent
    assert not [p.name for p in review.glob("*.py") if "tomllib.loads(" in p.read_text(encoding="utf-8")]
