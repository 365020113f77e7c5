# Tests: functions handed to map/filter/sorted(key=) run inside the builtin; the edge is from the passing function.


def normalize_sku(sku):
    return sku.strip().upper()


def is_active(sku):
    return not sku.startswith("X-")


def sku_number(sku):
    return int(sku.split("-")[1])


def clean_catalog(skus):
    cleaned = list(map(normalize_sku, skus))
    active = filter(is_active, cleaned)
    return sorted(active, key=sku_number)


print(clean_catalog([" a-3", "x-1", "b-2 "]))
