"""Notices on a line of their own, at the foot of the screen, in place of the footer while shown.

A toast sat over the candidate list for 5-10 s; this line covers nothing: the footer's key hints give way
to it until it times out (the panes above keep every row). Up to three lines, wrapped."""

from __future__ import annotations

from rich.text import Text

from rankgate.core.text import visible
from rankgate.tui.widgets.text_static import TextStatic

STYLES = {"information": "bold", "warning": "bold yellow", "error": "bold red"}


class NoticeLine(TextStatic):
    DEFAULT_CSS = """
    NoticeLine { dock: bottom; height: auto; max-height: 3; padding: 0 1; background: $panel; display: none; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._timer = None
        self.message = ""  # the notice shown now ("" when none)

    def say(self, message: str, *, title: str = "", severity: str = "information", timeout: float | None = None,
            markup: bool = True) -> None:
        if markup:
            plain = Text.from_markup(str(message)).plain
        else:
            plain = str(message)
        plain = " · ".join(visible(line, lines="space") for line in plain.splitlines() if line.strip())
        t = Text(end="")
        if title:
            t.append(f"{visible(title, lines='space')}: ", style="dim")
        t.append(plain, style=STYLES.get(severity, "bold"))
        self.message = t.plain
        self.display = True
        self._footer(False)
        self.show(t)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(timeout if timeout is not None else 5.0, self.clear)

    def clear(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.message = ""
        self.display = False
        self._footer(True)

    def _footer(self, shown: bool) -> None:
        from textual.widgets import Footer

        for footer in self.screen.query(Footer):
            footer.display = shown
