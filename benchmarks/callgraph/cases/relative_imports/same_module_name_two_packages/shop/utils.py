# Shop helpers with a different slugify.


def slugify(name):
    return "_".join(name.upper().split())
