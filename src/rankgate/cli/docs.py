"""`rankgate docs [TOPIC]`: the documentation that ships with the package, readable offline.

The pages are docs/*.md of the repository (src/rankgate/docs is a link to it, packaged as data), so
a pip user reads what README links without the repository or a network.
"""

from __future__ import annotations

from pathlib import Path

from rankgate.cli.base import EXIT_OK, emit
from rankgate.core.errors import InputError


def docs_root() -> Path:
    """The docs shipped with the package (a link to docs/ in a checkout)."""
    from importlib.resources import files

    return Path(str(files("rankgate") / "docs"))


def topics() -> dict[str, Path]:
    root = docs_root()
    return {p.stem: p for p in sorted(root.glob("*.md"))} if root.is_dir() else {}


def register(sub) -> None:
    d = sub.add_parser("docs", help="read the documentation offline: list the topics, or print one",
                       description="Without TOPIC: each topic and its title. With TOPIC (e.g. review, measures, "
                       "ci): the page, as Markdown text.")
    d.add_argument("topic", nargs="?", metavar="TOPIC", help="the page to print (its name without .md)")
    d.add_argument("--path", action="store_true", help="print the folder the pages are in (to open in an editor)")
    d.set_defaults(func=cmd_docs)


def _title(page: Path) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def cmd_docs(args) -> int:
    """Every line reaches the terminal through `emit` (core.text.visible: lines and tabs kept, nothing else raw)."""
    found = topics()
    if not found:
        raise InputError(str(docs_root()), "this installation carries no docs (reinstall rankgate)")
    if args.path:
        emit(str(docs_root().resolve()))
        return EXIT_OK
    if args.topic is None:
        for name, page in found.items():
            emit(f"{name:<12} {_title(page)}")
        emit("\nrankgate docs TOPIC prints one (e.g. rankgate docs review).")
        return EXIT_OK
    name = args.topic.lower().removesuffix(".md")
    if name not in found:
        raise InputError("docs", f"no topic {args.topic!r} (expected one of {', '.join(found)})")
    emit(found[name].read_text(encoding="utf-8"))  # emit escapes through core.text.visible, lines kept
    return EXIT_OK
