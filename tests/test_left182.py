"""Left-overs of issue 13's hostile input, each kept as its reproducer, built in the test.

- (1) ``reproduce DIGEST`` credited a gitlink (mode 160000) with writing a lock: a gitlink at
  ``locks/evil.lock.toml`` naming the blob of a lock (in no tree) was read as that file's content, and the reply
  said "commit … wrote it as locks/evil.lock.toml". A gitlink's id is never a file's content: the history search
  reads it as the zero id.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

from cli_helpers import copy_root, invoke

LOCK = "locks/r1-qwen7b-h200.lock.toml"


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True, text=True,
                          input=stdin)
    return done.stdout.strip()


def _repository(tmp_path: Path) -> Path:
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    return root


def test_a_gitlink_naming_a_locks_blob_wrote_no_lock(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    text = (root / LOCK).read_text(encoding="utf-8")
    digest = tomllib.loads(text)["lock"]["digest"]  # its [lock] digest: each re-lock moves it
    forged = "sha256:" + "ab" * 32
    assert text.count(digest) == 1
    blob = _git(root, "hash-object", "-w", "--stdin", stdin=text.replace(digest, forged))  # in no tree
    _git(root, "update-index", "--add", "--cacheinfo", f"160000,{blob},locks/evil.lock.toml")
    _git(root, "commit", "-q", "--no-verify", "-m", "a gitlink naming a lock's blob")
    _git(root, "rm", "-q", "--cached", "locks/evil.lock.toml")
    _git(root, "commit", "-q", "--no-verify", "-m", "gone")
    result = invoke("reproduce", forged, root=root)
    assert result.exit_code == 2, result.output
    # Before: "…: re-locked since; commit … wrote it as locks/evil.lock.toml: write it out, `git show …`".
    assert "wrote it as" not in result.output, result.output
    assert result.stderr == (
        f"passprice: error: lock {forged!r}: no such file, and no lock in {root / 'locks'} has that [lock] digest "
        "(locks: gemma3-270m-h100, gpt-oss-120b-h100, qwen3-30b-a3b-h200, qwen35-27b-h100-every8, "
        "qwen35-27b-h200-mtp, qwen35-27b-ws1-trailing, r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, "
        "r1-qwen7b-mi300x-int8kv; passprice audit NAME prints a lock's digest): the lock cited may have been "
        "re-locked since, or be of another registry\n"), result.stderr


PCIE = "facts/cards/h100_pcie_80gb.toml"


def test_a_folder_at_a_cards_path_is_a_version_that_does_not_read(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    base = _git(root, "rev-parse", "HEAD")
    card = root / PCIE
    text = card.read_text(encoding="utf-8")
    card.unlink()
    card.mkdir()
    (card / "notes.md").write_text("not a card\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "a folder at the card's path")
    folder = _git(root, "rev-parse", "HEAD")
    (card / "notes.md").unlink()
    card.rmdir()
    card.write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "the card again")
    back = _git(root, "rev-parse", "HEAD")
    result = invoke("fact", "show", "h100_pcie_80gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    # Before: "(no such fact)" under the folder's commit, and "reads again: new since <folder's commit>" after it.
    source = ("  source: nvidia-h100-datasheet — Technical Specifications table, H100 PCIe column: 'GPU Memory "
              "Bandwidth 2TB/s'")
    assert [line for line in result.stdout.splitlines() if not line.startswith(f"{back[:12]}  ")
            and not line.startswith(f"{folder[:12]}  ") and not line.startswith(f"{base[:12]}  ")] == [
        f"h100_pcie_80gb memory.bandwidth ({PCIE}): 3 versions", "",
        f"  2 TB/s (published)   reads again: as at {base[:12]}, the last version that reads", source, "",
        f"  does not read: {PCIE} at {folder[:12]}: a folder, not a file", "",
        "  2 TB/s (published)   new", source,
    ], result.stdout


def test_a_hard_link_to_a_lock_is_named_as_check_keeps_it(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    os.link(root / LOCK, root / "locks/hard.lock.toml")
    check = invoke("check", root=root)
    assert ("  warning: locks/hard.lock.toml duplicates locks/r1-qwen7b-h200.lock.toml: it locks serving "
            "r1-qwen7b-h200 (price) with the same pins") in check.output, check.output
    kept = ("under locks r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml), r1-qwen7b-h200-best "
            "(locks/r1-qwen7b-h200-best.lock.toml), r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml): "
            "floors hold")
    price = invoke("price", "r1-qwen7b-h200", root=root)
    assert price.exit_code == 0, price.output
    # Before: "under locks r1-qwen7b-h200 (locks/hard.lock.toml), …": the name `check` says to remove.
    assert [line for line in price.stdout.splitlines() if "under locks" in line] == [
        f"  lock          {kept}, and the price is the one r1-qwen7b-h200 and r1-qwen7b-h200-llamacpp record"
    ], price.stdout
    sweep = invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--positions", "2048", root=root)
    assert sweep.exit_code == 0, sweep.output
    assert sweep.stderr.splitlines() == [
        f"passprice: r1-qwen7b-h200: {kept}; the serving is the locked one, its prices not compared with the locked "
        "ones (`passprice reproduce r1-qwen7b-h200` compares them)"
    ], sweep.stderr
    assert "hard.lock.toml" not in price.output + sweep.output


STACK = "llamacpp-cuda-2405"


def test_a_stale_fits_audit_line_is_short_and_its_details_are_under_the_facts(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    path = root / f"facts/stacks/{STACK}.toml"
    text = path.read_text(encoding="utf-8")
    assert 'float_matrices = "vector"' in text and "[memory.reserved]\nvalue = 512\n" in text
    path.write_text(text.replace('float_matrices = "vector"', 'float_matrices = "tensor"')
                    .replace("[memory.reserved]\nvalue = 512\n", "[memory.reserved]\nvalue = 256\n"), encoding="utf-8")
    result = invoke("audit", "r1-qwen7b-h200", "--stack", STACK, root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # Before: one "STALE: overhead.layer: re-fitted from its 111 runs … ; share.read: …" line of 2,4xx characters.
    # The moves, by |today / written - 1|: share.scale 0.00824 / 0.002051 - 1 = 3.02, terms.serial 0.7 / 0.5 - 1 =
    # 0.40, share.append 1 / 0.7532 - 1 = 0.33 (then share.vector 0.082, overhead.layer 0.073, share.read 0.0025).
    assert [x for x in lines if x.startswith("STALE: ")] == [
        "STALE: 6 derived facts the price rests on do not follow from today's inputs (largest moves: share.scale "
        "0.002051 → 0.00824, terms.serial 0.5 → 0.7, share.append 0.7532 → 1); fix: `passprice calibrate --stack "
        f"{STACK}`; each fact's details below, marked STALE"
    ]
    marked = [x for x in lines if " — STALE: " in x]
    assert [x.split(":", 1)[0].strip() for x in marked] == [
        "stack.overhead.layer", "stack.terms.serial", "stack.share.read", "stack.share.append", "stack.share.vector",
        "stack.share.scale"]
    # the move alone under each fact (the fit said stale once, in the STALE line), and no "re-fits it within 0.1 %"
    # claim of a fact it does not re-fit within it (tests/test_fix185.py)
    assert marked[-1].endswith("to 4 significant digits — STALE: re-fitted today: share.scale 0.002051 → 0.00824, "
                               "past the 0.1 % its derivation allows"), marked[-1]


def test_a_sweeps_refusal_summary_advises_the_sweeps_option(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    sweep = invoke("sweep", "r1-qwen7b-h200", "--positions", "8192", "--limit", "8192", "--batches", "1", root=root)
    assert sweep.exit_code == 1, sweep.output
    # Before: "… holds rows 0 to 8191: raise --limit or lower --position; …", price's option, not the sweep's.
    assert sweep.stderr.splitlines()[-1] == (
        "passprice: refused: no row of the sweep has a price: every line is refused at its smallest batch, and at "
        "every larger one: BadContexts (1 line) — r1-qwen7b-h200 on h200_sxm_141gb at position 8192, batch 1: bad "
        "context mix: position 8192 is not below its limit 8192: a pass at a position writes that position's row, "
        "and a sequence allowed 8192 positions holds rows 0 to 8191: raise --limit or lower --positions; the rows "
        "and their refusals were written"), sweep.stderr
    price = invoke("price", "r1-qwen7b-h200", "--position", "8192", "--limit", "8192", root=root)
    assert price.exit_code == 1, price.output
    assert "rows 0 to 8191: raise --limit or lower --position" in price.output, price.output
    assert "--positions" not in price.output, price.output
