# Export formats.
