# Tests: cooperative super() in a diamond: super() in the left base reaches the right sibling, not the common base.


class Pipeline:
    def process(self, record):
        return record


class Validating(Pipeline):
    def process(self, record):
        record = dict(record, valid=True)
        return super().process(record)


class Enriching(Pipeline):
    def process(self, record):
        record = dict(record, region="EU")
        return super().process(record)


class InvoicePipeline(Validating, Enriching):
    def process(self, record):
        return super().process(record)


print(InvoicePipeline().process({"id": "in_1"}))
