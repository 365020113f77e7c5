# Re-exports slugify under another name.
from helpers import slugify as make_slug


def title_slug(title):
    return make_slug(title)
