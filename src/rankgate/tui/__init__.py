"""The review app (`rankgate review`): Textual panes over the label store and the core.

Only modules under `rankgate.tui` import textual; `model`, `loader`, `labels`,
`runcache` and `safe` are plain Python so they can be tested and benchmarked
without a terminal.
"""
