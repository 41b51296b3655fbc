"""Round 21 of hostile input (issue 13): the features landed since 7938655, attacked.

- (5) A pinned fact rewritten to a quantity whose double is the pinned one's (``141 GB`` → ``0.14100000000000001
  TB``: 141000000000.00001 B written, 1.41e11 B as a double) was shown as "rewritten, same quantity" and passed
  ``check --frozen`` (exit 0): the quantity written moved. Quantities are compared exactly now, as written. (The
  same trick on ``memory.bandwidth``, ``0.0048000000000000004 PB/s``, was caught by the derivations that read it.)
- (4) A hard link (``ln FILE OTHER``) or a FIFO made at ``-o FILE --force`` while the text was written (a sweep
  writes rows as it prices them) was replaced by the rename: the refusal looked once, before the first row.
- (3) A committed chain of links (``locks/sub → ../via``, ``via → archive``) read "no changes" in the review.
- (1) A left temporary file named with a newline split check's warning and its ``rm``.
- (11) ``simulate gemma3-270m-h100 --max-batch 4096`` on the benchmark's 925 KB queue ran 2.1 to 2.4 s of CPU
  (load 4 to 6, 2 cores) before its refusal: the peak check's per-sequence sums were not charged.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import copy_root, invoke

R1 = "r1-qwen7b-h200"
CARD = "facts/cards/h200_sxm_141gb.toml"
WRITTEN = 'value = 141\nunit = "GB"'


def _rewrite(root: Path, value: str, unit: str) -> None:
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    assert text.count(WRITTEN) == 1
    card.write_text(text.replace(WRITTEN, f'value = {value}\nunit = "{unit}"'), encoding="utf-8")


def test_a_quantity_that_rounds_to_the_pinned_double_is_drift_not_a_rewrite(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rewrite(root, "0.14100000000000001", "TB")
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 1, result.output
    assert "    memory.capacity: 141 GB (published) → 0.14100000000000001 TB (published)" in (
        result.stdout.splitlines()
    )
    assert "rewritten, same quantity" not in result.stdout


def test_the_same_quantity_in_a_larger_unit_is_still_a_rewrite(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _rewrite(root, "0.000141", "PB")
    result = invoke("check", "--frozen", root=root)
    assert result.exit_code == 0, result.output
    assert "    memory.capacity: 141 GB → 0.000141 PB (rewritten, same quantity)" in result.stdout.splitlines()


# --- (1) a left temporary file of an odd name ------------------------------------------------------------------------


def test_a_left_temporary_file_named_with_a_newline_is_warned_of_in_one_line(tmp_path: Path) -> None:
    """``.a<newline>b.<12 hex>.tmp`` (mode 0600) in locks/: the warning named the target ``a``, a newline, then
    ``b through …`` on a second line, and its ``rm '…'`` spanned both; ESC in the name was written raw to the
    terminal. Now the target is escaped and the ``rm`` is bash's ``$'…'`` word naming the very file."""
    import os
    import subprocess

    root = copy_root(tmp_path)
    names = [b".a\nb.0123456789ab.tmp", b".x\x1b[31mRED.0123456789ab.tmp", b".\xff.0123456789ab.tmp"]
    for name in names:
        os.close(os.open(os.path.join(os.fsencode(root / "locks"), name), os.O_CREAT | os.O_WRONLY, 0o600))
    result = invoke("check", root=root)
    lines = [line for line in result.stdout.splitlines() if "temporary file" in line]
    assert len(lines) == 3, result.stdout
    assert not any(line.startswith("b through") for line in result.stdout.splitlines())
    assert "\x1b" not in result.output
    newline = next(line for line in lines if "locks/.a\\nb." in line)
    assert "passprice writes a\\nb through" in newline
    words = [line.rsplit("(rm ", 1)[1][:-1] for line in lines]
    assert f"$'{root}/locks/.a\\x0ab.0123456789ab.tmp'" in words
    assert f"$'{root}/locks/.x\\x1b[31mRED.0123456789ab.tmp'" in words
    assert f"$'{root}/locks/.\\xff.0123456789ab.tmp'" in words
    # Each rm word names the very file to bash.
    for word in words:
        shown = subprocess.run(["bash", "-c", f"test -f {word} && echo there"], capture_output=True, text=True)
        assert shown.stdout == "there\n", word


# --- (3) a committed link in locks/ leading to a link to a folder of locks -------------------------------------------

STRAY = ("locks/sub: not a folder passprice reads: its 1 .toml file is neither checked nor priced (passprice "
         "reads locks/ itself, not the folders in it: move them to locks/)")


def _linked(tmp_path: Path, *links: tuple[str, str]) -> Path:
    import shutil

    from test_diff import commit_all
    from test_slip_11 import _registry_with_lock

    tmp_path.mkdir(parents=True, exist_ok=True)
    path = _registry_with_lock(tmp_path / "registry")
    (path / "archive").mkdir()
    shutil.copyfile(path / "locks" / f"{R1}.lock.toml", path / "archive" / "old.lock.toml")
    for link, target in links:
        (path / link).parent.mkdir(parents=True, exist_ok=True)
        (path / link).symlink_to(target)
    commit_all(path, "a folder of old locks, linked into locks/ through another link")
    return path


def test_a_committed_chain_of_links_to_a_folder_of_locks_fails_the_review_as_check_fails_it(tmp_path: Path) -> None:
    """``locks/sub → ../via`` and ``via → archive`` (a folder of one lock), committed: a checkout's check follows
    both and fails the stray folder; the review listed ``via/`` at the revision (a link there, no folder) and found
    nothing, 'no changes'."""
    path = _linked(tmp_path, ("locks/sub", "../via"), ("via", "archive"))
    assert f"passprice: error: {STRAY}" in invoke("check", root=path).stderr  # the checkout's own check
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 2, result.output
    assert f"passprice: error: on HEAD: {STRAY}" in result.stderr.splitlines()


def test_committed_links_that_loop_or_lead_out_through_a_chain(tmp_path: Path) -> None:
    """A loop (``locks/sub → ../via``, ``via → locks/sub``) is no folder in a checkout (ELOOP) nor in the review:
    no changes, as check finds none; a chain whose second link leads out of the repository is refused naming the
    link in locks/."""
    from test_diff import git

    path = _linked(tmp_path / "loop", ("locks/sub", "../via"), ("via", "locks/sub"))
    assert invoke("check", root=path).exit_code == 0
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0
    path = _linked(tmp_path / "out", ("locks/sub", "../via"), ("via", "../.."))
    sha = git(path, "rev-parse", "HEAD")[:12]
    result = invoke("diff", "main", "HEAD", root=path)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"passprice: error: locks/sub: a symbolic link at {sha}, leading outside the repository; passprice diff "
        "compares the files themselves (commit the file, or the folder's files, in place of the link)"
    ]


# --- (4) a hard link made while the text is written ------------------------------------------------------------------


def test_a_hard_link_made_while_a_file_is_written_is_refused_before_the_rename(tmp_path: Path) -> None:
    """``-o FILE --force`` of a sweep writes its rows as they are priced (seconds): ``ln FILE OTHER`` made in that
    time was not seen (the hard-link refusal looked once, before the first row), and the rename left OTHER holding
    the old text. The file is looked at again just before the rename now."""
    import os

    import pytest

    from passprice.errors import InputError
    from passprice.files import write_atomically

    out, other = tmp_path / "out.csv", tmp_path / "other.csv"
    out.write_text("old\n", encoding="utf-8")

    def rows():  # type: ignore[no-untyped-def]
        yield "a,b\n"
        os.link(out, other)  # another process, while the rows are priced
        yield "1,2\n"

    with pytest.raises(InputError) as refused:
        write_atomically(out, rows(), force=True)
    assert str(refused.value) == (
        f"{out}: has 2 names (hard links); passprice replaces a file by renaming a new one into place, which would "
        "leave the other names holding the old text: remove the other names, or give this one a copy of its own first"
    )
    assert out.read_text(encoding="utf-8") == other.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.csv", "out.csv"]  # no temporary file left


def test_a_file_turned_into_a_fifo_while_written_is_not_replaced(tmp_path: Path) -> None:
    import os

    import pytest

    from passprice.errors import InputError
    from passprice.files import write_atomically

    out = tmp_path / "out.csv"
    out.write_text("old\n", encoding="utf-8")

    def rows():  # type: ignore[no-untyped-def]
        yield "a,b\n"
        out.unlink()
        os.mkfifo(out)
        yield "1,2\n"

    with pytest.raises(InputError) as refused:
        write_atomically(out, rows(), force=True)
    assert str(refused.value) == (
        f"{out}: is a FIFO (named pipe), not a regular file: passprice replaces regular files only"
    )


# --- (11) simulate --max-work: the peak check's sums ------------------------------------------------------------------


def test_the_peak_check_of_4096_sequences_is_charged(tmp_path: Path) -> None:
    """15,000 requests at 0 (the benchmark's queue, 925 KB) under ``--max-batch 4096``: 14 peak checks summed
    56,878 sequences' bytes (0.86 s of CPU) uncharged, refused after 16 steps and 2.1 to 2.4 s of CPU. Charging every
    sequence summed refused it after 7, but refused the README's own simulate example too. Now (issue 13, session
    13) the other active sequences' bytes are summed once a check, the prompts prefilling in one matrix of rows ×
    steps, each charged by what it sums (``simulate.WORK_PEAK_SEQUENCES``, ``WORK_ELEMENTS``): refused after 15
    steps, 1.0 s of CPU (1.8 s before, paired, load 3). Since the planning of prompt chunks backs off after a try
    that costs more than the steps it keeps (``simulate.PLAN_BACKOFF``, session 17), refused after 529 steps, in the
    same 1.0-1.1 s of CPU (load 4.2; ``simulate --help`` 0.11-0.16 s beside it); since each peak check costs
    ``simulate.WORK_PEAK`` besides (attack round 35), after 528."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from simulate import queue_text

    trace = tmp_path / "queue.jsonl"
    trace.write_text(queue_text(), encoding="utf-8")
    result = invoke("simulate", "gemma3-270m-h100", "--trace", str(trace), "--max-batch", "4096")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "passprice: error: simulate: the continuous run passed the 56,943 units of work left of --max-work after 528 "
        "steps, 1.3 s into the trace with 446 of 15,000 requests served (a unit is about 10 µs of CPU: a step priced "
        "alone 8 and 1 a 48 sequences, a stretch of steps priced together 40, a try of planning admissions ahead 60 "
        "and more); simulate part of the trace, or raise --max-work"
    ]


def test_the_shared_prefixes_summed_at_each_step_are_charged(tmp_path: Path) -> None:
    """9,472 requests at 0 (990 KB), each naming its own 512-token prefix: every step summed the bytes of every
    prefix held, uncharged, and the command ran 1.8 to 2.3 s of CPU (load 4.5) before its refusal after 1,640 steps;
    now a unit a 32 prefixes, refused after 646; and since each step priced alone is charged a unit more for every 48
    active sequences (issue 13, session 13), after 226, 1.06 s of CPU against 1.80 s (paired, load 4.7)."""
    import json

    rows = []
    for i in range(9472):
        rows.append(json.dumps({"arrival_s": 0, "prompt_tokens": 700, "output_tokens": i % 300 + 1,
                                "prefix_id": f"p{i}", "prefix_tokens": 512}) + "\n")
    trace = tmp_path / "prefixes.jsonl"
    trace.write_text("".join(rows), encoding="utf-8")
    result = invoke("simulate", "gemma3-270m-h100", "--trace", str(trace))
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "units of work left of --max-work after 226 steps, 0.2 s into the trace with 252 of 9,472 requests" in line


# --- (9) fact set --value: a figure a double cannot hold as written ---------------------------------------------------


def test_a_value_a_double_does_not_hold_as_written_is_refused_as_written(tmp_path: Path) -> None:
    """``--value 4.8000000000000000000001`` was written ``4.8`` with no word (the figure given was not the one
    written); ``1e309`` was named as ``inf`` and ``2.5e-324`` as ``5e-324``, figures nobody gave."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    card = root / CARD
    before = card.read_bytes()
    args = ("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--unit", "TB/s", "--provenance", "published",
            "--source", "nvidia-h200-datasheet", "--locator", "Table 1")
    assert bad(*args, "--value", "4.8000000000000000000001", root=root) == [
        "passprice: error: --value: '4.8000000000000000000001' holds more than a double keeps (it reads as 4.8): "
        "write 4.8, or the figure in another unit"
    ]
    assert bad(*args, "--value", "1e309", root=root) == [
        "passprice: error: --value: '1e309' is too large for a double (it reads as inf): write the figure in a larger "
        "unit"
    ]
    bad(*args, "--value", "2.5e-324", root=root, says="holds more than a double keeps (it reads as 5e-324)")
    assert card.read_bytes() == before
    # A decimal a double holds, however written, is set.
    for written in ("4.80", "4.8e0", "0.14100000000000001"):
        assert invoke(*args, "--value", written, root=root).exit_code == 0


# --- (2) a lock copied under a name holding a newline -----------------------------------------------------------------


def test_a_lock_copied_under_a_name_with_a_newline_is_named_in_one_line(tmp_path: Path) -> None:
    """``cp locks/r1-qwen7b-h200.lock.toml locks/$'a\\nb.lock.toml'``: check's duplicate warning and the lock's
    status line printed the name raw, each split in two at the newline."""
    import shutil

    root = copy_root(tmp_path)
    shutil.copyfile(root / "locks" / f"{R1}.lock.toml", root / "locks" / "a\nb.lock.toml")
    result = invoke("check", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert not any(line.startswith("b.lock.toml") for line in lines), result.stdout
    assert f"lock {R1} (locks/a\\nb.lock.toml, locks serving {R1}): ok" in lines
    assert (
        f"  warning: locks/a\\nb.lock.toml duplicates locks/{R1}.lock.toml: it locks serving {R1} (price) with the "
        f"same pins, floors and price under another file name; locks/a\\nb.lock.toml is named '{R1}' inside, not "
        f"after its file; it guards nothing locks/{R1}.lock.toml does not, and re-locking one leaves the other "
        "pinning the old facts: remove one"
    ) in lines


def test_left_temporary_files_past_twenty_are_counted_in_one_line(tmp_path: Path) -> None:
    # Attack round 21 (found, fixed by the lead): 50,000 left temporary files in locks/ printed 50,050 warning lines.
    from passprice.registry import MAX_TEMPORARY_LINES

    assert MAX_TEMPORARY_LINES == 20
    root = copy_root(tmp_path)
    for i in range(25):
        left = root / "locks" / f".x.lock.toml.{i:012x}.tmp"
        left.write_text("x", encoding="utf-8")
        left.chmod(0o600)
    result = invoke("check", root=root)
    lines = [line for line in result.output.splitlines() if "temporary file" in line]
    assert len(lines) == 21, lines
    assert lines[-1] == (
        f"  warning: and 5 more temporary files passprice writes through, left the same way, in {root}/locks (5): "
        "list them with ls -a, and remove those no passprice is writing now"
    )
