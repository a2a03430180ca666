"""The Record's shared values."""

from __future__ import annotations


def test_utc_iso_is_iso_8601_with_milliseconds() -> None:
    import datetime

    from lsp_verify.record import utc_iso

    for seconds in (0.0, 0.999, 1764480000.5, 1764480000.0009, 4102444799.123):
        expected = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
        expected = expected.replace(microsecond=int(seconds * 1000) % 1000 * 1000)
        assert utc_iso(seconds) == expected.isoformat(timespec="milliseconds").replace(
            "+00:00", "Z"
        )
