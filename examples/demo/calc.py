def add(a: int, b: int) -> int:
    return a + b


def mean(values: list[float]) -> float:
    # Deliberate bug for the demo: off by one in the divisor.
    return sum(values) / (len(values) + 1)
