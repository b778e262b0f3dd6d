"""The footer, dropping whole keys that do not fit: never a key without its label ("n▏^p palette").

Textual's compact Footer lays its keys out in a row and docks the palette key on the right, over
whatever does not fit; at 80 columns that cut one key to its letter. Here every key past the first
that would not fit beside the palette key is hidden (the palette and `?` list them all).
"""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittingFooter(Footer):
    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        self.fit()

    def key_width(self, key: FooterKey) -> int:
        """The cells a key takes: its text, its margin, its padding and border (the palette key's)."""
        styles = key.styles
        return (key.get_content_width(Size(0, 0), Size(0, 0)) + styles.margin.width + styles.padding.width
                + styles.border.spacing.width)

    def fit(self) -> None:
        keys = list(self.query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        room = self.size.width - sum(self.key_width(k) for k in palette)
        if self.size.width <= 0:
            return
        used, fits = 0, True
        for key in keys:
            if key in palette:
                continue
            used += self.key_width(key)
            fits = fits and used <= room
            if key.display != fits:
                key.display = fits
