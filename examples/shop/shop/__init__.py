"""shop: a small payments and billing backend."""

__version__ = "0.4.2"

__all__ = ["__version__"]
