# Tests: a method called on an untyped parameter or local, whose name only one class and its subclass define, reaches that family.
class Token:
    def __init__(self, kind, value):
        self.kind = kind
        self.value = value

    def matches(self, kind, values=None):
        return self.kind == kind and (values is None or self.value.upper() in values)

    def flattened(self):
        yield self


class TokenGroup(Token):
    def __init__(self, tokens):
        super().__init__("group", "")
        self.tokens = tokens

    def flattened(self):
        for token in self.tokens:
            yield from token.flattened()


def is_keyword(token, *values):
    return token.matches("keyword", values)


def keywords_in(statement):
    found = []
    for item in statement.flattened():
        if is_keyword(item, "SELECT", "FROM"):
            found.append(item.value)
    return found


statement = TokenGroup([Token("keyword", "select"), TokenGroup([Token("name", "price"), Token("keyword", "from")])])
print(keywords_in(statement))
