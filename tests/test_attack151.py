"""Hostile input against today's main (issue 13), each escape found kept as its reproducer, built in the test.

- (1) ``synth`` structures a configuration's keys into :class:`passprice.synthetic.ModelConfig` after the schema
  validated it, but the schema named neither of the two Qwen-MoE keys the record holds (``decoder_sparse_step``,
  ``mlp_only_layers``: "other keys are allowed and ignored"). A step of ``"²"``, ``[]``, ``{}`` or ``[4096]`` ran into
  cattrs' ``ClassValidationError`` (an exception group printed as a traceback, exit 1), and ``true``, ``1.5`` or
  ``"1"`` read silently as a step of 1 (``int(True)``, ``int(1.5)``, ``int("1")``), a header built; an
  ``mlp_only_layers`` of ``true`` the same. Now the schema types both: one ``passprice: error:`` line naming the
  file and key, exit 2.
- (2) ``fact show --history`` read a version of a card larger than a card may be (256 KiB, refused whole by every
  other reader and by :func:`passprice.history._fact_in`) by its fact's own table, and showed its figure: a commit of
  ``value = 4.9`` padded past 300 KB read ``4.9 TB/s``. Such a version was read whole (up to the 64 MiB TOML cap):
  six versions of 60 MB each (a 3 MB ``.git``) cost 1.32 + 0.77 s of CPU and 212 MB, against 0.55 + 0.02 s and 53 MB
  for six of 300 KB (load about 10). Now a version past the cap is sized, never read, and said not to read.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke

#: A small Qwen3-MoE configuration that ``synth`` builds as given.
CONFIG = {
    "model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 100, "intermediate_size": 128, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
}


def _config(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"source": "https://example.com/qwen3-moe", "config": {**CONFIG, **changes}}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("decoder_sparse_step", "²", "config.decoder_sparse_step: '²' is not of type 'integer'"),
        ("decoder_sparse_step", [], "config.decoder_sparse_step: [] is not of type 'integer'"),
        ("decoder_sparse_step", {}, "config.decoder_sparse_step: {} is not of type 'integer'"),
        ("decoder_sparse_step", [4096], "config.decoder_sparse_step: [4096] is not of type 'integer'"),
        ("decoder_sparse_step", True, "config.decoder_sparse_step: true is not of type 'integer'"),
        ("decoder_sparse_step", 1.5, "config.decoder_sparse_step: 1.5 is not of type 'integer'"),
        ("decoder_sparse_step", "1", "config.decoder_sparse_step: '1' is not of type 'integer'"),
        ("mlp_only_layers", True, "config.mlp_only_layers: true is not of type 'array'"),
        ("mlp_only_layers", 1.5, "config.mlp_only_layers: 1.5 is not of type 'array'"),
        ("mlp_only_layers", [-1], "config.mlp_only_layers.0: -1 is less than the minimum of 0"),
        ("mlp_only_layers", ["x"], "config.mlp_only_layers.0: 'x' is not of type 'integer'"),
    ],
)
def test_synth_refuses_a_mistyped_qwen_moe_key_by_name(tmp_path: Path, key: str, value: object, says: str) -> None:
    path = _config(tmp_path, **{key: value})
    out = tmp_path / "x.gguf"
    bad("synth", str(path), "-o", str(out), says=f"{path}: {says}")
    assert not out.exists()


def test_synth_still_builds_the_qwen_moe_keys_of_a_published_config(tmp_path: Path) -> None:
    for changes in ({"decoder_sparse_step": 1, "mlp_only_layers": []}, {"decoder_sparse_step": None}):
        out = tmp_path / "x.gguf"
        result = invoke("synth", str(_config(tmp_path, **changes)), "-o", str(out), "--force")
        assert result.exit_code == 0, result.output
        assert out.is_file()
    bad("synth", str(_config(tmp_path, decoder_sparse_step=2)), "-o", str(tmp_path / "y.gguf"),
        says="config: decoder_sparse_step 2: passprice builds a routed FFN in every block (a step of 1)")


CARD = "facts/cards/h200_sxm_141gb.toml"


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True)


def test_a_version_past_the_cap_in_a_facts_history_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice import gitread

    root = copy_root(tmp_path)
    card = root / CARD
    text = card.read_text(encoding="utf-8")
    assert text.count("\nvalue = 4.8\n") == 1
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "base")
    sizes = []
    for padding in (300_000, 20_000_000):
        big = text.replace("\nvalue = 4.8\n", "\nvalue = 4.9\n") + "# " + "x" * padding + "\n"
        card.write_text(big, encoding="utf-8")
        _git(root, "commit", "-q", "--no-verify", "-am", f"padded {padding}")
        sizes.append(len(big.encode("utf-8")))
    card.write_text(text, encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "back")
    asked: list[int] = []
    read_blobs = gitread.read_blobs

    def watched(top: Path, blobs: dict[str, int]) -> dict[str, bytes]:
        asked.extend(blobs.values())
        return read_blobs(top, blobs)

    monkeypatch.setattr(gitread, "read_blobs", watched)
    result = invoke("fact", "show", "h200_sxm_141gb", "memory.bandwidth", "--history", root=root)
    assert result.exit_code == 0, result.output
    assert "4.9 TB/s" not in result.stdout
    for size in sizes:
        assert (f"does not read: {CARD} at ") in result.stdout
        assert (f": larger than 256 KiB, the most a card file may hold ({size:,} bytes; "
                "PASSPRICE_MAX_FILE_BYTES=BYTES raises the cap)") in result.stdout, result.stdout
    assert result.stdout.count("does not read: ") == 2
    assert asked and max(asked) < 256 << 10  # the versions past the cap were sized, never read
