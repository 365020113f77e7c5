# Tests: two packages each have utils.slugify; relative imports resolve to the importer's own package.
from blog.posts import post_url
from shop.products import product_url

print(post_url("Year in Review"), product_url("Mechanical Keyboard"))
