"""The headless core: formats, validation, measures, gate. Never imports textual or tinydb."""
