"""The benchmark's labelling guidelines (`guidelines = "GUIDELINES.md"` in benchmark.toml), as Markdown.

The file is read when the screen opens (an edit shows on the next open). No
guidelines, or a file that cannot be read, is said in place; the app goes on.
Control characters in the file are shown as visible escapes (core.text.visible).
"""

from __future__ import annotations

import stat
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from rankgate.core.text import visible
from rankgate.tui.safe import literal

MAX_BYTES = 1_000_000  # more is not guidelines; the screen says so rather than render it


def read_guidelines(path: Path | None, folder: Path | None = None) -> tuple[str | None, str]:
    """(Markdown text, "") or (None, why there is nothing to show). Checked again at each opening, as
    benchmark.toml's loading checked it: a regular file inside the benchmark's folder."""
    if path is None:
        return None, 'no guidelines: add guidelines = "GUIDELINES.md" to benchmark.toml (a Markdown file beside it)'
    try:
        if folder is not None and path.resolve() != folder.resolve() and folder.resolve() not in path.resolve().parents:
            return None, f"cannot read the guidelines: {path} now leads outside the benchmark folder"
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):  # a pipe would block the app while it waits for a writer
            return None, f"cannot read the guidelines: {path} is not a regular file"
        size = st.st_size
        if size > MAX_BYTES:
            return None, f"cannot show the guidelines: {path.name} is {size:,} bytes (at most {MAX_BYTES:,})"
        data = path.read_bytes()
        return visible(data.decode("utf-8"), lines="keep"), ""
    except FileNotFoundError:
        return None, f"cannot read the guidelines: no such file {path}"
    except IsADirectoryError:
        return None, f"cannot read the guidelines: {path} is a folder, expected a Markdown file"
    except UnicodeDecodeError as e:
        return None, f"cannot read the guidelines: {path.name} is not UTF-8 text (byte {e.start})"
    except (OSError, RuntimeError) as e:  # RuntimeError: a symlink loop, as pathlib says it
        return None, f"cannot read the guidelines: {path}: {getattr(e, 'strerror', None) or e}"


class GuidelinesScreen(ModalScreen[None]):
    BINDINGS = [("escape,G,q", "dismiss(None)", "Close")]

    def __init__(self, path: Path | None, folder: Path | None = None) -> None:
        super().__init__()
        self.path = path
        self.text, self.problem = read_guidelines(path, folder)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="guidelines"):
            title = Text("Guidelines", style="bold", end="")
            if self.path is not None:
                title.append("  ")
                title.append_text(literal(self.path.name, style="cyan"))
            yield Static(title, id="guidelines-title")
            with VerticalScroll(id="guidelines-body"):
                if self.text is not None:
                    yield Markdown(self.text, id="guidelines-md", open_links=False)
                else:
                    yield Static(literal(self.problem, style="italic"), id="guidelines-problem")
            yield Static(Text("Escape closes", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#guidelines-body").focus()
