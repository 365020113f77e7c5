# Tests: nested functions calling a sibling nested function and a module-level helper.


def clean(value):
    return value.strip()


def parse_config(text):
    def parse_line(line):
        key, _, value = line.partition("=")
        return clean(key), clean(value)

    def parse_all():
        return dict(parse_line(line) for line in text.splitlines() if line)

    return parse_all()


print(parse_config("host = localhost\nport = 8080\n"))
