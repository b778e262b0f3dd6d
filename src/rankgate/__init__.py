"""rankgate: score retrieval runs against reviewed labels and gate releases.

The public Python API; names load on first use so that `import rankgate`
(and every CLI start) stays cheap.
"""

__version__ = "0.1.0"

_API = {
    "InputError": "rankgate.core.errors",
    "ValidationError": "rankgate.core.errors",
    "read_qrels": "rankgate.core.formats",
    "read_runs": "rankgate.core.formats",
    "evaluate": "rankgate.core.engine",
    "parse_measure": "rankgate.core.measures",
    "parse_measures": "rankgate.core.measures",
    "load_bundle": "rankgate.core.bundle",
    "run_gate": "rankgate.core.gate",
}

__all__ = [*_API, "__version__"]


def __getattr__(name: str):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'rankgate' has no attribute {name!r}")
