"""A shipped synthetic header that was never written is said to be so, with the one command that writes it again.

Fourteen of the sixteen checkpoint entries ``tests/synthesized.py`` builds (``passprice synth CONFIG --mix MIX --import
NAME``, no ``-o``) were imported before ``synth --import`` without ``-o`` marked its origin
(:data:`passprice.synthetic.NO_FILE_WRITTEN`): each entry's ``source``, ``NAME.header.gguf``, reads as the file it was
imported from, and no such file was ever kept. The fifteenth, ``qwen3-30b-a3b-q4_0`` (session 33, moe44), the
sixteenth, ``gpt-oss-120b-mxfp4`` (session 34, moe46), and the seventeenth, ``deepseek-v2-lite-q4_0`` (session
34, moe48), were imported after, and their origins say so; they are listed all the same, for the command that
writes each header again. The entries are
left as they are: a lock pins its checkpoint's ``origin`` and ``source``, so rewriting them would move the pins of every
lock on them (issue 13, session 33). This module knows those headers by their sha256 (the bytes, whatever an entry or a
copy calls them) and gives the ``synth`` command that writes them again byte for byte: ``synth`` writes the header's
``general.name`` from ``--import NAME``, else from ``-o``'s file name, so ``-o NAME`` (no suffix) gives the imported
bytes, where ``-o NAME.header.gguf`` gives another header (walkthrough 35). Nothing here prices: the module is outside
the pricing model's digest, and reads no file.
"""

from __future__ import annotations

import attrs

#: Where the shipped entries' configurations are, in a passprice checkout (the origin names each one's published
#: address too).
CONFIGS = "examples/configs"


@attrs.frozen
class Unkept:
    """A shipped synthetic header no file holds: the ``name`` its entry was imported as (the header's
    ``general.name``), the ``config`` file under :data:`CONFIGS` it was built from and the type ``mix``."""

    name: str = attrs.field(validator=attrs.validators.matches_re(r"[a-z0-9][a-z0-9._-]*"))
    config: str = attrs.field(validator=attrs.validators.matches_re(r"[a-z0-9][a-z0-9.-]*\.json"))
    mix: str = attrs.field(validator=attrs.validators.matches_re(r"[A-Z0-9_]+"))

    def command(self) -> str:
        """The command that writes the header again, run in a passprice checkout: ``passprice synth
        examples/configs/CONFIG --mix MIX -o NAME``."""
        return f"passprice synth {CONFIGS}/{self.config} --mix {self.mix} -o {self.name}"

    def sentence(self, source: str) -> str:
        """What ``audit``, ``header`` and ``checkpoints`` say of it: ``source`` is the entry's (the file name it
        names, already escaped by the caller). Raises nothing."""
        return (f"not kept: this shipped synthetic header was built by passprice synth and imported without -o, so no "
                f"file was written (the entry's source, {source}, names none); `{self.command()}` in a passprice "
                "checkout writes these bytes again (the header sha256 shown; -o's file name becomes the header's "
                f"general.name: keep it {self.name}, then rename the file)")


#: The shipped synthetic headers never written, by header sha256 (hex): ``tests/test_unkept.py`` checks the table
#: against ``tests/synthesized.py`` and the entries' ``[header] sha256``.
UNKEPT: dict[str, Unkept] = {
    "4918213735724575b8dff44211afa6f6401a618a51dd8974001ee6b1f65756e0":
        Unkept("qwen3-30b-a3b-q4_k_m", "qwen3-30b-a3b.json", "Q4_K_M"),
    "17768cb469eca1c682975fbf3181c10d32c965142b43d8951630ab7539d841d3":
        Unkept("gpt-oss-20b-mxfp4", "gpt-oss-20b.json", "MXFP4"),
    "7a669efe06e72fc7d01d59d73dace3f6d021cda7207ebd82557651d09bbd7d91":
        Unkept("deepseek-v3-q4_k_m", "deepseek-v3.json", "Q4_K_M"),
    "17f7e1f727231c68d7dfbfc0b51c1684fc7710cccdc3b7de25dac35327e8eba9":
        Unkept("llama3-8b-q4_k_m", "meta-llama-3-8b.json", "Q4_K_M"),
    "6b886752d4ef4f2005e46bc83eb3721f2a2e46a2f0da339ad4218515687780df":
        Unkept("llama3-8b-f16", "meta-llama-3-8b.json", "F16"),
    "55a5b93f1cd96e1ca6e1bb4653d6ab34e8ec2db2d19738339734661bc29dbd5a":
        Unkept("llama3-70b-q4_k_m", "meta-llama-3-70b.json", "Q4_K_M"),
    "b2e07d56f7fc6162bc3411d502bb3ee933aa618f8ce56d8e88430d18c22ae784":
        Unkept("llama2-7b-q4_0", "llama-2-7b.json", "Q4_0"),
    "0f91cc8ff681fe5f6d23ca0f6f6ba768397fda551ce9b98726125ff924625821":
        Unkept("llama2-7b-f16", "llama-2-7b.json", "F16"),
    "b466bbf474b058d47d1cd960e9a461f15b2606248daa190fc7f9e907075e98d8":
        Unkept("llama2-7b-q4_k_m", "llama-2-7b.json", "Q4_K_M"),
    "7598e1bb60f9277a81f6d269eaf9e898e2052dc62e344f7e89cc6df6886221c3":
        Unkept("codellama-7b-f16", "codellama-7b.json", "F16"),
    "9dce338a6045861c37972526bcf8d5b3fdd289b467d63f7df2331cb0277874d9":
        Unkept("codellama-7b-q8_0", "codellama-7b.json", "Q8_0"),
    "5a4dccfc740a7c7aae8c1f7d3d93f55741c65130c2bcb38a15163a228365cc2d":
        Unkept("llama2-13b-f16", "llama-2-13b.json", "F16"),
    "0275fbddaaed320dc115747caccd5a9dca9c9dc84476491e22add145f6aaf0cc":
        Unkept("llama31-8b-bf16", "llama-3.1-8b.json", "BF16"),
    "f7810471b74e4b7df0d5de03bac63b8d3bd7b7ca9c5a943022bda0529c8fc2bc":
        Unkept("llama31-8b-q4_0", "llama-3.1-8b.json", "Q4_0"),
    "5453634961574b1854be77d6e987787f44413d9f9b89f36f4cbd02e1ad21cf58":
        Unkept("qwen3-30b-a3b-q4_0", "qwen3-30b-a3b.json", "Q4_0"),
    "82ff78c7ef3f726300c924a0c61aec57baa5c76d3f2aa242d321160238d2cb52":
        Unkept("gpt-oss-120b-mxfp4", "gpt-oss-120b.json", "MXFP4"),
    "2c1375dd3eb8e868081697df3f0366b28e06af8ab5a3058787a7f894dc1c14e1":
        Unkept("deepseek-v2-lite-q4_0", "deepseek-v2-lite.json", "Q4_0"),
}


def unkept(header_sha256: str | None) -> Unkept | None:
    """The shipped synthetic header whose header bytes have sha256 ``header_sha256`` (hex, as an entry's ``[header]
    sha256``) and were never written, or ``None`` for any other header. Raises nothing."""
    return UNKEPT.get(header_sha256 or "")
