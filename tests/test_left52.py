"""Left52 (issue 13's small leftovers): each item's failing input kept as a test, built here."""

from __future__ import annotations

import lzma
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFWriter

from cli_helpers import bad, invoke

# --- 3. an .xz with stream padding ----------------------------------------------------------------------------------


def _tiny_header(path: Path) -> bytes:
    """A small GGUF file (a llama header, one tensor), its bytes."""
    w = GGUFWriter(path, "llama")
    w.add_uint32("llama.block_count", 2)
    w.add_tensor("token_embd.weight", np.arange(64, dtype=np.float32).reshape(8, 8))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path.read_bytes()


def _sha256_line(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if line.strip().startswith("sha256")]
    return line


def test_3_an_xz_with_stream_padding_reads_as_xz_reads_it(tmp_path: Path) -> None:
    # Before: `xz -c f > a.xz; printf '\0\0\0\0' >> a.xz` (a valid file: xz -t passes it) read "cannot decompress:
    # Compressed file ended before the end-of-stream marker was reached", exit 2; bytes after the last stream that
    # were no stream were passed over (or read as that same line when under 6 bytes).
    data = _tiny_header(tmp_path / "h.gguf")
    stream = lzma.compress(data, format=lzma.FORMAT_XZ)
    plain = invoke("header", str(tmp_path / "h.gguf"))
    assert plain.exit_code == 0, plain.output
    padded = tmp_path / "a.gguf.xz"
    padded.write_bytes(stream + b"\0" * 4)
    done = invoke("header", str(padded))
    assert done.exit_code == 0, done.output
    assert _sha256_line(done.stdout) == _sha256_line(plain.stdout)
    # two streams, padded between and after (xz -t passes it): their bytes joined
    half = len(data) // 2
    joined = tmp_path / "j.gguf.xz"
    joined.write_bytes(lzma.compress(data[:half]) + b"\0" * 8 + lzma.compress(data[half:]) + b"\0" * 12)
    done = invoke("header", str(joined))
    assert done.exit_code == 0, done.output
    assert _sha256_line(done.stdout) == _sha256_line(plain.stdout)
    # padding of a length not a multiple of 4, and bytes that are neither padding nor a stream: refused, at their
    # offset in the compressed file
    for name, tail, said in (
        ("p5.gguf.xz", b"\0" * 5, f"byte {len(stream):,}: 5 bytes of stream padding, not a multiple of 4 (the xz "
                                  "format's rule)"),
        ("p3.gguf.xz", b"\0" * 4 + lzma.compress(b"") + b"\0" * 3,
         f"byte {len(stream) + 4 + len(lzma.compress(b'')):,}: 3 bytes of stream padding, not a multiple of 4 (the "
         "xz format's rule)"),
        ("junk.gguf.xz", b"\0" * 4 + b"junk", f"byte {len(stream) + 4:,}: neither stream padding nor another xz "
                                              "stream"),
    ):
        path = tmp_path / name
        path.write_bytes(stream + tail)
        assert bad("header", str(path)) == [f"passprice: error: {path}: cannot decompress: {said}"]


def test_3_stream_padding_is_read_only_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run of zeros after a stream is read up to XZ_PADDING_LIMIT bytes (1 MiB), then refused: no run of zeros
    # makes the reader loop on it. Forced small here.
    from passprice import gguf_header

    monkeypatch.setattr(gguf_header, "XZ_PADDING_LIMIT", 64)
    stream = lzma.compress(_tiny_header(tmp_path / "h.gguf"), format=lzma.FORMAT_XZ)
    path = tmp_path / "long.gguf.xz"
    path.write_bytes(stream + b"\0" * 64)
    assert invoke("header", str(path)).exit_code == 0
    path.write_bytes(stream + b"\0" * 68)
    assert bad("header", str(path)) == [
        f"passprice: error: {path}: cannot decompress: byte {len(stream):,}: more than 64 bytes of stream padding "
        "after the stream ending there (passprice reads no more)"]


# --- 6. one pattern for a number a locator writes -------------------------------------------------------------------


def test_6_both_cuts_read_a_power_of_ten_as_one_number() -> None:
    # Before: textchange._NUMBER and diff._LOCATOR_NUMBER, two patterns without a power of ten: `2e3` read as the
    # figures 2 and 3 (a quote kept for a figure 3 it does not state, not for the 2000 it does), `x1e-400` as 400 in
    # diff's (a figure kept that is a power's digits) and as 1 and 400 in textchange's. Now one pattern
    # (textchange.NUMBER) read by one function (textchange.figure_read) in both, and in the review's reader.
    from passprice.review.changes import _quoted_figures
    from passprice.review.quotes import _cut_keeping
    from passprice.textchange import cut_keeping_figure

    quoted = "x " * 60 + "'rate 2e3 tokens' and more"
    assert cut_keeping_figure(quoted, 20, 3) == "x x x x x x x x x x…"  # was "x x … x… 'rate 2e3 tokens'…"
    assert cut_keeping_figure(quoted, 20, 2000) == "x x x x x x x x x x… 'rate 2e3 tokens'…"  # was cut without it
    assert _cut_keeping(quoted, 20, (2000.0,)) == "x x x x x x x x x x… 'rate 2e3 tokens'…"
    glued = "z " * 60 + "x1e-400 GB/s here"
    assert _cut_keeping(glued, 30, (400.0,)) == "z z z z z z z z z z z z z z z…"  # was "… x1e-400 GB/s…"
    past = "y " * 60 + "a share of 1e-400 of the rows"
    assert _cut_keeping(past, 30, (400.0,)) == _cut_keeping(past, 30, (1.0,)) == "y y y y y y y y y y y y y y y…"
    assert _quoted_figures("x1e-400 and 2e3, pp512") == {2000.0}


# --- 4. the committed list of pricing models is sized before it is read -----------------------------------------------


def _git(repo: Path, *args: str) -> str:
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_4_a_committed_list_past_the_cap_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: `lock --update` of a checkout lock ran `git show HEAD:./src/passprice/pricing_models.json` and held its
    # whole output (a committed blob of any size) before looking at its length, then went on (exit 0). Now git's
    # size of it is asked first (ls-tree -l): past modelhistory.KNOWN_BYTES it is refused, not read, naming the
    # commit and the path, before the lock is written.
    import json
    import shutil

    from cli_helpers import copy_root
    from passprice import gitread, modelhistory

    root = copy_root(tmp_path)
    listed = root / "src" / "passprice" / "pricing_models.json"
    listed.parent.mkdir(parents=True)
    shipped = modelhistory.KNOWN.read_bytes()
    big = json.dumps({**json.loads(shipped), "pad": "x" * modelhistory.KNOWN_BYTES}).encode()
    listed.write_bytes(big)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a list past the cap")
    head = _git(root, "rev-parse", "HEAD")[:12]
    listed.write_bytes(shipped)  # the work tree's list as shipped: only the committed one is past the cap
    monkeypatch.setattr(modelhistory, "list_to_update", lambda where: where / "src" / "passprice" / listed.name)

    def unread(*args: object, **kwargs: object) -> object:
        raise AssertionError("the committed list was read")

    monkeypatch.setattr(gitread, "read_blobs", unread)
    lock = root / "locks" / "gemma3-270m-h100.lock.toml"
    before = lock.read_bytes()
    assert bad("lock", "--update", "-o", str(lock), root=root) == [
        f"passprice: error: {head}:src/passprice/pricing_models.json: {len(big):,} bytes as committed, past the "
        "1,048,576 bytes passprice reads of its list of pricing models (modelhistory.KNOWN_BYTES; not read): commit "
        "a list within the cap before locking this checkout; the lock was not written"]
    assert lock.read_bytes() == before and listed.read_bytes() == shipped
    # within the cap, it is read (from git's object, by its size) and its records told
    monkeypatch.undo()
    shutil.copyfile(modelhistory.KNOWN, listed)
    _git(root, "commit", "-q", "--no-verify", "-am", "the list as shipped")
    assert modelhistory.committed_list(root) == shipped
    model = json.loads(shipped)["models"][0]
    assert modelhistory._committed(root, model["digest"], model["records"][0])
    assert not modelhistory._committed(root, model["digest"], "sha256:" + "0" * 64)


# --- 5. a FIFO as a loose git object --------------------------------------------------------------------------------


def test_5_a_fifo_as_a_loose_object_is_named_before_git_runs(tmp_path: Path) -> None:
    # Before: `passprice diff HEAD~1 HEAD` in a repository whose changed card's blob (.git/objects/aa/66e1…) was a
    # FIFO waited in `git ls-tree -l` for git's time limit and said "git ls-tree: took longer than 60.0 s" (exit 2,
    # 61 s), naming nothing. Now the loose objects are looked through before git runs: one line naming the FIFO.
    import os
    import time

    from cli_helpers import copy_root
    from passprice import gitread
    from passprice.errors import InputError

    root = copy_root(tmp_path)
    for lock in (root / "locks").glob("*.lock.toml"):
        lock.unlink()
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "one")
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("\nvalue = 141\n") == 1
    card.write_text(text.replace("\nvalue = 141\n", "\nvalue = 140\n"), encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "two")
    blob = _git(root, "rev-parse", "HEAD:facts/cards/h200_sxm_141gb.toml")
    loose = root / ".git" / "objects" / blob[:2] / blob[2:]
    loose.unlink()
    os.mkfifo(loose)
    started = time.monotonic()
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {loose}: a FIFO (named pipe), where git reads an object of its repository: git would "
        "block reading it (or read without end), so passprice runs no git here; make it a regular file or remove it"]
    assert time.monotonic() - started < 20.0  # was 61 s: git's time limit
    # a link to a FIFO in its place, the same (git follows it)
    loose.unlink()
    os.mkfifo(tmp_path / "fifo")
    loose.symlink_to(tmp_path / "fifo")
    with pytest.raises(InputError) as raised:
        gitread.run_git(root, ["ls-tree", "-l", "HEAD", "facts/cards/"])
    assert str(raised.value).startswith(f"{loose}: a FIFO (named pipe), where git reads an object of its repository")


# --- 7. a jobs sweep's text spilled past the memory it holds --------------------------------------------------------


def _ahead(monkeypatch: pytest.MonkeyPatch, args: list[str], poison: dict[tuple[str, str], int]) -> tuple[Any, int]:
    """``sweep ARGS --jobs 2`` over test_hostile_56's ONE grid (block 0 gemma on two cards, block 1 qwen on two)
    with flaky42's interleaving forced, and every byte a process holds ahead of its turn spilled (HELD_BYTES forced
    to 1: a module constant read when a sweep starts; no knob added): the worker takes block 0 and holds in its first
    pair until this process, which took block 1 ahead of its turn, has spilled its first text of it (its rows come
    as one chunk, after both its pairs are made: ``poison`` makes rows not finite). Were nothing spilled, the worker
    would wait 30 s and fail. The result, and the anonymous files this process made."""
    import os
    import select

    from passprice import sweepjobs
    from passprice.sweep import Sweeper
    from test_hostile_56 import ONE, PAIRS, _poison, _sweep

    parent = os.getpid()
    holds_read, holds_write = os.pipe()  # the worker says it holds in block 0
    go_read, go_write = os.pipe()  # this process says it has spilled block 1's text (ahead of its turn)

    def waited(fd: int) -> None:
        ready, _, _ = select.select([fd], [], [], 30.0)
        assert ready, "the other process never signalled"
        os.read(fd, 1)

    claim, anonymous = sweepjobs._claim, sweepjobs._anonymous
    asked: list[bool] = []
    files: list[int] = []
    sent: list[bool] = []

    def go() -> None:
        if not sent:
            sent.append(True)
            os.write(go_write, b"x")

    def claimed(claims: int) -> int | None:
        if os.getpid() == parent and not asked:
            asked.append(True)
            waited(holds_read)
        return claim(claims)

    def counted(folder: Path | None) -> int:
        made = anonymous(folder)
        if os.getpid() == parent:
            files.append(1)
            if asked:  # past this process's claim: block 1's text spilled (write_shared's _Held asks its turn first)
                go()
        return made

    try:
        with monkeypatch.context() as patch:
            _poison(patch, dict(poison))
            poisoned = Sweeper._refused_under_stack

            def ordered(self: Sweeper, segment: Any) -> Any:
                key = (segment.common["serving"], segment.common["card"])
                if os.getpid() != parent and key == PAIRS[0]:
                    os.write(holds_write, b"x")
                    waited(go_read)
                return poisoned(self, segment)

            patch.setattr(Sweeper, "_refused_under_stack", ordered)
            patch.setattr(sweepjobs, "_claim", claimed)
            patch.setattr(sweepjobs, "_anonymous", counted)
            patch.setattr(sweepjobs, "HELD_BYTES", 1)
            result = _sweep([*ONE, *args, "--jobs", "2"])
    finally:
        for fd in (holds_read, holds_write, go_read, go_write):
            os.close(fd)
    return result, len(files)


def test_7_spilled_text_then_an_error_row_gives_the_one_process_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # sweepjobs keeps up to HELD_BYTES (64 MiB) of a block made ahead of its turn in memory, the rest in an anonymous
    # file: that path had no test (no grid of a test holds 64 MiB). flaky42's case with the text spilled: block 1's
    # qwen on h200 lies in this process's anonymous file when qwen on sn40l is refused; it is given (after block 0)
    # before the error, as --jobs 1 writes it.
    import json

    from test_hostile_56 import ONE, PAIRS, _inf, _poison, _sweep

    with monkeypatch.context() as patch:
        _poison(patch, {PAIRS[3]: 0})
        alone = _sweep([*ONE, "--json", "--jobs", "1"])
    line = _inf(*PAIRS[3], 1)
    assert (alone.exit_code, alone.stderr) == (2, f"passprice: error: {line}\n")
    rows = json.loads(alone.stdout)
    assert [(r["serving"], r["card"]) for r in rows[:3]] == PAIRS[:3]
    assert rows[3] == {"error": {"status": 2, "problems": [line]}}
    result, files = _ahead(monkeypatch, ["--json"], {PAIRS[3]: 0})
    assert (result.exit_code, result.stderr) == (2, f"passprice: error: {line}\n")
    assert result.stdout == alone.stdout
    assert files == 2  # the worker's file, and this process's own: block 1's text spilled there


@pytest.mark.parametrize("output", ["-", "rows.csv"])
def test_7_a_spilled_block_gives_the_one_process_bytes(output: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # The same interleaving without an error, to standard output (sweepjobs.shared_chunks: this process's anonymous
    # file) and to a file (write_shared: sweepjobs._Held's): block 1, made whole ahead of its turn, spilled and copied
    # in at its turn; the bytes are --jobs 1's.
    from test_hostile_56 import ONE, _sweep

    def to(name: str) -> list[str]:
        return ["-o", str(tmp_path / name)] if output != "-" else []

    alone = _sweep([*ONE, "--jobs", "1", *to("one.csv")])
    assert alone.exit_code == 0, alone.output
    result, files = _ahead(monkeypatch, to("two.csv"), {})
    assert result.exit_code == 0, result.output
    if output == "-":
        assert result.stdout_bytes == alone.stdout_bytes and alone.stdout.count("\n") == 5
        assert files == 2  # the worker's file and this process's own
    else:
        assert (tmp_path / "two.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
        assert files == 1, files  # block 1's text, held by sweepjobs._Held in its own anonymous file


# --- 1. a drift line names the parts that changed, in fact set's words ----------------------------------------------


def test_1_a_drift_line_names_the_parts_that_changed_as_fact_set_does(tmp_path: Path) -> None:
    # Before: the H200's memory.bandwidth given a note, its figure and citation kept: `fact set` said "(note added)",
    # the drift lines of price --lock, reproduce and check --frozen "(citation or note changed)". Now one function
    # (factparts.change_said) says it everywhere.
    import json

    from cli_helpers import copy_root

    root = copy_root(tmp_path)
    done = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.8", "--unit", "TB/s",
                  "--provenance", "published", "--source", "nvidia-h200-product-page", "--locator",
                  "Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL "
                  "figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'", "--note",
                  "Re-read 2026-12-06.", root=root)
    assert (done.exit_code, done.stdout) == (0, "facts/cards/h200_sxm_141gb.toml: memory.bandwidth: 4.8 TB/s "
                                                "(published) -> 4.8 TB/s (published) (note added)\n")
    said = "memory.bandwidth: 4.8 TB/s (published) → 4.8 TB/s (published) (note added)"
    priced = invoke("price", "--lock", "locks/r1-qwen7b-h200.lock.toml", "--json", root=root)
    assert priced.exit_code == 0, priced.output
    assert json.loads(priced.stdout)["lock"]["drifted"] == [said]
    reproduced = invoke("reproduce", "r1-qwen7b-h200", root=root)
    assert reproduced.exit_code == 0, reproduced.output
    # (fix54w: reproduce says a fact whose value is the pinned one briefly, its value once)
    assert ("    facts          1 drifted, every value as pinned: memory.bandwidth: 4.8 TB/s (note added)"
            in reproduced.stdout.splitlines())


# --- 2. the markdown review puts the locks out of date on BASE under their own heading --------------------------------


def test_2_the_markdown_says_the_locks_behind_on_base_apart_as_the_text_does(tmp_path: Path) -> None:
    # left51's case (a BASE whose H200 capacity moved without a re-lock and whose MI300X bandwidth was re-cited
    # without a re-pin; HEAD adds a checkpoint entry). Before: the text said both locks under "locks out of date
    # already on BASE (this change does not touch them)" and --json listed them as "behind", but the markdown put
    # them in its one "#### Locks" table, as if the change affected them. Now the markdown has that heading too.
    import shutil

    from cli_helpers import copy_root
    from passprice.registry import Root
    from passprice.review import diff, diff_markdown, diff_text
    from test_left51 import _only_locks

    base = copy_root(tmp_path / "base")
    _only_locks(base, "r1-qwen7b-h200", "r1-qwen7b-mi300x-int8kv", "gemma3-270m-h100")
    h200 = base / "facts" / "cards" / "h200_sxm_141gb.toml"
    h200.write_text(h200.read_text(encoding="utf-8").replace("[memory.capacity]\nvalue = 141\n",
                                                             "[memory.capacity]\nvalue = 140\n"), encoding="utf-8")
    mi300x = base / "facts" / "cards" / "mi300x.toml"
    old = "locator = \"memory section: '5.3 TB/s peak theoretical memory bandwidth'"
    mi300x.write_text(mi300x.read_text(encoding="utf-8").replace(old, old.replace("memory section", "Memory section")),
                      encoding="utf-8")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    entry = head / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    copied = entry.read_text(encoding="utf-8").replace('name = "gemma3-270m-q4_k_m"', 'name = "gemma-copy"', 1)
    (head / "registry" / "checkpoints" / "gemma-copy.toml").write_text(copied, encoding="utf-8")
    d = diff(Root(head), str(base), str(head))
    behind = "locks out of date already on BASE (this change does not touch them)"
    text = diff_text(d).splitlines()
    assert behind in text and "locks affected" not in text
    assert d.to_json()["behind"] == ["r1-qwen7b-h200", "r1-qwen7b-mi300x-int8kv"]
    md = diff_markdown(d).splitlines()
    at = md.index("#### Locks")
    assert md[at:at + 3] == ["#### Locks", "", "1 lock unaffected: `gemma3-270m-h100`"]  # no table: none affected
    at = md.index(f"#### {behind[0].upper()}{behind[1:]}")
    rows = [line for line in md[at:] if line.startswith("| `")]
    assert [row.split(" | ")[0] for row in rows[:2]] == ["| `r1-qwen7b-h200`", "| `r1-qwen7b-mi300x-int8kv`"]
    assert rows[0].endswith(" | ❌ out of date already on BASE (capacity_bytes): re-lock it |")
    assert sum(line.startswith("| `r1-qwen7b") for line in md) == 2  # in that table alone
