# Tests: a class attribute holding a class, instantiated through self; a subclass overrides the attribute.


class JsonSerializer:
    def __init__(self, indent=None):
        self.indent = indent

    def dump(self, data):
        return str(data)


class CsvSerializer:
    def dump(self, data):
        return ",".join(str(value) for value in data.values())


class Exporter:
    serializer_class = JsonSerializer

    def export(self, data):
        return self.serializer_class().dump(data)


class CsvExporter(Exporter):
    serializer_class = CsvSerializer


print(Exporter().export({"id": "in_1", "total": 10}))
print(CsvExporter().export({"id": "in_2", "total": 20}))
