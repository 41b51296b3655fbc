"""What a new user misread, said so it reads one way: a draft block's index is not a count, one quantity is not shown
in GB on one line and GiB on the next, a routing's hot set is counted in experts, and a refusal for zero activation
words says what an activation word is."""

from __future__ import annotations

import json

from cli_helpers import invoke, refused


def test_kv_names_a_draft_blocks_index_and_shows_held_bytes_in_gb_first() -> None:
    text = invoke("kv", "deepseek-v3-q4_k_m", "--contexts", "4k").stdout
    lines = text.splitlines()
    # "draft (MTP) block 61  1  1  1,152" read as 61 blocks; it is the block whose index is 61 (blk.61).
    assert "draft (MTP): block index 61                     1         1        1,152" in lines
    # Held once: decimal first, as the fit's header line and the card memory column are, binary beside it.
    assert lines[1] == ("  held once: weights 403 GB (375.3 GiB) + embedding table 521.3 MB (497.1 MiB), without the "
                        "7.511 GB (6.995 GiB) draft (MTP) block, held only when drafting with it")
    assert any(line.startswith("sequences that fit beside the weights (403.5 GB held once, without the 7.511 GB "
                               "draft (MTP) block, held only when drafting with it)") for line in lines)


def test_a_routings_hot_set_is_counted_in_experts() -> None:
    text = invoke("price", "qwen3-30b-a3b-h200").stdout
    assert (
        "  routing       a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots, measured "
        "(qwen3-30b-a3b-measured)\n"
    ) in text
    # The price's JSON (and the lock recording it) keeps the record's own text: a lock reproduces field for field.
    data = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--json").stdout)
    assert data["routing"]["description"] == (
        "a hot set of 45.31 % of the experts takes 90 % of the routed token-slots, measured (qwen3-30b-a3b-measured)"
    )


def test_zero_activation_words_say_what_an_activation_word_is() -> None:
    out = refused("price", "r1-qwen7b-h200", "--activation-words", "0", "--no-lock", name="Empty")
    assert out["what"] == "activation words"
    assert out["message"] == (
        "no activation words: --activation-words is 0, but each activation enters the integer array as at least one "
        "8-bit word (1: 8-bit activations, 2: 16-bit); give 1 or more"
    )
    # A batch of 0 is out of --batch's range (bad input); a sweep's row of batch 0 is refused as Empty.
    from passprice.serving import Empty

    assert str(Empty("batch")) == "an empty serving: the batch is 0 sequences; give a batch of at least 1"
