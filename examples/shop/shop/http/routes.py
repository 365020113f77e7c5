"""A tiny route registry.

The real deployment mounts these handlers behind a WSGI adapter; the
registry only records which function serves which path and method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Mapping, Optional, Tuple

Handler = Callable[["Request"], "Response"]


@dataclass
class Request:
    method: str
    path: str
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)

    def header(self, name: str, default: Optional[str] = None) -> Optional[str]:
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return value
        return default


@dataclass
class Response:
    status: int = 200
    body: dict = field(default_factory=dict)

    @classmethod
    def error(cls, status: int, message: str) -> "Response":
        return cls(status=status, body={"error": message})


class RouteNotFound(LookupError):
    """No handler is registered for the requested path and method."""


class Router:
    """Maps ``(method, path)`` pairs to handler functions."""

    def __init__(self) -> None:
        self._routes: Dict[Tuple[str, str], Handler] = {}

    def route(self, path: str, methods: Iterable[str] = ("GET",)) -> Callable[[Handler], Handler]:
        """Register the decorated function for ``path`` and ``methods``."""

        def decorator(func: Handler) -> Handler:
            for method in methods:
                key = (method.upper(), path)
                if key in self._routes:
                    raise ValueError(f"route already registered: {method} {path}")
                self._routes[key] = func
            return func

        return decorator

    def resolve(self, method: str, path: str) -> Handler:
        try:
            return self._routes[(method.upper(), path)]
        except KeyError:
            raise RouteNotFound(f"{method} {path}") from None

    def dispatch(self, request: Request) -> Response:
        handler = self.resolve(request.method, request.path)
        return handler(request)


router = Router()
