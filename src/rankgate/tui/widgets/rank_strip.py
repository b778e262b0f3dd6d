"""The judging screen's strip of ranks: where the document sits in each run, and its label now."""

from __future__ import annotations

from rich.text import Text

from rankgate.tui.safe import excerpt, id_excerpt, literal
from rankgate.tui.widgets.text_static import TextStatic


def strip_text(ranks: list[tuple[str, int | None, bool]], width: int, *, k: int, blind: bool) -> Text:
    """`rank (top 10 in bold): BM25 3 · BM25_RM3 17 · D_BERT_…_TASB –`: each run's rank of the document (bold
    inside the top k, dim past it, – when the run does not rank it); run names cut in the middle to share the
    width."""
    t = Text(end="")
    if not ranks:
        return t
    if blind:
        t.append("ranks hidden (blind review)", style="dim")
        return t
    t.append(f"rank (top {k} in bold): ", style="dim")  # a rank past k is shown too: the heading says which
    room = max(2 * width - len(t.plain) - 4, 10)  # two lines at most
    each = max(room // len(ranks) - 3, 4)  # " 12 · " per run
    for i, (name, rank, top) in enumerate(ranks):
        if i:
            t.append(" · ", style="dim")
        rank_text = "–" if rank is None else str(rank)
        t.append_text(literal(id_excerpt(name, max(each - len(rank_text) - 1, 3)), style="dim"))
        t.append(" ")
        t.append(rank_text, style="bold cyan" if top else "dim")
    return t


def label_text(label, mine, grades: dict[int, str]) -> Text:
    """The document's label now: `label 2 relevant by trec` and, when it differs, `yours 1`."""
    t = Text(end="")
    if label is None:
        t.append("not judged yet", style="bold magenta")
        return t
    t.append("label ", style="dim")
    t.append(f"{label.grade} {grades.get(label.grade, '')}".rstrip(), style="bold")
    if label.reviewer:
        t.append(" by ", style="dim")
        t.append_text(literal(excerpt(label.reviewer, 28), style="cyan"))
    if mine is not None and mine.reviewer != label.reviewer:
        t.append(" · yours ", style="dim")
        t.append(str(mine.grade), style="bold")
    if label.reason:
        t.append(" · ", style="dim")
        t.append_text(literal(excerpt(label.reason, 60), style="dim italic"))
    return t


class RankStrip(TextStatic):
    """One or two lines: the ranks in each run, then the label now."""

    def show_place(self, ranks, label, mine, grades: dict[int, str], *, k: int, blind: bool) -> None:
        width = self.size.width or self.app.size.width - self.styles.gutter.width  # (size: inside the padding)
        t = strip_text(ranks, width, k=k, blind=blind)
        if t.plain:
            t.append("\n")
        t.append_text(label_text(label, mine, grades))
        self.show(t)
