"""Every benchmark stays runnable: ``bin/bench`` builds its parser from every bench module, so a
bench that no longer imports (an API it used was moved or removed) breaks ``bin/bench`` for all
of them. Benches are scripts, not tests; this only proves each one still loads and registers."""

from __future__ import annotations

import pytest

from tests.bench.main import BENCHES, build_parser


def test_bin_bench_builds_its_parser_from_every_bench() -> None:
    parser = build_parser()
    for name in BENCHES:
        with pytest.raises(SystemExit) as shown:
            parser.parse_args([name, "--help"])
        assert shown.value.code == 0, name
