# Tests: instantiating a subclass without __init__ runs the base __init__; the override of describe() wins.


class Report:
    def __init__(self, title):
        self.title = title

    def describe(self):
        return f"Report: {self.title}"


class SalesReport(Report):
    def describe(self):
        return f"Sales report: {self.title}"


report = SalesReport("Q3")
print(report.describe())
