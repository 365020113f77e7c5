# Products; imports the shop's own utils module.
from . import utils


def product_url(name):
    return f"/shop/{utils.slugify(name)}"
