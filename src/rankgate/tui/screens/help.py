"""The keys and the legend of marks, in one place."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.tui.commands import COMMANDS, grade_commands, keys_pressed
from rankgate.core.benchmark import DEFAULT_GRADES
from rankgate.tui.safe import literal
from rankgate.tui.widgets.marks import HIT, MISS, MUST, STATE, STATE_WORDS


class HelpScreen(ModalScreen[None]):
    BINDINGS = [("escape,question_mark,q", "dismiss(None)", "Close")]

    def __init__(self, grades: dict[int, str] | None = None, commands=COMMANDS) -> None:
        super().__init__()
        self.grades = grades or DEFAULT_GRADES
        self.commands = commands  # the review screen's, or the judging screen's (commands.JUDGING_COMMANDS)

    def compose(self) -> ComposeResult:
        keys = Table(box=None, show_header=False, padding=(0, 1))
        keys.add_column(style="bold")
        keys.add_column()
        keys.add_row("esc", "Close this help (and any dialog: Escape leaves it with nothing changed)")
        for c in grade_commands(self.grades):  # each grade of the benchmark's scale, with its key
            how = "" if c.key_display == "g" else "  (- then the digit)" if c.key_display.startswith("-") else ""
            keys.add_row(c.key_display, literal(c.title + how))
        for c in self.commands:
            keys.add_row(keys_pressed(c), c.title)
        panes = self.commands is COMMANDS  # the judging screen has no panes: no tab, no pane legend
        if panes:
            keys.add_row("tab", "Next pane (shift+tab: previous)")
        keys.add_row("ctrl+p", "Command palette: every command by name")
        with VerticalScroll(classes="dialog wide"):
            yield Static(Text("Keys", style="bold"))
            yield Static(keys, id="help-keys")
            yield Static(Text("\nLegend", style="bold"))
            yield Static(self.pane_legend() if panes else self.judging_legend(), id="help-legend")

    @staticmethod
    def judging_legend() -> Text:
        legend = Text(end="")
        legend.append(" rank ", style="dim")
        legend.append("4", style="bold cyan")
        legend.append(" in a run's top k (bold), ")
        legend.append("19", style="dim")
        legend.append(" past it, ")
        legend.append("–", style="dim")
        legend.append(" not ranked by that run\n")
        legend.append(" not judged yet", style="bold magenta")
        legend.append(" / label 2 by NAME: the document's label now (yours beside it when it differs)")
        return legend

    @staticmethod
    def pane_legend() -> Text:
        legend = Text(end="")
        for state, (glyph, style) in STATE.items():
            legend.append(f" {glyph} ", style=style)
            legend.append(f"{STATE_WORDS[state]}\n")
        legend.append(f" {HIT[0]} ", style=HIT[1])
        legend.append("hit: a relevant document in the top k    ")
        legend.append(f"{MISS[0]} ", style=MISS[1])
        legend.append("miss\n")
        legend.append(f" {MUST[0]} ", style=MUST[1])
        legend.append("must-pass query    ")
        legend.append("▲2 ▼3", style="bold")
        legend.append(" rank movement from baseline to candidate    ")
        legend.append("?n", style="bold magenta")
        legend.append(" unjudged documents in some run's top k")
        return legend
