# Tests: calling a generator function (edge to it) and calling a function in the loop body.


def read_lines(text):
    for line in text.splitlines():
        if line.strip():
            yield line.strip()


def parse_line(line):
    sku, qty = line.split(":")
    return sku, int(qty)


for raw in read_lines("A-1: 2\n\nB-7: 5\n"):
    print(parse_line(raw))
