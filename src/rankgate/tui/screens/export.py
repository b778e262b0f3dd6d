"""Export the reviewed labels for CI: where to write them."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rankgate.core.text import visible
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.prompts import EarlyKeys


class ExportDialog(EarlyKeys, ModalScreen[str | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default: str, folder: str | None = None) -> None:
        super().__init__()
        self.default = default
        self.folder = folder  # a browser session: a file name in this folder, nothing else
        self._wait_for_keys()  # the keys typed in one burst with `e` (prompts.EarlyKeys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text("Export reviewed qrels", style="bold"))
            yield Input(self.default, placeholder="file to write (.jsonl with reasons, or .trec)", id="export-path")
            if self.folder is not None:
                yield Static(Text(f"a file name (no folder) in the server's export folder {visible(self.folder)}",
                                  style="dim"))
            yield Static(Text("JSON lines keep grade, reason, version and reviewer; .trec or .txt writes TREC "
                              "qrels. Enter writes · Escape cancels", style="dim"))

    def on_mount(self) -> None:
        self.set_focus(self.query_one(Input))
        apply_cursor_blink(self)
        self._keys_ready()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value:
            self.dismiss(value)
