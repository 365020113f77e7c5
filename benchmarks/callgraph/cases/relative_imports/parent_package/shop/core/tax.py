# VAT rates.


def rate_for(country):
    return {"DE": 0.19, "FR": 0.20}.get(country, 0.0)
