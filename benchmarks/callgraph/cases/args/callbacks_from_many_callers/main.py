# Tests: one helper receives a different matching function from each of many callers and calls it through its parameter.
def group_tokens(tokens, accepts):
    grouped, current = [], []
    for token in tokens:
        if accepts(token):
            current.append(token)
        elif current:
            grouped.append(current)
            current = []
    if current:
        grouped.append(current)
    return grouped


def group_numbers(tokens):
    def is_number(token):
        return token.isdigit()

    return group_tokens(tokens, is_number)


def group_words(tokens):
    def is_word(token):
        return token.isalpha()

    return group_tokens(tokens, is_word)


def group_operators(tokens):
    def is_operator(token):
        return token in "+-*/"

    return group_tokens(tokens, is_operator)


def group_parentheses(tokens):
    def is_parenthesis(token):
        return token in "()"

    return group_tokens(tokens, is_parenthesis)


def group_commas(tokens):
    def is_comma(token):
        return token == ","

    return group_tokens(tokens, is_comma)


def group_quotes(tokens):
    def is_quote(token):
        return token in "'\""

    return group_tokens(tokens, is_quote)


def group_dots(tokens):
    def is_dot(token):
        return token == "."

    return group_tokens(tokens, is_dot)


def group_keywords(tokens):
    def is_keyword(token):
        return token.upper() in ("SELECT", "FROM", "WHERE")

    return group_tokens(tokens, is_keyword)


def group_all(tokens):
    return [
        group_numbers(tokens),
        group_words(tokens),
        group_operators(tokens),
        group_parentheses(tokens),
        group_commas(tokens),
        group_quotes(tokens),
        group_dots(tokens),
        group_keywords(tokens),
    ]


print(group_all(["SELECT", "a", ",", "b", "+", "1", "2", "FROM", "t", ".", "c", "(", ")", "'"]))
