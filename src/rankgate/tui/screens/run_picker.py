"""Choose the baseline or the candidate among every loaded run (never the run already on the other side)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rankgate.tui.safe import excerpt, literal


def same_run_refusal(role: str, name: str) -> str:
    """Why a run cannot take `role`: it is already the other side (a run compared with itself gates nothing)."""
    other = "candidate" if role == "baseline" else "baseline"
    return (f"{excerpt(name, 40)} is already the {other}: a run cannot be both baseline and candidate "
            "(w swaps them)")


class RunPicker(ModalScreen[str | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, role: str, runs: list[str], current: str, other: str) -> None:
        super().__init__()
        self.role, self.runs, self.current, self.other = role, runs, current, other

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"Choose the {self.role} run", style="bold"))
            options = []
            for i, name in enumerate(self.runs):
                t = literal(name)
                if name == self.current:
                    t.append(f"  (the {self.role} now)", style="dim")
                elif name == self.other:
                    t.append(f"  ({'candidate' if self.role == 'baseline' else 'baseline'} now: w swaps)", style="dim")
                options.append(Option(t, id=str(i)))
            yield OptionList(*options, id="run-options")
            yield Static(Text("Enter chooses · Escape cancels", style="dim"))

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.highlighted = self.runs.index(self.current) if self.current in self.runs else 0
        ol.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        name = self.runs[int(event.option.id)]
        if name == self.other:  # refused with the reason; the dialog stays open, nothing changes
            self.app.notify(same_run_refusal(self.role, name), severity="warning", timeout=4)
            return
        self.dismiss(name)
