# JSON export.
import json


def write(rows):
    return json.dumps(rows)
