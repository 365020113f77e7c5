# Tests: lambdas kept in a list and on an instance attribute are called through them; each lambda calls its own function.
def strip_spaces(text):
    return text.strip()


def upper(text):
    return text.upper()


def no_dashes(text):
    return text.replace("-", "")


class Normaliser:
    def __init__(self):
        self.steps = [lambda text: strip_spaces(text), lambda text: upper(text)]
        self.finish = lambda text: no_dashes(text)

    def run(self, text):
        for step in self.steps:
            text = step(text)
        return self.finish(text)


print(Normaliser().run("  inv-2026-0042 "))
