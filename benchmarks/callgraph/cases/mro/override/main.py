# Tests: the subclass override is called, not the base method.


class Exporter:
    def export(self, rows):
        return f"{len(rows)} rows"


class CsvExporter(Exporter):
    def export(self, rows):
        return "\n".join(",".join(row) for row in rows)


exporter = CsvExporter()
print(exporter.export([["id", "amount"], ["in_1", "10"]]))
