# API layer.
