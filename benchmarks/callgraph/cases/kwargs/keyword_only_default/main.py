# Tests: a keyword-only parameter with a function default; the default and the override are both called.


def to_json(report):
    return str(report)


def to_text(report):
    return " | ".join(f"{key}={value}" for key, value in report.items())


def export(report, *, serializer=to_json):
    return serializer(report)


summary = {"invoices": 12, "overdue": 2}
print(export(summary))
print(export(summary, serializer=to_text))
