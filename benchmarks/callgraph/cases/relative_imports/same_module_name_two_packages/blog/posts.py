# Blog posts; imports the blog's own utils.
from .utils import slugify


def post_url(title):
    return f"/blog/{slugify(title)}"
