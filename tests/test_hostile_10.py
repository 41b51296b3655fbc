

# --- a serving file whose shared prefix it cannot hold --------------------------------------------------------------


def test_new_serving_writes_no_shared_prefix_a_file_cannot_hold(tmp_path: Path) -> None:
    """``new-serving n r1-qwen7b-h200 --shared-prefix 4096`` wrote a serving file with no ``kv_page`` (exit 0, 'price
    it with passprice price n'); ``price n`` was then refused ``BadPrefix`` (exit 1, naming neither the file nor the
    key) and ``check`` passed it. A shared prefix needs the file's paged cache, and no class of the file may stop short
    of it: bad input naming the file and key, read or written."""
    from cli_helpers import bad

    root = copy_root(tmp_path)
    servings = root / "registry" / "servings"
    bad("new-serving", "n", "r1-qwen7b-h200", "--shared-prefix", "4096", root=root,
        says=f"{servings / 'n.toml'}: shared_prefix: 4096 positions shared need a paged KV cache (a contiguous cache "
        "shares no page): give kv_page, or remove shared_prefix (nothing written)")
    bad("new-serving", "n", "r1-qwen7b-h200", "--shared-prefix", "4000", "--kv-page", "16", root=root,
        says=f"{servings / 'n.toml'}: contexts.0.position: 2048 stops short of the shared prefix (shared_prefix "
        "4000): every sequence holds the whole prefix (nothing written)")
    assert not (servings / "n.toml").exists()
    text = (servings / "r1-qwen7b-h200.toml").read_text(encoding="utf-8")
    (servings / "n.toml").write_text(text.replace("host_memory = false\n", "host_memory = false\nshared_prefix = 16\n"),
                                     encoding="utf-8")
    bad("price", "n", root=root, says=f"{servings / 'n.toml'}: shared_prefix: 16 positions shared need a paged KV cache")
    result = invoke("check", root=root)
    assert result.exit_code == 2
    assert "passprice: error: registry/servings/n.toml: shared_prefix: 16 positions shared need a paged KV cache" in \
        result.stderr
