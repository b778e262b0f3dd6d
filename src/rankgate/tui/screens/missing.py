"""Every relevant document each run misses in its top k, for one query: the full list the rankings' "N relevant not in
the top k: ... and N more" line cuts (key M). Each ID escaped, one a line; Enter goes to the document."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.tui.safe import literal
from rankgate.tui.widgets.line_list import LineList


class MissingList(LineList):
    """Rows: a heading per run ("baseline plain misses 3"), then its missing IDs."""

    def __init__(self, rows: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows = rows  # ("head", text) or ("doc", document ID)

    def render_row(self, index: int, width: int) -> Text:
        kind, value = self.rows[index]
        if kind == "head":
            return Text(value, style="bold red", end="")
        t = Text("  ", end="")
        t.append_text(literal(value))
        return t

    def empty_text(self) -> Text:
        return Text("no relevant document is missed", style="dim italic", end="")


class MissingScreen(ModalScreen[str | None]):
    """Dismissed with the chosen document's ID (None: Escape)."""

    BINDINGS = [("escape,M,q", "dismiss(None)", "Close")]

    def __init__(self, qid: str, k: int, missing: list[tuple[str, str, list[str]]]) -> None:
        """`missing`: (role, run name, IDs it misses in its top k) per run."""
        super().__init__()
        self.qid, self.k = qid, k
        self.missing = missing
        rows: list[tuple[str, str]] = []
        for role, run, ids in missing:
            rows.append(("head", f"{role} misses {len(ids)} in its top {k}" + ("" if ids else ": none")))
            rows += [("doc", d) for d in ids]
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            title = Text("Relevant documents missed in the top k · ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            names = Text(" (", style="dim", end="")
            for i, (role, run, _) in enumerate(self.missing):
                if i:
                    names.append(", ", style="dim")
                names.append(f"{role} ", style="dim")
                names.append_text(literal(run, style="dim"))
            names.append(")", style="dim")
            title.append_text(names)
            yield Static(title)
            yield MissingList(self.rows, id="missing-list")
            yield Static(Text("Enter: go to the document · Escape closes", style="dim"))

    def on_mount(self) -> None:
        lst = self.query_one(MissingList)
        lst.set_count(len(self.rows), 0, notify=False)
        lst.focus()

    @on(LineList.Chosen, "#missing-list")
    def _chosen(self, event: LineList.Chosen) -> None:
        if 0 <= event.index < len(self.rows) and self.rows[event.index][0] == "doc":
            self.dismiss(self.rows[event.index][1])
