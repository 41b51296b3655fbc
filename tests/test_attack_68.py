"""Session 39, attack68: issue 13's leftovers and what an attacker found in session 38's features, each with its
reproducer built here.

1. The file status records (``stamps/KEY.stamps``, :mod:`passprice.filestamps`) were unmarshalled after an unkeyed
   checksum: a forged 133-byte file whose body declares a tuple of 2^31 - 1 items made ``price`` take 6.3 s (and
   16.8 GB in bare Python; session 38, attack66). The file is now fixed-size records whose count is checked against
   the file's length before one is built: the forged file (and a whole file of the old, marshalled layout) is ignored
   within a few KB of allocation, and the next run writes a whole file again.
"""

from __future__ import annotations

import marshal
import shutil
import struct
import time
import tracemalloc
from pathlib import Path

import pytest

from cli_helpers import REPO
from passprice import digests, files, filestamps

CARD = REPO / "facts" / "cards" / "a100_pcie_80gb.toml"


# --- 1. the stamps file's format -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["forged", "old layout"])
def test_a_forged_stamps_file_is_ignored_within_a_bound_and_rebuilt(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forged file: its checksum line holds (it is unkeyed), its body is a marshalled tuple header declaring
    2^31 - 1 items (``marshal.loads`` allocates 16 GiB for it before reading one); 133 bytes in all. Read, it gives no
    record, and the load allocates under 128 KiB (tracemalloc's peak; the read takes a 64 KiB buffer); a card read
    next is recorded and the file written whole in the new layout. A whole file of the marshalled layout (format 2)
    at the same name is ignored too."""
    filestamps.flush()
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    key = filestamps._key()
    if kind == "forged":
        body = b"(" + struct.pack("<i", 2**31 - 1) + b"N" * 63
    else:
        body = marshal.dumps({"key": key, "clock": time.time_ns(), "records": {(1, 2): (4096, 3, 4, bytes(32))}}, 4)
    raw = digests.blake2b(body).hexdigest().encode("ascii") + b"\n" + body
    assert kind != "forged" or len(raw) == 133
    path = tmp_path / "cache" / "stamps" / f"{key}.stamps"
    path.parent.mkdir(mode=0o700, parents=True)
    path.write_bytes(raw)
    path.chmod(0o600)
    card = tmp_path / "a100.toml"
    shutil.copyfile(CARD, card)
    monkeypatch.setattr(filestamps, "_clock", lambda: time.time_ns() + 10 * 10**9)  # the card is an old file
    try:
        tracemalloc.start()
        try:
            records = filestamps._loaded()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert records == {} and peak < 128 << 10  # the read's 64 KiB buffer among it
        digests.blake2b_digest(files.read_regular(card, 1 << 20))
        assert filestamps._learned
    finally:
        filestamps.flush()
    st = card.stat()
    kept = filestamps._parsed(path.read_bytes(), key)
    digest = digests.blake2b(CARD.read_bytes()).digest()
    assert kept is not None
    assert kept[1] == {(st.st_dev, st.st_ino): (st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)}
    assert path.stat().st_size == 65 + 84 + 72


def test_a_record_that_does_not_fit_is_left_out_and_a_lying_count_is_not_read() -> None:
    """A record whose time is past 2262 (no 64-bit number holds it) or whose digest is not 32 bytes is left out of the
    file, the others kept in order; a file whose head states one record more or fewer than it holds is not read."""
    key = "ab" * 32
    good = {(1, 2): (4096, 3, -4, bytes(range(32))), (5, 2**64 - 1): (2**64 - 1, 2**63 - 1, 0, bytes(32))}
    bad = {(6, 7): (4096, 2**63, 0, bytes(32)), (8, 9): (4096, 1, 1, bytes(31)), (10, -1): (1, 1, 1, bytes(32))}
    body = filestamps._body(key, 123, {**bad, **good})
    raw = digests.blake2b(body).hexdigest().encode("ascii") + b"\n" + body
    assert filestamps._parsed(raw, key) == (123, good)
    assert filestamps._parsed(raw, "cd" * 32) is None  # another key
    for count in (1, 3, 2**32 - 1):
        lying = body[:80] + struct.pack("<I", count) + body[84:]
        assert filestamps._parsed(digests.blake2b(lying).hexdigest().encode("ascii") + b"\n" + lying, key) is None


# --- 3. attacks on session 38's features -----------------------------------------------------------------------------


def test_a_stack_fits_card_that_does_not_read_is_named_on_the_audits_card_line() -> None:
    """``audit locks/r1-qwen7b-h200-llamacpp.lock.toml`` with facts/cards/l40s.toml removed read "the fit reads the 11
    cards' … (60 facts)" and exited 0 (a FIFO there refuses the audit; ``check`` names the problem): the card that
    does not read is named and its facts said uncounted."""
    from passprice.audit import Calibration, _card_citations
    from passprice.registry import Root

    paths, facts, sources, unread = _card_citations(Root(REPO), ["a100_pcie_80gb", "no_such_card"])
    assert (facts, unread) == (6, ("no_such_card",))
    line = Calibration("registry/measurements/m.toml", "s", 2, ("a100_pcie_80gb", "no_such_card"), (), paths, facts,
                       sources, unread).cards_line(most=1)
    assert line is not None and line.endswith(
        " and 2 more sources; card no_such_card does not read today (passprice check says why): its facts are not "
        "counted")
    assert Calibration("f", "s", 1, ("x", "y"), unread=("x", "y")).cards_line() == (
        "the fit reads no card's facts; cards x, y do not read today (passprice check says why): their facts are not "
        "counted")


def test_a_plain_range_of_positions_is_checked_by_its_ends_not_value_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sweep --positions 0-3999999`` spent 5.6 s parsing (a ``str`` and a ``float`` of each value, then each value
    checked) before its 68,000,000-row grid was refused; now 1.95 s whole process. Counted here, not timed: the
    range's 10,000 values are checked by their two ends; out of range, an end is named; a non-finite end is refused
    without reading the range (``float(10**400)`` raises ``OverflowError``)."""
    import math

    from passprice import sweep
    from passprice.errors import InputError

    seen = []
    isfinite = math.isfinite
    monkeypatch.setattr(sweep.math, "isfinite", lambda v: seen.append(v) or isfinite(v))
    values = sweep.parse_numbers("0-9999", float, "--positions")
    assert (len(values), values[0], values[-1], type(values[-1])) == (10_000, 0.0, 9_999.0, float)
    assert len(seen) <= 4  # was 10,000
    assert sweep.parse_numbers("3-5,7", int, "--batches") == (3, 4, 5, 7)
    with pytest.raises(InputError, match=r"^--batches: '5-10': 10 is out of range \(a whole number "
                                         r"from 0 to 8\)$"):
        sweep.parse_numbers("5-10", int, "--batches", most=8)
    big = "1" + "0" * 400
    with pytest.raises(InputError, match=r": inf is out of range \(each must be a finite number at least 0\)$"):
        sweep.parse_numbers(f"{big}-{big}", float, "--positions")
