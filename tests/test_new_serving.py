"""``passprice new-serving NAME``: the serving the command line describes, written as a registry serving file that
reads back as the same serving (every default explicit), or refused with one line and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from passprice import memo
from passprice.errors import InputError
from passprice.registry import Root, embedded_root, find_root
from passprice.servingfile import write_serving
from passprice.servings import ServingSpec, load_spec

R1 = "deepseek-r1-distill-qwen-7b-q4_k_m"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_root(tmp_path_factory.mktemp("new-serving"))


def _tokens(root: Path, *args: str) -> float:
    result = invoke("price", *args, "--json", "--no-lock", root=root)
    assert result.exit_code == 0, result.output
    return float(json.loads(result.stdout)["tokens_per_s"])


def test_the_file_states_every_default_and_prices_as_the_command_line(root: Path) -> None:
    result = invoke("new-serving", "r1-batch8", "--checkpoint", R1, "--card", "h200_sxm_141gb", "--batch", "8",
                    "--description", "R1 7B on one H200, batch 8", root=root)
    assert result.exit_code == 0, result.output
    path = root / "registry" / "servings" / "r1-batch8.toml"
    assert result.stdout == (f"wrote registry/servings/r1-batch8.toml: {R1} on h200_sxm_141gb, batch 8, contexts 1 at "
                             "position 2048 of 4096; "
                             "price it with `passprice price r1-batch8`\n")
    # The model's context is 131,072 positions: the default limit is min(4096, it), the position half of it.
    assert path.read_text(encoding="utf-8") == (
        "#:schema ../../schema/serving.schema.json\n"
        'description = "R1 7B on one H200, batch 8"\n'
        f'checkpoint = "{R1}"\n'
        'card = "h200_sxm_141gb"\n'
        "batch = 8\n"
        "kv_bytes = 2.0\n"
        "state_bytes = 4.0\n"
        'attention = "vector"\n'
        "activation_words = 1\n"
        'scaling = "per-block"\n'
        "kv_rotated = false\n"
        'flush = "every-pass"\n'
        "host_memory = false\n"
        "\n"
        "[[contexts]]\n"
        "share = 1.0\n"
        "position = 2048\n"
        "limit = 4096\n"
    )
    by_name = _tokens(root, "r1-batch8")
    assert by_name == _tokens(root, "--checkpoint", R1, "--card", "h200_sxm_141gb", "--batch", "8")
    listed = json.loads(invoke("servings", "--json", root=root).stdout)["servings"]["r1-batch8"]
    assert listed["batch"] == 8 and listed["contexts"] == [{"share": 1.0, "position": 2048.0, "limit": 4096}]


def test_a_serving_derived_from_another_keeps_its_draft_not_its_description(root: Path) -> None:
    result = invoke("new-serving", "mtp-batch4", "qwen35-27b-h200-mtp", "--batch", "4", "--json", root=root)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["serving"] == "mtp-batch4" and out["document"]["draft"] == {
        "method": "qwen35-mtp", "tokens": 2, "head_rows": 32768
    }
    assert "description" not in out["document"]  # the base's says batch 16: it would describe another serving
    text = (root / "registry" / "servings" / "mtp-batch4.toml").read_text(encoding="utf-8")
    assert "\n[draft]\nmethod = \"qwen35-mtp\"\ntokens = 2\nhead_rows = 32768\n" in text
    assert "position = 16384\nlimit = 32768\n" in text  # a whole position as an integer (tests/test_fix171.py)
    assert _tokens(root, "mtp-batch4") == _tokens(root, "qwen35-27b-h200-mtp", "--batch", "4")


def test_an_existing_file_is_kept_without_force(root: Path) -> None:
    args = ("new-serving", "twice", "--checkpoint", R1, "--card", "h200_sxm_141gb")
    assert invoke(*args, root=root).exit_code == 0
    path = root / "registry" / "servings" / "twice.toml"
    before = path.read_bytes()
    bad(*args, "--batch", "2", root=root, says=f"{path}: already exists; pass --force to overwrite it")
    assert path.read_bytes() == before
    assert invoke(*args, "--batch", "2", "--force", root=root).exit_code == 0
    assert load_spec(find_root(root), "twice").batch == 2


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("bad/name", "--checkpoint", R1, "--card", "h200_sxm_141gb"),
         "serving name 'bad/name': use letters, digits, '.', '_' and '-' (first a letter or digit)"),
        (("x" * 201, "--checkpoint", R1, "--card", "h200_sxm_141gb"), "characters; at most 200"),
        (("typo", "--checkpoint", R1, "--card", "h20"), "card 'h20': not found"),
        (("nl", "--checkpoint", R1, "--card", "h200_sxm_141gb", "--description", "two\nlines"),
         "description: 'two\\nlines' holds a control character"),
        (("nobatch", "--checkpoint", R1, "--card", "h200_sxm_141gb", "--batch", "0"), "--batch"),
    ],
)
def test_bad_input_writes_nothing(root: Path, extra: tuple[str, ...], says: str) -> None:
    folder = root / "registry" / "servings"
    before = sorted(p.name for p in folder.iterdir())
    lines = bad("new-serving", *extra, root=root)
    assert says in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == before  # no file, no temporary file


def test_a_path_outside_the_registry_is_refused_with_the_way_in(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes((Path(__file__).parent / "data" / "qwen35-27b-like.header.gguf").read_bytes())
    lines = bad("new-serving", "ext", "--checkpoint", str(outside), "--card", "h200_sxm_141gb", root=root)
    assert f"checkpoint: {outside} lies outside the registry" in lines[0]
    assert "`passprice import FILE --name NAME`" in lines[0]
    assert not (root / "registry" / "servings" / "ext.toml").exists()


def test_the_embedded_registry_is_read_only() -> None:
    embedded = embedded_root()
    with pytest.raises(InputError, match=r"read-only[^;]*; start a registry of your own"):
        write_serving(embedded, "x", ServingSpec(checkpoint=R1, card="h200_sxm_141gb"))
    assert not (embedded.servings / "x.toml").exists()


def test_a_written_serving_is_never_replayed_from_the_memo() -> None:
    # The memo replays read-only commands only: a second run of new-serving must write again, never print the
    # first run's "wrote" line from the memo.
    assert "new-serving" not in memo.COMMANDS


def test_the_library_returns_the_completed_spec(root: Path) -> None:
    written = write_serving(Root(root), "lib", ServingSpec(checkpoint=R1, card="h200_sxm_141gb", batch=3),
                            description="from the library")
    assert written.path == root / "registry" / "servings" / "lib.toml"
    assert written.spec == load_spec(find_root(root), "lib")
    assert written.spec.contexts is not None and written.spec.contexts[0].limit == 4096
