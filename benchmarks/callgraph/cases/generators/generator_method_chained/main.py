# Tests: a generator method called on a freshly built instance (chained call); it calls another method per batch.


class Batcher:
    def __init__(self, size):
        self.size = size

    def _flush(self, batch):
        return {"count": len(batch), "items": list(batch)}

    def batches(self, items):
        batch = []
        for item in items:
            batch.append(item)
            if len(batch) == self.size:
                yield self._flush(batch)
                batch = []
        if batch:
            yield self._flush(batch)


class Exporter:
    def batches(self, items):
        yield items


for chunk in Batcher(2).batches(["in_1", "in_2", "in_3"]):
    print(chunk)
