"""The page-number checker itself: it must read what pages write and reject what is wrong."""

import pytest
from page_numbers import check_statement, evaluate, to_python


@pytest.mark.parametrize(
    ("tex", "value"),
    [
        ("47\\,117", 47117),
        ("4\\,194\\,304", 4194304),
        ("1\\,000\\,000\\,000", 10**9),
        ("2 \\cdot 1\\,024", 2048),
        ("\\frac{1}{2}", 0.5),
        ("2^{10}", 1024),
        ("0.1 \\ln 4 + 1", 0.1 * 1.3862943611198906 + 1),
    ],
)
def test_reads_numbers_as_pages_write_them(tex, value):
    assert evaluate(to_python(tex)) == pytest.approx(value)


def test_symbols_are_not_numeric():
    assert to_python("T \\cdot d") is None


def test_wrong_statements_fail_and_rounding_is_allowed():
    assert check_statement("4\\,194\\,304 = 2^{22}") == 1
    assert check_statement("\\pi \\approx 3.14") == 1
    with pytest.raises(AssertionError):
        check_statement("4\\,194\\,305 = 2^{22}")
    with pytest.raises(AssertionError):
        check_statement("\\pi \\approx 3.15")
