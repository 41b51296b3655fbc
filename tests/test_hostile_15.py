"""Attack round 15 (issue 13) on this session's code (the TPOT cap, lock --update --force --require, the LMDeploy
stack, the review's "asks another question" rule): each test builds the input that broke it and asserts what
passprice now does with it (exit status and the error line)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke, refused

# --- lock --update keeps the lock's stack and name ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--stack", "llamacpp-cuda-2405"), "--update keeps the lock's stack (none), not llamacpp-cuda-2405"),
        (("--name", "zz"), "--update keeps the lock's name (r1-qwen7b-h200-best), not zz"),
        (
            ("--force", "--require", "memory.bandwidth=assumed", "--name", "zz"),
            "--update keeps the lock's name (r1-qwen7b-h200-best), not zz",
        ),
    ],
)
def test_lock_update_refuses_another_stack_or_name(tmp_path: Path, extra: tuple[str, ...], says: str) -> None:
    """``lock --update -o locks/r1-qwen7b-h200-best.lock.toml --stack llamacpp-cuda-2405`` rewrote the limit's best
    lock as a lock under the stack (6,090 lines added), and ``--name zz`` renamed the lock inside its file, both
    exit 0, though --update promises to keep the lock's name, kind, serving, stack and policy (only the review then
    refused the lock as asking another question). Both are bad input now, and the file is left as it was."""
    root = copy_root(tmp_path)
    lock = root / "locks" / "r1-qwen7b-h200-best.lock.toml"
    before = lock.read_bytes()
    lines = bad("lock", "--update", "-o", str(lock), *extra, root=root, says=f"{lock}: {says}")
    assert len(lines) == 1
    assert lock.read_bytes() == before


# --- a lock file whose name is not UTF-8 ---------------------------------------------------------------------------


def test_a_lock_file_named_in_bytes_not_utf8_does_not_stop_every_price(tmp_path: Path) -> None:
    """A copy of gemma3-270m-h100's lock saved as ``locks/\\xff\\xfe.lock.toml`` (a name in another encoding) made
    every price of every serving a ``UnicodeEncodeError`` traceback: the lock index encoded the folder's names as
    strict UTF-8 for its cache key, and the cache encoded the index the same way. The file is a lock like another
    (its name kept as the bytes it has): the price runs under both and says so."""
    root = copy_root(tmp_path)
    lock = root / "locks" / "gemma3-270m-h100.lock.toml"
    (root / "locks" / os.fsdecode(b"\xff\xfe.lock.toml")).write_bytes(lock.read_bytes())
    for serving in ("gemma3-270m-h100", "r1-qwen7b-h200"):
        result = invoke("price", serving, "--json", root=root)
        assert result.exit_code == 0, result.output
    priced = invoke("price", "gemma3-270m-h100", "--json", root=root)
    assert json.loads(priced.stdout)["lock"]["locks"] == ["gemma3-270m-h100", "gemma3-270m-h100"]
    checked = invoke("check", "--json", root=root)
    assert checked.exit_code == 0, checked.output


# --- a source record's read note on one line ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_text", ["Read it.\\n## a heading of its own", "Read it \\u202eevil\\u202c", "Read it\\u0007."]
)
def test_a_source_records_read_note_is_one_line_of_text(tmp_path: Path, bad_text: str) -> None:
    """A source record's ``read`` (how the document was read) was the one text of the record the schema left without
    its one-line rule: a newline, a bidi control or a BEL passed check (exit 0) and audit printed them raw in its
    ``read:`` line, a new line starting a heading of its own under the listing. It is refused as the record's other
    texts are: one line naming the file and key."""
    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-h200-datasheet.toml"
    lines = record.read_text(encoding="utf-8").split("\n")
    assert sum(line.startswith("read = ") for line in lines) == 1
    record.write_text(
        "\n".join(f'read = "{bad_text}"' if line.startswith("read = ") else line for line in lines), encoding="utf-8"
    )
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert checked.stderr.splitlines() == [line for line in checked.stderr.splitlines() if "source.read: " in line]
    assert "sources/nvidia-h200-datasheet.toml: source.read: " in checked.stderr
    assert "write it on one line" in checked.stderr
    bad("audit", "r1-qwen7b-h200", root=root,
        says="sources/nvidia-h200-datasheet.toml: source.read: ")


# --- a best lock pinning a TPOT cap no batch meets -------------------------------------------------------------------


def test_a_best_lock_whose_pinned_cap_is_refused_says_so(tmp_path: Path) -> None:
    """``locks/r1-qwen7b-h200-best.lock.toml`` with ``serving.max_tpot = 1e-6`` (the least a cap may be) and its digest
    recomputed (as an attacker who knows the digest rule writes it): check failed it, but as a price that moved
    ('the pricing model changed and moves the price (first: card)', card h200_sxm_141gb → None, batch 580 → 1), the
    OverTPOT refusal its pinned inputs meet said nowhere in its verdict. The verdict names the refusal."""
    import attrs

    from passprice.locks import lock_text, read_lock

    root = copy_root(tmp_path)
    file = root / "locks" / "r1-qwen7b-h200-best.lock.toml"
    lock = read_lock(file)
    assert lock.kind == "best" and lock.serving.max_tpot is None and lock.price["batch"] == 580
    file.write_text(lock_text(attrs.evolve(lock, serving=attrs.evolve(lock.serving, max_tpot=1e-6))), encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code == 1, checked.output
    assert "does NOT reproduce: its pinned inputs are refused (OverTPOT: batch 1 already takes 1.004 ms per output " \
        "token, over the serving's TPOT cap of 1 µs (max_tpot)" in checked.stdout
    assert "moves the price (first: card)" not in checked.stdout
    reproduced = invoke("reproduce", str(file), root=root)
    assert reproduced.exit_code == 1, reproduced.output


# --- a run id given twice ---------------------------------------------------------------------------------------------


def test_check_refuses_a_run_id_given_twice(tmp_path: Path) -> None:
    """The LMDeploy measurement file with its first run given a second time: calibrate, best --stack and validate
    refused it (exit 2, 'a run id names one run'), while check passed it (exit 0, '0 problems'), so a pull request
    adding it passed the review. check judges the ids as load_runs does."""
    root = copy_root(tmp_path)
    file = root / "registry" / "measurements" / "lmdeploy-turbomind-a100.toml"
    text = file.read_text(encoding="utf-8")
    first = text.split("\n[[run]]\n")[1]
    assert 'id = "lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128"' in first
    file.write_text(text + "\n[[run]]\n" + first, encoding="utf-8")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert checked.stderr.splitlines() == [
        "passprice: error: registry/measurements/lmdeploy-turbomind-a100.toml: run "
        "'lmd1.a100_sxm4_80gb.l2-7b.b1.p1-o128' is also in registry/measurements/lmdeploy-turbomind-a100.toml: "
        "a run id names one run"
    ]
    bad("calibrate", "--stack", "lmdeploy-turbomind-2312", "--dry-run", root=root, says="a run id names one run")


# --- a TPOT cap the limit meets and the stack's expected price does not ----------------------------------------------


def test_a_cap_only_the_stacks_expected_price_misses_is_refused_under_the_stack(tmp_path: Path) -> None:
    """``best --checkpoint llama2-13b-f16 --card a100_sxm4_80gb --stack lmdeploy-turbomind-2312 --max-tpot 0.016``:
    the limit's batch 1 takes 15.68 ms a token (within the cap), the stack's expected 18.52 ms; the refusal said
    'batch 1 already takes 18.52 ms' as if of the limit, and sent the user to a faster card. It names the stack."""
    root = copy_root(tmp_path)
    common = ("--checkpoint", "llama2-13b-f16", "--card", "a100_sxm4_80gb", "--max-tpot", "0.016")
    limit = invoke("best", *common, "--json", root=root)
    assert limit.exit_code == 0, limit.output
    assert json.loads(limit.stdout)["batch"] >= 1
    under = refused("best", *common, "--stack", "lmdeploy-turbomind-2312", root=root, name="OverTPOT")
    assert under["stack"] == "lmdeploy-turbomind-2312" and under["batch"] == 1 and under["max_tpot_s"] == 0.016
    assert under["tpot_s"] == pytest.approx(0.018517040579820458, rel=1e-9)
    assert under["message"].startswith(
        "under stack lmdeploy-turbomind-2312, batch 1 is expected to take 18.52 ms per output token, over the "
        "TPOT cap of 16 ms (--max-tpot)"  # the option's cap, not the serving's (tests/test_fix185.py)
    )


# --- a serving renamed with one field changed, its locks re-made weaker ----------------------------------------------


def test_a_serving_renamed_and_changed_then_relocked_weaker_drops_its_floors(tmp_path: Path) -> None:
    """slip 9's rule judged a removed lock against the locks of its serving's new name only when the renamed file
    was the same serving field for field: renaming r1-qwen7b-h200 to r1-v2 while adding ``max_tpot = 3600`` (which
    moves no price), removing both its locks and locking r1-v2 at ``--floor assumed`` read as 'no floor dropped,
    serving r1-qwen7b-h200 is deleted with it', exit 0. An added serving on the same checkpoint and card is the
    serving renamed: the eight dropped floors fail the review."""
    from test_diff import commit_all, git, make_lock_file
    from test_slip_9 import SERVING, SERVING_FILE, _base, _diff

    path = _base(tmp_path / "registry")
    make_lock_file(path, SERVING, SERVING)
    commit_all(path, "a lock")
    git(path, "checkout", "-q", "-b", "pr")
    git(path, "mv", SERVING_FILE, "registry/servings/r1-v2.toml")
    moved = path / "registry" / "servings" / "r1-v2.toml"
    text = moved.read_text(encoding="utf-8")
    assert text.count("host_memory = false\n") == 1
    moved.write_text(text.replace("host_memory = false\n", "host_memory = false\nmax_tpot = 3600\n"), encoding="utf-8")
    git(path, "rm", "-q", f"locks/{SERVING}.lock.toml")
    (path / "locks").mkdir(exist_ok=True)
    relocked = invoke("lock", "r1-v2", "--floor", "assumed", "-o", str(path / "locks" / "r1-v2.lock.toml"), root=path)
    assert relocked.exit_code == 0, relocked.output
    commit_all(path, "rename the serving with a cap; re-lock it at the assumed floor")
    status, out, err = _diff(path, "main", "HEAD")
    assert status == 1, out
    assert f"passprice: refused: it removes lock {SERVING}, dropping floors serving {SERVING} is priced under" in err
    assert (f"its removal drops 8 floors of serving {SERVING}: serving {SERVING} is r1-v2 on HEAD (renamed and "
            "changed: the same checkpoint on the same card); lock it there at the floors it had") in out
