"""Prometheus's text format as ``core.presentation.prometheus_text`` writes it, read back by the
official parser (``prometheus_client``): any label value or help text, any value."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from core.presentation.prometheus_text import Family, MetricType, Sample, exposition

label_values = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)


@given(st.lists(st.tuples(label_values, st.floats(allow_nan=False) | st.integers(-(2**60), 2**60)),
                min_size=1, max_size=5, unique_by=lambda pair: pair[0]),
       st.text(st.characters(exclude_categories=("Cs",)), max_size=40))  # fmt: skip
def test_any_label_value_and_help_text_reads_back_through_the_official_parser(
    samples: list[tuple[str, float]], help_text: str
) -> None:
    family = Family("x_things", help_text, MetricType.gauge,
                    tuple(Sample((("account", "1"), ("kind", value)), number) for value, number in samples))
    (parsed,) = text_string_to_metric_families(exposition((family,)))
    assert (parsed.name, parsed.type, parsed.documentation) == ("x_things", "gauge", " ".join(help_text.split()))
    assert [(s.labels, s.value) for s in parsed.samples] == [
        ({"account": "1", "kind": value}, float(number)) for value, number in samples
    ]


def test_a_counter_is_named_for_its_total_and_values_that_are_not_finite_are_written_as_prometheus_reads_them() -> None:
    families = (
        Family("x_answers_total", "answers", MetricType.counter, (Sample((("status", "429"),), 3),)),
        Family("x_odd", "odd", MetricType.gauge, tuple(Sample((("v", str(i)),), value)
                                                      for i, value in enumerate((math.inf, -math.inf, 0.25)))),
    )
    text = exposition(families)
    assert 'x_answers_total{status="429"} 3\n' in text
    assert 'x_odd{v="0"} +Inf\nx_odd{v="1"} -Inf\n' in text
    counter, odd = text_string_to_metric_families(text)
    assert (counter.name, counter.type, counter.samples[0].name) == ("x_answers", "counter", "x_answers_total")
    assert [sample.value for sample in odd.samples] == [math.inf, -math.inf, 0.25]
    nan = exposition((Family("x_nan", "n", MetricType.gauge, (Sample((), math.nan),)),))
    assert nan.endswith("x_nan NaN\n")


@pytest.mark.parametrize("name", ["1x", "x-y", "x y", ""])
def test_a_name_outside_prometheuss_alphabet_is_refused_never_written(name: str) -> None:
    with pytest.raises(ValueError, match="not a metric name"):
        exposition((Family(name, "h", MetricType.gauge, ()),))
    with pytest.raises(ValueError, match="not a label name"):
        exposition((Family("x", "h", MetricType.gauge, (Sample(((name or "__x", "v"),), 1),)),))
