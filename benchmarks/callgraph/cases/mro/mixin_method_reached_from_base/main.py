# Tests: a base-class method calls self.m() where only a mixin of its subclasses defines m, and the mixin calls a method of the base it is combined with.
class AliasMixin:
    def alias(self):
        keyword_index = self.find_keyword("AS")
        if keyword_index is None:
            return None
        return self.words[keyword_index + 1]


class Expression:
    def __init__(self, text):
        self.words = text.split()

    def find_keyword(self, keyword):
        upper = [word.upper() for word in self.words]
        return upper.index(keyword) if keyword in upper else None

    def display_name(self):
        named = self.alias() if isinstance(self, AliasMixin) else None
        return named or self.words[0]


class Column(AliasMixin, Expression):
    pass


class Literal(Expression):
    pass


print(Column("price * quantity AS total").display_name())
print(Literal("42").display_name())
