# Tests: functions passed as (positional and keyword) arguments and called by the receiving function.


def with_vat(price):
    return round(price * 1.2, 2)


def with_discount(price):
    return round(price * 0.9, 2)


def reprice(prices, rule):
    return [rule(price) for price in prices]


def reprice_all(prices):
    return reprice(prices, with_vat), reprice(prices, rule=with_discount)


print(reprice_all([10.0, 20.0]))
