"""PyTorch/XLA's metrics API (torch_xla.debug.metrics) over xlac's process-wide metrics (docs/python.md).

    import xlac.metrics as met
    print(met.short_metrics_report())      # CompileTime, ExecuteTime, CachedCompile, UncachedCompile, Executions
    met.counter_names()                     # ['CachedCompile', 'Collective.all-reduce', 'Executions', ...]
    met.counter_value("Executions")         # 3 (None when the counter was never incremented)
    met.metric_names()                      # ['CompileTime', 'Core0.ArenaBytes', 'ExecuteTime', ...]

The names are those of xlac.metrics_report() (docs/observability.md): "Metric:" entries with TotalSamples,
Accumulator and Percentiles, then "Counter:" entries with a Value, then "xlac-profiler:" hint lines.
"""

from xlac import _xlac

__all__ = [
    "clear_all",
    "counter_names",
    "counter_value",
    "metric_names",
    "metrics_report",
    "short_metrics_report",
]

# What torch_xla's short report shows, in xlac's names: compile and run times, compilations with and without the
# persistent cache, and runs.
_SHORT_COUNTERS = ("CachedCompile", "UncachedCompile", "Executions")
_SHORT_METRICS = ("CompileTime", "ExecuteTime")


def metrics_report():
    """The full report, as xlac.metrics_report() and torch_xla.debug.metrics.metrics_report()."""
    return _xlac.metrics_report()


def _entries(report=None):
    """(kind, name, text) for every "Metric:"/"Counter:" entry of the report, in order, and the other lines."""
    if report is None:
        report = _xlac.metrics_report()
    entries, other = [], []
    for line in report.splitlines(keepends=True):
        for kind in ("Metric", "Counter"):
            prefix = kind + ": "
            if line.startswith(prefix):
                entries.append([kind, line[len(prefix):].rstrip("\n"), line])
                break
        else:
            if line.startswith("  ") and entries:
                entries[-1][2] += line
            elif line.strip():
                other.append(line)
    return entries, other


def short_metrics_report(counter_names=None, metric_names=None):
    """The report's entries for a few names only, as torch_xla's short_metrics_report(counter_names, metric_names).

    Defaults: the metrics CompileTime and ExecuteTime and the counters CachedCompile, UncachedCompile and Executions
    (torch_xla's defaults are its own names: CompileTime, ExecuteTime, ..., CachedCompile, MarkStep). Entries that
    were never recorded are left out; the "xlac-profiler:" hints are not repeated.
    """
    counters = set(_SHORT_COUNTERS if counter_names is None else counter_names)
    metrics = set(_SHORT_METRICS if metric_names is None else metric_names)
    entries, _ = _entries()
    out = [text for kind, name, text in entries if name in (metrics if kind == "Metric" else counters)]
    return "".join(out)


def counter_names():
    """The names of the counters recorded so far (sorted), as torch_xla's counter_names()."""
    entries, _ = _entries()
    return [name for kind, name, _ in entries if kind == "Counter"]


def counter_value(name):
    """The value of counter `name` (an int), or None when it was never incremented, as torch_xla's counter_value()."""
    entries, _ = _entries()
    for kind, entry_name, text in entries:
        if kind == "Counter" and entry_name == name:
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("Value: "):
                    return int(line[len("Value: "):])
    return None


def metric_names():
    """The names of the metrics recorded so far (sorted), as torch_xla's metric_names()."""
    entries, _ = _entries()
    return [name for kind, name, _ in entries if kind == "Metric"]


def clear_all():
    """Forgets every metric and counter (xlac.clear_metrics(); torch_xla's clear_all())."""
    _xlac.clear_metrics()
