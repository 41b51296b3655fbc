"""left61: attack80's leftovers (issue 13), each reproducer built in its test.

- (2) a tag character (U+E0000–U+E007F) in a one-line text passed: the schemas' pattern (ECMA-262 without the ``u``
  flag) cannot hold a range past U+FFFF; now the ``one-line`` format the schemas state beside it refuses it.
- (3) two ``lock`` runs writing two locks of one name at one moment both passed ``require_unique_name``.
- (4) a gzip file wrapping an xz file was told "bad magic of an xz file (name it .gguf.xz)".
"""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest

from cli_helpers import bad

# --- (4) a file compressed twice ------------------------------------------------------------------------------------


def test_4_a_file_compressed_twice_is_named_so(tmp_path: Path) -> None:
    # before: "b.gguf.gz: byte 0: bad magic of an xz file (name it .gguf.xz): a GGUF file starts with b'GGUF'", for
    # a file whose name already was .gguf.xz's plus a gzip layer: the advice named nothing the user could do
    gguf = b"GGUF" + b"\x03\x00\x00\x00" + bytes(16)
    cases = {
        "b.gguf.gz": (gzip.compress(lzma.compress(gguf)), "an xz stream inside a gzip member", "gunzip", ".gguf.xz"),
        "c.gguf.xz": (lzma.compress(lzma.compress(gguf)), "an xz stream inside an xz stream", "unxz", ".gguf.xz"),
        "d.gguf.gz": (gzip.compress(gzip.compress(gguf)), "a gzip member inside a gzip member", "gunzip", ".gguf.gz"),
        "f.gguf.xz": (lzma.compress(gzip.compress(gguf)), "a gzip member inside an xz stream", "unxz", ".gguf.gz"),
    }
    for name, (data, what, tool, suffix) in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert bad("header", str(path)) == [
            f"passprice: error: {path}: byte 0: bad magic: {what}, a file compressed twice (passprice takes off one "
            f"layer): take off the outer one ({tool}) and give the file it holds, named {suffix}"]
    # a plain file holding xz's or gzip's bytes is read through them, as before; a zip inside a gzip is named as ever
    path = tmp_path / "z.gguf.gz"
    path.write_bytes(gzip.compress(b"PK\x03\x04" + bytes(20)))
    assert bad("header", str(path)) == [
        f"passprice: error: {path}: byte 0: bad magic of a zip file: a GGUF file starts with b'GGUF'"]


# --- (2) a tag character in a one-line text ---------------------------------------------------------------------------


def test_2_a_tag_character_in_a_one_line_text_is_refused(tmp_path: Path) -> None:
    # before: a source's `read` (and every one-line text) holding U+E0041 (TAG LATIN CAPITAL LETTER A) passed check
    # and audit (exit 0): the schemas' pattern, an ECMA-262 class without the `u` flag, holds no range past U+FFFF.
    # Now each schema states "format": "one-line" beside the pattern, checked by schema.one_line.
    import json

    from cli_helpers import copy_root
    from passprice.schema import ONE_LINE, ONE_LINE_FORMAT, one_line, problems

    assert ONE_LINE_FORMAT == "one-line"
    for ch in ("\U000e0001", "\U000e0041", "\U000e007f", "\U0001bca0", "\U0001d173", "\U000e0fff"):
        assert not one_line(f"Table{ch} 1"), repr(ch)
    for ch in ("\U0001f600", "\U000e0100", "\U00020000", "\u200d", "\ufe0f"):  # emoji, a variation selector, CJK
        assert one_line(f"Table{ch} 1"), repr(ch)
    # every schema states the format wherever it states the one-line pattern (the 102 places)
    stated = 0
    for path in sorted((Path(__file__).parent.parent / "schema").glob("*.schema.json")):
        todo = [json.loads(path.read_text(encoding="utf-8"))]
        while todo:
            node = todo.pop()
            if isinstance(node, dict):
                if node.get("pattern") == ONE_LINE:
                    assert node.get("format") == ONE_LINE_FORMAT, path.name
                    stated += 1
                todo.extend(node.values())
            elif isinstance(node, list):
                todo.extend(node)
    assert stated == 102
    line = ("holds a control character, a line separator, a bidi control or an invisible character (a newline, a tab, "
            "U+2028, U+202E, U+200B …): write it on one line")
    # a text the pattern refuses too (a newline and a tag) is one line, as before
    for title, shown in (("ab\n\U000e0041", "ab\\n\\U000e0041"), ("ab\U000e0041", "ab\\U000e0041")):
        found = problems({"source": {"title": title, "kind": "web-page", "read": "x"}}, "source")
        assert [x for x in found if x.startswith("source.title")] == [f"source.title: '{shown}' {line}"]
    root = copy_root(tmp_path)
    source = root / "sources" / "alvarobartt-cuda-device-query.toml"
    text = source.read_text(encoding="utf-8")
    assert text.count('read = "') == 1
    source.write_text(text.replace('read = "', 'read = "\U000e0041', 1), encoding="utf-8")
    lines = bad("audit", "--source", "alvarobartt-cuda-device-query", root=root)
    assert len(lines) == 1 and lines[0].startswith(f"passprice: error: {source}: source.read: '\\U000e0041")
    assert lines[0].endswith(f" {line}")
    source.write_text(text, encoding="utf-8")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    before = card.read_bytes()
    assert bad("fact", "set", "h200_sxm_141gb", "streams.read", "--value", "0.9", "--unit", "1", "--provenance",
               "estimated", "--source", "nvidia-h200-datasheet", "--locator", "Table\U000e0031", root=root) == [
        f"passprice: error: {card}: streams.read.locator: 'Table\\U000e0031' {line}"]
    assert card.read_bytes() == before


# --- (3) two locks of one name written at one moment ------------------------------------------------------------------

#: One ``lock`` run in a process of its own (``python -c _RACER ROLE MARKS ARGS…``). Role ``a`` stops after its check
#: of names (inside the folder's lock) until ``b`` is at the folder's lock; role ``b`` says so as it gets there.
_RACER = """
import sys, time
from pathlib import Path
from passprice import locking
role, marks, args = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]

def wait_for(path):
    end = time.monotonic() + 60
    while not path.exists():
        if time.monotonic() > end:
            sys.exit(99)
        time.sleep(0.01)

if role == "a":
    checked = locking.require_unique_name
    def require_unique_name(*a, **k):
        checked(*a, **k)
        (marks / "a-checked").touch()
        wait_for(marks / "b-at-the-lock")
    locking.require_unique_name = require_unique_name
else:
    held = locking.names_held
    def names_held(*a, **k):
        (marks / "b-at-the-lock").touch()
        return held(*a, **k)
    locking.names_held = names_held
from passprice.entry import main
sys.argv = ["passprice", *args]
main()
"""


def test_3_two_locks_of_one_name_written_at_one_moment_are_not_both_written(tmp_path: Path) -> None:
    # before: `lock R1 --name same -o locks/a.lock.toml` and `lock gemma3-270m-h100 --name same -o locks/b.lock.toml`
    # at one moment each passed require_unique_name (the other's file not yet written), both wrote (exit 0), and
    # check then refused the pair. Now the check and the write hold the folder's flock (locking.names_held): the
    # second waits for the first's write, then is refused by the first's name.
    import subprocess
    import sys
    import time

    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    for old in (root / "locks").iterdir():
        old.unlink()
    marks = tmp_path / "marks"
    marks.mkdir()
    a, b = root / "locks" / "a.lock.toml", root / "locks" / "b.lock.toml"

    def start(role: str, serving: str, output: Path) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", _RACER, role, str(marks), "--root", str(root), "lock", serving,
                                 "--name", "same", "-o", str(output)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    first = start("a", "r1-qwen7b-h200", a)
    end = time.monotonic() + 60
    while not (marks / "a-checked").exists() and first.poll() is None and time.monotonic() < end:
        time.sleep(0.01)
    second = start("b", "gemma3-270m-h100", b)
    _, err_a = first.communicate(timeout=120)
    _, err_b = second.communicate(timeout=120)
    assert (first.returncode, err_a) == (0, ""), err_a
    assert second.returncode == 2, err_b
    assert err_b.splitlines() == [
        f"passprice: error: {b}: lock.name: 'same' is also the name of locks/a.lock.toml, which pins other facts: a "
        "lock's name must be unique (`passprice check` refuses the two): lock it under another name (--name NAME, or "
        "-o locks/NAME.lock.toml), or remove locks/a.lock.toml; nothing written"]
    assert sorted(p.name for p in (root / "locks").iterdir()) == ["a.lock.toml"]


# --- (1) many copies of a lock in locks/ ------------------------------------------------------------------------------


def test_1_copies_of_a_lock_are_judged_once_each_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: forged_pins priced each lock file twice (HEAD's and BASE's inputs today) and digested every fact of
    # each side again for each: 1,000 copies in locks/ made 168,440 Fact.digest calls and 2,000 prices (diff 29.1 s
    # wall, 12.3 s CPU, issue 13); 4 copies here: 476 digests and 8 prices. Now each distinct content once: 20 copies
    # and one of other bytes (a comment) priced twice in all, each file's line naming it.
    from cli_helpers import copy_root
    from passprice import pinforgery
    from passprice.facts import Fact
    from passprice.registry import Root

    note = "One direction of the product page's PCIe Gen5 figure, which counts both together."  # host.read (left60)
    # one folder is both sides: the pinned note edited on both, no lock on BASE (none listed): the pin no side holds
    head = copy_root(tmp_path)
    lock = (head / "locks" / "r1-qwen7b-h200.lock.toml").read_bytes()
    for other in (head / "locks").iterdir():
        other.unlink()
    card = head / "facts" / "cards" / "h200_sxm_141gb.toml"
    card.write_text(card.read_text(encoding="utf-8").replace(note, note.replace("together", "together here")),
                    encoding="utf-8")
    for i in range(1, 21):
        (head / "locks" / f"c{i}.lock.toml").write_bytes(lock)
    (head / "locks" / "c21.lock.toml").write_bytes(lock + b"\n# a copy of other bytes\n")
    calls = {"digest": 0, "today": 0}
    real_digest, real_today = Fact.digest, pinforgery._today

    def digest(self: Fact) -> str:
        calls["digest"] += 1
        return real_digest(self)

    def today(*args: object) -> object:
        calls["today"] += 1
        return real_today(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(Fact, "digest", digest)
    monkeypatch.setattr(pinforgery, "_today", today)
    changed = [f"locks/c{i}.lock.toml" for i in range(1, 22)]
    lines = pinforgery.forged_pins(Root(head), Root(head), [], changed)
    fact = ("64 GB/s (derived) cited nvidia-h200-product-page: Specifications table, Interconnect row (its label, "
            "the H200 SXM cell, the H200 NVL cell): 'Interconnect NVIDIA NVLink™: 900GB/s PCIe Gen5: 128GB/s 2- or "
            "4-way NVIDIA NVLink bridge: 900GB/s per GPU PCIe Gen5: 128GB/s' (the SXM cell's PCIe Gen5 figure, both "
            "directions together)")
    assert list(lines) == [
        f"{rel}: facts.host.read: pins {fact}, a fact no side of the change holds (HEAD's today: {fact}) and BASE's "
        "lock did not pin: a lock's facts are pinned by passprice lock from a registry, and a pin neither side holds "
        "(written by hand, or made before a later commit of the change edited the fact) cannot be traced; re-lock "
        f"it: passprice lock --update -o {rel}" for rel in changed]
    assert calls["today"] == 2  # was 42: each file priced with each side's inputs
    assert calls["digest"] < 120  # each distinct fact once (was about 119 a lock file: 2,500 here)
