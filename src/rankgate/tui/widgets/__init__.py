"""One module per pane of the review screen."""
