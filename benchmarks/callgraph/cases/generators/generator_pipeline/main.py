# Tests: generators chained into a pipeline; calls inside each generator (and genexpr) belong to it.


def rows(text):
    for line in text.splitlines():
        yield line


def parse_row(line):
    name, amount = line.split(",")
    return name, float(amount)


def parsed(lines):
    for line in lines:
        yield parse_row(line)


def is_large(record, threshold):
    return record[1] >= threshold


def only_large(records, threshold):
    return (record for record in records if is_large(record, threshold))


def report(text):
    return list(only_large(parsed(rows(text)), 100))


print(report("acme,250\nglobex,20\ninitech,120"))
