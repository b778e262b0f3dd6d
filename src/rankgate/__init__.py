"""rankgate: score retrieval runs against reviewed labels and gate releases.

The public Python API lives here; the CLI and the app are faces on it.
"""

__version__ = "0.1.0"

from rankgate.core.errors import InputError, ValidationError  # noqa: E402
from rankgate.core.formats import read_qrels, read_runs  # noqa: E402
from rankgate.core.engine import evaluate  # noqa: E402
from rankgate.core.measures import parse_measure, parse_measures  # noqa: E402

__all__ = [
    "InputError",
    "ValidationError",
    "read_qrels",
    "read_runs",
    "evaluate",
    "parse_measure",
    "parse_measures",
    "__version__",
]
