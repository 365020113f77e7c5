# Tests: filter objects and hook functions appended to a pipeline's lists from outside the class, then run in a loop over the attribute.
class UppercaseKeywords:
    def process(self, words):
        return [word.upper() if word in ("select", "from") else word for word in words]


class StripComments:
    def process(self, words):
        return [word for word in words if not word.startswith("--")]


class Serialize:
    def process(self, words):
        return " ".join(words)


def log_statement(text):
    print("ran:", text)


class Pipeline:
    def __init__(self):
        self.filters = []
        self.finishers = []
        self.hooks = []

    def run(self, sql):
        words = sql.split()
        for stage in self.filters:
            words = stage.process(words)
        text = words
        for finisher in self.finishers:
            text = finisher.process(text)
        for hook in self.hooks:
            hook(text)
        return text


def build_pipeline(pipeline, strip_comments):
    pipeline.filters.append(UppercaseKeywords())
    if strip_comments:
        pipeline.filters.append(StripComments())
    serializer = Serialize()
    pipeline.finishers.append(serializer)
    pipeline.hooks.append(log_statement)
    return pipeline


print(build_pipeline(Pipeline(), True).run("select price --total from orders"))
