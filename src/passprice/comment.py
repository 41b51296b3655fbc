"""A pull request carries ONE passprice comment, updated in place on every push: its body starts with a hidden marker
the workflow finds it by, and links each changed fact and lock to its lines in the repository when that is known.

The workflow (``.github/workflows/facts.yml``, the same text ``passprice init`` writes) runs ``passprice diff
--format comment --repository-url URL --ref SHA``, looks for a comment of the pull request whose body starts with
:data:`MARKER`, and edits it, or posts a new one when there is none (as CML's ``cml comment update`` does); the
job summary gets the same body.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

import attrs

from passprice.errors import InputError
from passprice.tables import markdown_code

if TYPE_CHECKING:
    from passprice.review import Diff

#: The first line of every comment passprice posts: an HTML comment (GitHub does not show it) the workflow finds the
#: comment to update by.
MARKER = "<!-- passprice diff: this comment is updated in place on every push -->"


#: A repository's address as ``--repository-url`` takes it: ``https://``, a host name (and port), then one or more
#: path segments of unreserved characters (RFC 3986, section 2.3), nothing else: no query, fragment, space,
#: parenthesis, bracket or quote that could close a Markdown link or open another.
REPOSITORY = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~-]+)+/?")


@attrs.frozen
class Links:
    """Where a pull request's files can be seen: ``repository`` (``https://github.com/OWNER/NAME``, no trailing
    slash) at ``ref`` (a commit sha, or a branch)."""

    repository: str
    ref: str

    @classmethod
    def of(cls, repository: str | None, ref: str | None) -> Links | None:
        """Links for ``repository`` at ``ref``; ``None`` when either is missing or empty. Raises
        :class:`InputError` for a repository that is not a plain ``https://`` address of a repository
        (:data:`REPOSITORY`: a host and path segments of letters, digits, ``.``, ``_``, ``-`` and ``~``, so nothing
        in it can close the link it is put in, ``)[x](…`` or a quote)."""
        if not repository or not ref:
            return None
        if not REPOSITORY.fullmatch(repository):
            raise InputError(
                f"--repository-url: {repository!r} is not a plain https address of a repository "
                "(https://HOST/OWNER/NAME: letters, digits, '.', '_', '-' and '~' between the slashes)"
            )
        return cls(repository.rstrip("/"), ref)

    def blob(self, path: str, lines: tuple[int, int] | None = None) -> str:
        """The address of ``path`` (POSIX, relative to the repository) at the ref, with ``#Lfirst-Llast`` when
        ``lines`` is given."""
        url = f"{self.repository}/blob/{quote(self.ref, safe='')}/{quote(path)}"
        if lines is not None:
            first, last = lines
            url += f"#L{first}" if first == last else f"#L{first}-L{last}"
        return url

    def file_link(self, path: str, text: str) -> str:
        """A markdown link showing ``text`` to ``path``."""
        return f"[{text}]({self.blob(path)})"

    def fact_link(self, path: str, fact: str, lines: tuple[int, int] | None) -> str:
        """A markdown link to fact ``fact``'s ``lines`` (1-based first and last, :func:`fact_lines` of HEAD's text of
        the file) in file ``path``; to the file alone when ``lines`` is ``None`` (the table was not found)."""
        shown = markdown_code(path) if lines is None else f"{markdown_code(path)} lines {lines[0]}–{lines[1]}"
        return f"[{shown}]({self.blob(path, lines)})"


def fact_lines(text: str, fact: str) -> tuple[int, int] | None:
    """The 1-based first and last line of fact ``fact``'s table (``[memory.bandwidth]`` … up to the last non-blank,
    non-comment line before the next table) in the TOML ``text``; ``None`` when there is no such table."""
    dotted = r"\s*\.\s*".join(re.escape(part) for part in fact.split("."))
    header = re.compile(r"^\s*\[\s*" + dotted + r"\s*\]\s*(#.*)?$")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if header.match(line):
            last = i
            for j in range(i + 1, len(lines)):
                stripped = lines[j].strip()
                if stripped.startswith("["):
                    break
                if stripped and not stripped.startswith("#"):
                    last = j
            return i + 1, last + 1
    return None


def comment_body(d: Diff, links: Links | None = None) -> str:
    """The sticky pull-request comment: :data:`MARKER` on the first line, then the diff's markdown
    (:func:`passprice.review.rendering.diff_markdown`)."""
    from passprice.review import diff_markdown

    return f"{MARKER}\n{diff_markdown(d, links)}"

