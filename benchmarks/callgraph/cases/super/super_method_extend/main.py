# Tests: an overriding method extends the base implementation through super().


class Serializer:
    def serialize(self, invoice):
        return {"number": invoice["number"]}


class DetailedSerializer(Serializer):
    def serialize(self, invoice):
        data = super().serialize(invoice)
        data["lines"] = len(invoice["lines"])
        return data


print(DetailedSerializer().serialize({"number": "INV-9", "lines": [1, 2]}))
