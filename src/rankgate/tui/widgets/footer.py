"""The footer, leaving out whole keys that do not fit: never a key without its label ("n▏^p palette").

Textual's compact Footer lays its keys out in a row and docks the palette key on the right, over
whatever does not fit; at 80 columns that cut one key to its letter. Here the footer composes only the
keys that fit beside the palette key, in order (the palette and `?` list them all), and composes again
when its width changes.

Hiding the keys that do not fit after they were laid out (`display = False`) was not enough: after `p`
the footer is recomposed several times in a row, and one time in ten the screen kept a hidden key's
letter ("a add n▏^p palette") until the next full repaint. Keys that are never mounted are never drawn.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, KeyGroup

# The cells around a compact key's text (app.tcss and Textual's Footer CSS): a key takes its letter, a space,
# its label and a margin of 1; the palette key a border of 1, its letter, a space, its label and a padding of 1.
KEY_EXTRA = 1
PALETTE_EXTRA = 2


def key_text_width(key: FooterKey) -> int:
    return cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0)


# Keys given room first, shown last (beside the palette key): (action, from this width, below this width).
# `? help` always; `p` below 120 columns, where it is the only way to the Query and Document panes;
# `q quit` from 140 columns (narrower it would push out `n next` or `u queue`).
PRIORITY = (("help", 0, None), ("next_pane", 0, 120), ("quit", 140, None))


def priority_actions(width: int) -> list[str]:
    return [a for a, lo, hi in PRIORITY if width >= lo and (hi is None or width < hi)]


class FittingFooter(Footer):
    _shown: tuple | None = None  # the signature of the last compose

    def _signature(self) -> tuple | None:
        """What compose lays out from: the width, the form and the screen's bindings as shown."""
        try:
            bindings = self.screen.active_bindings
        except Exception:  # not on a screen (yet, or any more)
            return None
        return (self.size.width, self.compact, self.show_command_palette,
                tuple((key, b.key, b.action, b.description, b.show, b.group, enabled, tooltip)
                      for key, (_, b, enabled, tooltip) in bindings.items()))

    async def recompose(self) -> None:
        """Compose again only when what is shown would change: the keys change with the focus and the
        screen, often back to the same ones (about half of the composes in the app tests), and each compose
        mounts every key again."""
        if self._shown is not None and self._bindings_ready and self._signature() == self._shown:
            return
        await super().recompose()

    def compose(self):
        self._forget_removed_keys()
        self._shown = self._signature() if self._bindings_ready else None
        widgets = list(super().compose())
        if self.compact:  # the class its `compact` binding would add once mounted: one style pass a key, not two
            for w in widgets:
                if isinstance(w, FooterKey):
                    w.add_class("-compact", update=False)
        width = self.size.width
        if width <= 0 or any(isinstance(w, KeyGroup) for w in widgets):
            yield from widgets  # not laid out yet (composed again on resize), or grouped keys: all of them
            return
        palette = [w for w in widgets if isinstance(w, FooterKey) and w.has_class("-command-palette")]
        room = width - sum(key_text_width(k) + PALETTE_EXTRA for k in palette)
        first = {a: i for i, a in enumerate(priority_actions(width))}
        kept = []  # the priority keys that fit, in their order
        for w in sorted((w for w in widgets if isinstance(w, FooterKey) and w.action in first),
                        key=lambda w: first[w.action]):
            if key_text_width(w) + KEY_EXTRA <= room:
                room -= key_text_width(w) + KEY_EXTRA
                kept.append(w)
        used, fits = 0, True
        for w in widgets:
            if isinstance(w, FooterKey) and w not in palette:
                if w.action in first:
                    continue  # placed below, before the palette key
                used += key_text_width(w) + KEY_EXTRA
                fits = fits and used <= room
                if not fits:
                    continue  # this key and every one after it: left out whole
            if w in palette:
                yield from kept
            yield w
        if not palette:
            yield from kept

    def _forget_removed_keys(self) -> None:
        """Textual's Footer binds each key it composes to its `compact` (`data_bind`), which files the key
        under the footer's watchers; Textual drops a removed key from there only when `compact` changes
        (Textual issue #6666). The footer is composed again whenever the keys change (twice a grade: the
        reason prompt opens and closes), so every key ever shown stayed: ~1 MB an edit that never came
        back. The keys removed by the last compose go now, as Textual itself drops them."""
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers if not node._closing]

    def on_resize(self) -> None:
        if self._bindings_ready:  # recompose itself lets a height-only change pass
            self.call_after_refresh(self.recompose)
