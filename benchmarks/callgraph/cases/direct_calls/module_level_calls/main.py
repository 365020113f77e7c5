# Tests: plain calls between module functions and from module-level code (a function named main in main.py).


def parse_amount(text):
    return float(text.strip().lstrip("$"))


def apply_discount(amount, percent):
    return amount * (1 - percent / 100)


def checkout(text):
    amount = parse_amount(text)
    return apply_discount(amount, 10)


def main():
    print(checkout(" $120.00 "))


main()
