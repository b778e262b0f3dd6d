"""Keys typed ahead (in the same burst as the key that opened a prompt) typed into a text field as
typing does; the prompts, the reason bar and the query filter share it (screens/prompts.py EarlyKeys)."""

from __future__ import annotations

from typing import Callable

from textual import events


def type_key(event: events.Key, *, insert: Callable[[str], object], delete_left: Callable[[], object],
             enter: Callable[[], object] | None = None, escape: Callable[[], object] | None = None) -> bool:
    """A character is inserted, Backspace deletes, Enter and Escape do what the field's owner gives; False
    for any other key (the caller lets it run as a key typed now)."""
    if event.key == "enter" and enter is not None:
        enter()
    elif event.key == "escape" and escape is not None:
        escape()
    elif event.key == "backspace":
        delete_left()
    elif event.is_printable and event.character:
        insert(event.character)
    else:
        return False
    return True


def typed_into(inp) -> Callable[[str], object]:
    """How a character typed into a textual Input goes in: over the selection when there is one (a prompt's
    filled-in value is selected, and typing replaces it), else at the cursor, as the Input's own keys do."""
    def insert(text: str) -> None:
        if inp.selection.is_empty:
            inp.insert_text_at_cursor(text)
        else:
            inp.replace(text, *inp.selection)
    return insert
