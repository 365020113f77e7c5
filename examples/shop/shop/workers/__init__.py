"""Background workers."""
