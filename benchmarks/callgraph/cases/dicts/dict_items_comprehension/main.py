# Tests: every value of a dict called inside a dict comprehension (the calls belong to the enclosing function).


def check_database():
    return "ok"


def check_cache():
    return "ok"


def check_queue():
    return "degraded"


HEALTH_CHECKS = {"database": check_database, "cache": check_cache}
HEALTH_CHECKS["queue"] = check_queue


def health_report():
    return {name: check() for name, check in HEALTH_CHECKS.items()}


print(health_report())
