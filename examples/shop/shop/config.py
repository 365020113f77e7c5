"""Runtime configuration, read from environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Optional

# --- Defaults -------------------------------------------------------------

DEFAULT_CURRENCY = "usd"
SUPPORTED_CURRENCIES = ("usd", "eur", "gbp", "cad", "aud")
MAX_RETRIES = 4
BACKOFF_BASE_SECONDS = 60.0
BACKOFF_MULTIPLIER = 2.0
BACKOFF_JITTER = 0.1
DEFAULT_DATABASE_URL = "sqlite:///shop.db"
WEBHOOK_TOLERANCE_SECONDS = 300


class ConfigError(RuntimeError):
    """Raised when a required setting is missing or malformed."""


@dataclass(frozen=True)
class Settings:
    """Immutable snapshot of the service configuration."""

    stripe_api_key: str
    stripe_webhook_secret: str
    payment_max_retries: int = MAX_RETRIES
    payment_backoff_base_seconds: float = BACKOFF_BASE_SECONDS
    database_url: str = DEFAULT_DATABASE_URL
    default_currency: str = DEFAULT_CURRENCY
    supported_currencies: tuple = field(default=SUPPORTED_CURRENCIES)

    @property
    def is_test_mode(self) -> bool:
        return self.stripe_api_key.startswith("sk_test_")


def _require(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise ConfigError(f"missing required environment variable {name}")
    return value


def _int_setting(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from exc
    if value < 0:
        raise ConfigError(f"{name} must be non-negative")
    return value


def _float_setting(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from exc


def load_settings(env: Optional[Mapping[str, str]] = None) -> Settings:
    """Build :class:`Settings` from ``env`` (defaults to ``os.environ``)."""
    if env is None:
        env = os.environ
    return Settings(
        stripe_api_key=_require(env, "STRIPE_API_KEY"),
        stripe_webhook_secret=_require(env, "STRIPE_WEBHOOK_SECRET"),
        payment_max_retries=_int_setting(env, "PAYMENT_MAX_RETRIES", MAX_RETRIES),
        payment_backoff_base_seconds=_float_setting(
            env, "PAYMENT_BACKOFF_BASE_SECONDS", BACKOFF_BASE_SECONDS
        ),
        database_url=os.getenv("DATABASE_URL", DEFAULT_DATABASE_URL),
    )
