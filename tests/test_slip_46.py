"""Slip 46 (issue 13: can a change slip past a lock or a review?), each reproduced first in a scratch clone of this
checkout, committed and reviewed as CI reviews it (``diff BASE HEAD``), then here in a copy of passprice's own registry
(:func:`passprice.registry.embedded_root`; the shipped locks are re-locked by the lead, not here).

1. A checkpoint entry's ``source`` (the header file it was imported from) rewritten, its content kept: ``audit`` of a
   lock cites the checkpoint by it (``header file: …``), no lock pinned it, and ``check`` (``--frozen`` too),
   ``reproduce`` and ``price --lock`` said nothing (exit 0), the review asking it only as a claim ("4 locks priced from
   a checkpoint entry whose claims changed, to verify"). A lock now pins it in ``[checkpoint]`` as it pins the origin
   (session 27): said as relabelled by each, the review naming the locks that pin the old one, a forged pin failing
   the review; a lock written before pins none and says nothing.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import attrs

from cli_helpers import REPO, invoke
from passprice import schema
from test_pin_27 import ENTRY, LOCK, ORIGIN, SHIPPED, _locked, _table
from test_slip_34 import renderings  # one in-process review rendered per format

SOURCE = "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz"
OTHER = "deepseek-r1-distill-qwen-7b-q4_k_m-finetune.header.gguf.xz"
SAID = "checkpoint.source: …still-qwen-7b-q4_k_m[ → -finetune].header.gguf.xz (the lock pinned the old)"


def _resourced(root: Path, source: str = OTHER) -> None:
    """Rewrite the entry's ``source`` (its content, origin and header sha256 kept)."""
    path = root / ENTRY
    text = path.read_text(encoding="utf-8")
    assert text.count(f'source = "{SOURCE}"\n') == 1
    path.write_text(text.replace(f'source = "{SOURCE}"\n', f"source = {json.dumps(source)}\n"), encoding="utf-8")


def _rewrite(path: Path, **pins: str | None) -> None:
    """The lock at ``path`` with its ``[checkpoint]`` pins changed (``None``: as a lock written before), digests
    recomputed as ``passprice lock`` writes them."""
    from passprice.locks import lock_text, read_lock

    lock = read_lock(path, schema.schema_dir())
    path.write_text(lock_text(attrs.evolve(lock, checkpoint_pin=attrs.evolve(lock.checkpoint_pin, **pins))),
                    encoding="utf-8")


def test_1_a_lock_pins_the_entrys_source_beside_its_origin(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    assert _table((root / LOCK).read_text(encoding="utf-8"), "checkpoint") == [
        'content = "sha256:169f62b972aacb444d1ad4162fa145fad6d0f8de16fb2261fe73146b796baff4"',
        'name = "deepseek-r1-distill-qwen-7b-q4_k_m"',
        f"origin = {json.dumps(ORIGIN)}",
        'sha256 = "d9383567865a226b4fbcaa0f954ce9ca608490e1a9ec51c3db2f5d092698e904"',
        f'source = "{SOURCE}"',
    ]
    # what audit cites the checkpoint by, the label pinned
    audited = invoke("audit", LOCK, root=root)
    assert f"    header file: {SOURCE}, the name it was imported from (the entry keeps no folder: the header sha256 " \
           "above, of its header bytes decompressed, identifies it)" in audited.stdout.splitlines()


def test_1_an_entrys_source_rewritten_is_said_by_check_reproduce_and_price(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _resourced(root)
    # before: check "drift: none" (--frozen exit 0), reproduce nothing, price --lock "the price is the one r1-o
    # records" alone, all exit 0
    reproduced = invoke("reproduce", LOCK, root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert f"    relabelled     {SAID}" in reproduced.stdout.splitlines()
    assert json.loads(invoke("reproduce", LOCK, "--json", root=root).stdout)["relabelled"] == [SAID]
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    lines = checked.stdout.splitlines()
    at = lines.index("lock r1-o (locks/r1-o.lock.toml): ok")
    assert lines[at + 5:at + 7] == ["  drift:", f"    {SAID}"]
    frozen = invoke("check", "--frozen", root=root)
    assert frozen.exit_code == 1, frozen.output
    priced = invoke("price", "--lock", LOCK, root=root)
    assert priced.exit_code == 0, priced.output
    assert priced.stdout.splitlines()[-2:] == [
        "  lock          under lock r1-o (locks/r1-o.lock.toml): floors hold, and the price is the one r1-o records; "
        "relabelled since the lock (below)",
        f"                relabelled since the lock: {SAID}",
    ]
    assert json.loads(invoke("price", "--lock", LOCK, "--json", root=root).stdout)["lock"]["relabelled"] == [SAID]


def test_1_the_review_names_the_lock_pinning_the_old_source(tmp_path: Path) -> None:
    base = _locked(tmp_path / "base", with_schema=True)
    for rel in SHIPPED:
        _rewrite(base / rel, origin=None, source=None)  # locks written before: they pin neither, and stay to verify
    head = tmp_path / "head"
    shutil.copytree(base, head)
    _resourced(head)
    status, (text, as_json, markdown) = renderings(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    assert status == 0, text
    lines = text.splitlines()
    # before: "no lock affected; 4 locks priced from a checkpoint entry whose claims changed, to verify", r1-o among
    # them
    assert lines[1] == (
        "no fact changed; 1 checkpoint entry changed; 1 lock affected, 1 to re-pin (lock --update) for check --frozen; "
        "4 locks priced from a checkpoint entry whose claims changed, to verify; 6 locks unaffected")
    at = lines.index(f"{ENTRY} (checkpoint deepseek-r1-distill-qwen-7b-q4_k_m): changed")
    assert lines[at + 1] == (
        "  claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): entry.source "
        f"{SOURCE} → {OTHER}; 1 lock pins the old source: r1-o (re-pin: passprice lock --update)")
    assert ("  r1-o (locks/r1-o.lock.toml, card h200_sxm_141gb, price): pins checkpoint.source as before the change, "
            "the price unmoved by it: re-pin (passprice lock --update -o locks/r1-o.lock.toml; check --frozen fails "
            "until then)") in lines
    review = json.loads(as_json)
    assert review["source_pinned_by"] == {ENTRY: ["r1-o"]}
    assert review["origin_pinned_by"] == {}
    assert review["on_changed_claims"] == ["r1-qwen7b-h200", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp",
                                          "r1-qwen7b-mi300x-int8kv"]  # left53: by name
    assert "; 1 lock pins the old source: r1-o (re-pin: passprice lock --update)" in markdown


def test_1_a_hand_forged_source_pin_fails_the_review(tmp_path: Path) -> None:
    base = _locked(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    _rewrite(head / LOCK, source="elsewhere.gguf")  # neither side's entry says it
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    assert ("  locks/r1-o.lock.toml: checkpoint.source: pins 'elsewhere.gguf', which neither side of the change holds "
            "and BASE's lock did not pin: a lock's labels are pinned by passprice lock from a registry (check --frozen "
            "fails this one); re-lock it: passprice lock --update -o locks/r1-o.lock.toml"
            ) in result.stdout.splitlines()


def test_1_a_lock_made_before_pins_no_source_and_says_nothing(tmp_path: Path) -> None:
    from passprice.locks import lock_document, read_lock

    root = _locked(tmp_path)
    for rel in (LOCK, *SHIPPED):  # as locks written before slip round 46 (the shipped ones pin it since eef1497)
        _rewrite(root / rel, source=None)
    lock = read_lock(root / LOCK, schema.schema_dir())
    assert lock.checkpoint_source is None
    assert sorted(lock_document(lock)["checkpoint"]) == ["content", "name", "origin", "sha256"]  # digest as it was
    _resourced(root)
    checked = invoke("check", "--frozen", root=root)
    assert checked.exit_code == 0, checked.output
    assert "checkpoint.source" not in checked.stdout
    assert "checkpoint.source" not in invoke("reproduce", LOCK, root=root).stdout
    assert "relabelled" not in invoke("price", "--lock", LOCK, root=root).stdout


def test_1_a_pinned_or_entry_source_past_4000_characters_is_refused_by_the_schema(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewrite(root / LOCK, source="x" * 4001)
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: {LOCK}: checkpoint.source: '{'x' * 99}… is too long (4,001 characters; at most 4,000)"]


def test_2_a_lock_pinning_the_digest_of_no_code_fails_the_review(tmp_path: Path) -> None:
    from passprice.locks import lock_text, read_lock

    base = _locked(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    lock = read_lock(head / LOCK, schema.schema_dir())
    forged = attrs.evolve(lock, info=attrs.evolve(lock.info, pricing_model="sha256:" + "0" * 64))
    (head / LOCK).write_text(lock_text(forged), encoding="utf-8")  # digests recomputed
    # before: "no fact changed; 1 lock affected, 1 re-locked; 8 locks unaffected", ✅, exit 0 (check, reproduce and
    # price --lock exit 0 too: "pricing model: changed since the lock (000000000000… → …)")
    status, (text, as_json) = renderings(REPO, "text", "json", base=str(base), head=str(head))
    assert status == 1, text
    assert ("  locks/r1-o.lock.toml: lock.pricing_model: pins 000000000000…, the digest of no code of this review "
            "(BASE's, HEAD's, the running passprice's) nor of any BASE lock: a lock's pricing model is the digest "
            "passprice lock computes of the code that priced it, never typed by hand; re-lock it: passprice lock "
            "--update -o locks/r1-o.lock.toml") in text.splitlines()
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["exit_status"] == 1
    assert review["head_check"][0].startswith("locks/r1-o.lock.toml: lock.pricing_model: pins 000000000000…, ")
    # a lock left on the code of another BASE lock (renamed, or copied from one made by older code) is no forgery
    old = tmp_path / "old"
    shutil.copytree(base, old)
    lock = read_lock(old / "locks" / "r1-qwen7b-h200.lock.toml", schema.schema_dir())
    (old / "locks" / "r1-qwen7b-h200.lock.toml").write_text(
        lock_text(attrs.evolve(lock, info=attrs.evolve(lock.info, pricing_model="sha256:" + "1" * 64))),
        encoding="utf-8")
    renamed = tmp_path / "renamed"
    shutil.copytree(old, renamed)
    (renamed / "locks" / "r1-qwen7b-h200.lock.toml").rename(renamed / "locks" / "r1-renamed.lock.toml")
    assert "lock.pricing_model" not in invoke("diff", str(old), str(renamed)).stdout


RUNS = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


@functools.cache
def _stack_lock_made() -> Path:
    """The copy :func:`_stack_locked` gives as BASE, made once a process (in a temporary folder removed at exit):
    copying it is ~0.02 s of CPU where making it (the copy, then ``lock --stack``) was ~0.5 s, and some 30 tests of
    seven files start from it. Its bytes do not depend on its folder (two made in two folders are the same, file for
    file), so a copy of it is what making it afresh there gives."""
    import atexit
    import tempfile

    from test_pin_27 import _copy

    folder = Path(tempfile.mkdtemp(prefix="passprice-stack-locked-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    base = _copy(folder, with_schema=True)
    made = invoke("lock", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--batch", "1", "--name", "r1-stack",
                  root=base)  # fmt: skip
    assert made.exit_code == 0, made.output
    return base


def _stack_locked(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: a copy holding ``locks/r1-stack.lock.toml`` (r1-qwen7b-h200 at batch 1 under the stack
    ``llamacpp-cuda-2405``, as the shipped ``r1-qwen7b-h200-llamacpp`` is made since stacklock 29); HEAD: a copy of
    it. Both copied from :func:`_stack_lock_made`."""
    base = tmp_path / "base" / "root"
    shutil.copytree(_stack_lock_made(), base)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    return base, head


def test_3_a_lock_under_a_stack_fitted_from_runs_to_verify_is_to_verify(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    path = head / RUNS
    text = path.read_text(encoding="utf-8")
    assert text.count("tg512 |    145.55 ± 0.80") == 1
    path.write_text(text.replace("tg512 |    145.55 ± 0.80", "tg512 |    145.55 ± 0.90"), encoding="utf-8")
    status, (shown, as_json, markdown) = renderings(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    assert status == 0, shown
    lines = shown.splitlines()
    # before: "…; 1 measured run to verify in its source; no lock affected; 9 locks unaffected", r1-stack among them
    # (and since stacklock 29 the shipped r1-qwen7b-h200-llamacpp, made under the same stack, is to verify beside it)
    assert lines[1] == ("no fact changed; 1 other file changed; 1 measured run to verify in its source; no lock "
                        "affected; 2 locks priced under a stack fitted from measured runs to verify; 9 locks "
                        "unaffected")
    assert ("2 locks priced under a stack fitted from measured runs to verify (other files above): "
            "r1-qwen7b-h200-llamacpp, r1-stack") in lines
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["on_recited_runs"] == ["r1-qwen7b-h200-llamacpp", "r1-stack"]
    assert "r1-stack" not in review["unaffected"] and "r1-qwen7b-h200-llamacpp" not in review["unaffected"]
    assert ("⚠️ 2 locks priced under a stack fitted from measured runs to verify (other files above): "
            "`r1-qwen7b-h200-llamacpp`, `r1-stack`" in markdown.splitlines())


def test_4_price_under_a_lock_says_the_stacks_route_moved_it(tmp_path: Path) -> None:
    _, root = _stack_locked(tmp_path)
    path = root / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count('integer_matrices = "vector"\n') == 1
    path.write_text(text.replace('integer_matrices = "vector"\n', 'integer_matrices = "array"\n'), encoding="utf-8")
    lock = "locks/r1-stack.lock.toml"
    said = "stack llamacpp-cuda-2405 integer_matrices: vector → array"
    assert f"    serving        {said}" in invoke("reproduce", lock, root=root).stdout.splitlines()  # as before
    priced = invoke("price", "--lock", lock, root=root)
    assert priced.exit_code == 0, priced.output
    lines = priced.stdout.splitlines()
    # before: "no pinned fact or serving choice drifted: the pricing model (code) or the checkpoint moved it; …"
    assert lines[-2:] == [
        "                recorded 237.4 tokens/s expected under stack llamacpp-cuda-2405 at batch 1 by lock r1-stack; "
        "today 244.6 tokens/s at batch 1 (+3.03 %, first moved: expected.array_s) — not the locked price",
        f"                serving differs from the locked one: {said}",
    ]
    moved = json.loads(invoke("price", "--lock", lock, "--json", root=root).stdout)["lock"]["moved"]
    assert moved[0]["differences"] == [
        {"field": "stack.llamacpp-cuda-2405.integer_matrices", "locked": "vector", "now": "array"}]


def _dropped(rel: str, key: str) -> str:
    return (f"  {rel}: {key}: dropped, which BASE's lock pinned (a label audit or a price shows: its change would go "
            "unsaid by check, reproduce and price): a lock is written by passprice lock, never trimmed by hand; "
            f"re-lock it: passprice lock --update -o {rel}")


def test_5_a_lock_stripped_of_its_origin_pin_beside_a_rewritten_origin_fails_the_review(tmp_path: Path) -> None:
    from test_pin_27 import _fine_tune

    base = _locked(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    _rewrite(head / LOCK, origin=None)  # as a lock written before session 27 reads, digests recomputed
    _fine_tune(head)
    assert "checkpoint.origin" not in invoke("reproduce", LOCK, root=head).stdout  # the pin gone: nothing to say
    result = invoke("diff", str(base), str(head))
    # before: r1-o "re-locked" (exit 0 where no other lock pins the origin: slip 46's scratch clone, its shipped locks
    # stripped too), the origin's rewrite said nowhere for it
    assert result.exit_code == 1, result.output
    assert _dropped(LOCK, "checkpoint.origin") in result.stdout.splitlines()


def test_5_a_lock_stripped_of_its_stack_runtime_and_builds_beside_their_edit_fails_the_review(tmp_path: Path) -> None:
    from passprice.locks import lock_text, read_lock

    base, head = _stack_locked(tmp_path)
    rel = "locks/r1-stack.lock.toml"
    lock = read_lock(head / rel, schema.schema_dir())
    assert lock.stack is not None
    (head / rel).write_text(lock_text(attrs.evolve(lock, stack=attrs.evolve(lock.stack, runtime=None, builds=None))),
                            encoding="utf-8")
    path = head / "facts" / "stacks" / "llamacpp-cuda-2405.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count("to b2843 (e8496488)") == 1
    path.write_text(text.replace("to b2843 (e8496488)", "to b2850 (e8496488)"), encoding="utf-8")
    # the stripped lock says nothing of the edit; the shipped r1-qwen7b-h200-llamacpp (stacklock 29) pins the old
    # builds and fails check --frozen alone
    frozen = invoke("check", "--frozen", root=head)
    assert frozen.exit_code == 1, frozen.output
    checked = frozen.stdout.splitlines()
    assert checked[0].endswith(": 0 problems; 1 of 11 locks FAIL")
    at = checked.index(f"lock r1-stack ({rel}): ok")
    assert checked[at + 5] == "  drift: none"
    at = checked.index("lock r1-qwen7b-h200-llamacpp (locks/r1-qwen7b-h200-llamacpp.lock.toml, locks serving "
                       "r1-qwen7b-h200): FAILS")
    assert checked[at + 6] == ("    stack.llamacpp-cuda-2405.builds: …24 (4426e298) to b28[43 → 50] (e8496488) "
                               "(the lock pinned the old)")
    result = invoke("diff", str(base), str(head))
    # before: "no fact changed; 1 lock affected, 1 re-locked; 8 locks unaffected", ✅, exit 0
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert _dropped(rel, "stack.llamacpp-cuda-2405.runtime") in lines
    assert _dropped(rel, "stack.llamacpp-cuda-2405.builds") in lines


def test_6_a_format_2_lock_stating_a_tool_version_is_refused_naming_the_key(tmp_path: Path) -> None:
    from passprice.locks import lock_text, read_lock

    root = _locked(tmp_path)
    lock = read_lock(root / LOCK, schema.schema_dir())
    (root / LOCK).write_text(lock_text(attrs.evolve(lock, info=attrs.evolve(lock.info, tool_version="0.0.1"))),
                             encoding="utf-8")
    for args in (("check",), ("reproduce", LOCK), ("price", "--lock", LOCK)):
        result = invoke(*args, root=root)
        assert result.exit_code == 2, result.output
        # before: "…: lock: False schema does not allow '0.0.1'", naming no key
        [line] = result.stderr.splitlines()  # the lock named as the command was given it
        assert line.startswith("passprice: error: "), line
        assert line.endswith(f"{LOCK}: lock.tool_version: '0.0.1' is not allowed here"), line
