"""The package's version, in the lowest layer so that the core (receipts) can name it without importing the
package root. pyproject.toml reads it from here (`[tool.setuptools.dynamic]`): this is the one place to bump."""

__version__ = "0.1.0"
