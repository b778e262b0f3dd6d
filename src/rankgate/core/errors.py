"""One exception type for bad input, carrying where and what was expected."""

from __future__ import annotations

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)


class InputError(Exception):
    """Bad input a user can fix: names the file, the line (or JSON path) and what was expected."""

    def __init__(self, path: str, what: str, line: int | None = None, where: str | None = None):
        self.path = str(path)
        self.what = what
        self.line = line
        self.where = where
        super().__init__(str(self))

    def __str__(self) -> str:
        place = self.path
        if self.line is not None:
            place += f":{self.line}"
        if self.where:
            place += f": {self.where}"
        return f"{place}: {self.what}"


MAX_ID = 4096  # characters of a query or document ID (docs/formats.md, Limits): a 5 MB ID cost 258 MB


class LongId(InputError):
    """An ID longer than MAX_ID, refused where it is interned (core/model.py Interner); the reader's entry
    point names the file and finds the line (formats/textio.py naming_ids)."""

    def __init__(self, name: str, path: str = "an ID", line: int | None = None):
        self.name = name
        super().__init__(path, f"an ID of {len(name)} characters ({name[:30]!r}...): IDs are at most {MAX_ID} "
                         "characters (docs/formats.md, Limits)", line=line)


def refuse_unknown_keys(table: dict, known, path: str, where: str) -> None:
    """A TOML table's first unknown key (sorted), named with where it is and the keys expected."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise InputError(path, f"{where}: unknown key {unknown[0]!r} (expected {', '.join(sorted(known))})")


@dataclass(frozen=True)
class Problem:
    """One structural problem found by validation."""

    where: str  # "file:line", "file: $.path" or "run NAME"
    what: str
    rule: str = "invalid"

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"

    def as_dict(self) -> dict:
        return {"where": self.where, "what": self.what, "rule": self.rule}


class ValidationError(Exception):
    """Several problems, all reported at once."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))
