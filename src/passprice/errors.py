"""Bad input is named, not raised as a traceback: every error here says which file, which key or byte offset, and
what was wrong, in one line a person can act on (the command line exits with status 2)."""

from __future__ import annotations


class InputError(Exception):
    """Input passprice cannot use: a file that does not parse, validate, or exist; a bad option value.

    ``str(error)`` is the message to print: one line per problem, each naming the file and the key path or byte
    offset. The command line prints it on stderr and exits with status 2.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class NotFound(InputError):
    """A name or path that names nothing (no such file, no such registered entry): raised by the lookups, so whoever
    read the name from a file (a serving naming its checkpoint) can say which file and key named it."""


class SchemaError(InputError):
    """A file that does not match its JSON Schema; ``problems`` lists every mismatch, each as
    ``FILE: KEY.PATH: what was wrong`` (all of a file's problems together, not only the first)."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))
