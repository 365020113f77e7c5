# Utility package.
