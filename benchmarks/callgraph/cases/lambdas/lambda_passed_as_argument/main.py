# Tests: a lambda handed to a function is called from that function's body; the lambda's own calls are its edges.
def apply_to_lines(lines, transform):
    return [transform(line) for line in lines]


def discount(price, rate):
    return round(price * (1 - rate), 2)


def with_shipping(price):
    return price + 4.99


def price_list(prices, rate):
    discounted = apply_to_lines(prices, lambda price: discount(price, rate))
    return apply_to_lines(discounted, lambda price: with_shipping(price) if price < 50 else price)


print(price_list([20.0, 80.0], 0.1))
