# Tests: imports executed inside function bodies (function-local module bindings).


def export_csv(rows):
    from exporters import csv_out

    return csv_out.write(rows)


def export_json(rows):
    import exporters.json_out

    return exporters.json_out.write(rows)


print(export_csv([["id", "total"], ["in_1", 10]]))
print(export_json([{"id": "in_1"}]))
