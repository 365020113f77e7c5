# Tests: a visitor picks its method with getattr on a name built from the node's class; every method with that prefix and the default are possible targets.
class Select:
    pass


class Where:
    pass


class Limit:
    pass


class SqlFormatter:
    def __init__(self):
        self.lines = []

    def _format_select(self, node):
        self.lines.append("SELECT")

    def _format_where(self, node):
        self.lines.append("WHERE")

    def _format_default(self, node):
        self.lines.append(type(node).__name__.upper())

    def format(self, node):
        method_name = "_format_{kind}".format(kind=type(node).__name__)
        handler = getattr(self, method_name.lower(), self._format_default)
        handler(node)

    def render(self, nodes):
        for node in nodes:
            self.format(node)
        return " ".join(self.lines)


formatter = SqlFormatter()
print(formatter.render([Select(), Where(), Limit()]))
