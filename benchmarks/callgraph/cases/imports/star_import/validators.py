# Validators exported through __all__.
import re

__all__ = ["validate_email", "validate_iban"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]+$")


def _normalize(value):
    return value.strip().lower()


def validate_email(value):
    return bool(_EMAIL.match(_normalize(value)))


def validate_iban(value):
    return _normalize(value).startswith("de")
