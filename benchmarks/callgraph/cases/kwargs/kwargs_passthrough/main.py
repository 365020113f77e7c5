# Tests: a callable forwarded through **kwargs of an intermediate function and picked out by key.


def to_csv(rows):
    return "\n".join(",".join(map(str, row)) for row in rows)


def to_tsv(rows):
    return "\n".join("\t".join(map(str, row)) for row in rows)


def render(rows, **options):
    formatter = options["formatter"]
    return formatter(rows)


def export(rows, **options):
    return render(rows, **options)


print(export([[1, "a"], [2, "b"]], formatter=to_tsv))
