# HTTP API package.
