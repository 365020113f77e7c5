# Tests: functions and classes of re and collections by import path, and methods of a compiled pattern, a match and a Counter.
import re
from collections import Counter, defaultdict

INVOICE_ID = re.compile(r"INV-(\d+)")


def invoice_numbers(text):
    return [int(match.group(1)) for match in INVOICE_ID.finditer(text)]


def count_statuses(events):
    counts = Counter(event["status"] for event in events)
    return counts.most_common(1)


def group_by_customer(events):
    groups = defaultdict(list)
    for event in events:
        groups[event["customer"]].append(event["id"])
    return dict(groups)


EVENTS = [
    {"id": "evt_1", "customer": "acme", "status": "paid"},
    {"id": "evt_2", "customer": "acme", "status": "failed"},
    {"id": "evt_3", "customer": "globex", "status": "paid"},
]
print(invoice_numbers("Paid INV-12 and INV-40; INV-7 is open"))
print(count_statuses(EVENTS))
print(group_by_customer(EVENTS))
