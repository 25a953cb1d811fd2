"""Intervals from paired repetitions, for the bench scripts (imported by their Python parts).

A bench runs both sides of a comparison once per repetition, next to each other and in rotated
order, so each repetition is one block: the machine's drift between repetitions cancels in the
block's ratio (or difference). As `casslab experiment` does for blocks, the interval comes from
the spread of those per-block figures: a t interval on the logarithm of the ratios (a ratio is
the geometric mean of the blocks' ratios) or on the differences. With a target, it also says
whether the interval shows the figure within it, shows it beyond, or cannot tell yet.
"""

import math
import statistics

# two-sided 95% quantiles of Student's t by degrees of freedom
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t95(df):
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    return _T95[df - 1] if df <= len(_T95) else 1.96 + 2.4 / df


def _interval(values):
    """Mean and 95% t interval of `values` (at least two); the interval is infinite for one."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, -math.inf, math.inf
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return m, m - half, m + half


def ratio(pairs):
    """Geometric mean of a/b over the (a, b) pairs, with its 95% interval: (ratio, low, high)."""
    logs = [math.log(a / b) for a, b in pairs if a > 0 and b > 0]
    if not logs:
        return math.nan, math.nan, math.nan
    m, lo, hi = _interval(logs)
    return math.exp(m), math.exp(lo), math.exp(hi)


def difference(pairs):
    """Mean of a − b over the (a, b) pairs, with its 95% interval: (difference, low, high)."""
    if not pairs:
        return math.nan, math.nan, math.nan
    return _interval([a - b for a, b in pairs])


def verdict(low, high, at_most=None, at_least=None):
    """What the interval [low, high] shows against a target `≤ at_most` or `≥ at_least`."""
    if at_most is not None:
        if high <= at_most:
            return f"shown ≤ {at_most:g}"
        if low > at_most:
            return f"shown > {at_most:g} (target missed)"
        return f"not resolved against ≤ {at_most:g}: more repetitions"
    if at_least is not None:
        if low >= at_least:
            return f"shown ≥ {at_least:g}"
        if high < at_least:
            return f"shown < {at_least:g} (target missed)"
        return f"not resolved against ≥ {at_least:g}: more repetitions"
    return ""


def ratio_line(name, pairs, at_most=None, at_least=None):
    """One printed line: the ratio, its interval, the blocks and the verdict against a target."""
    r, lo, hi = ratio(pairs)
    say = verdict(lo, hi, at_most, at_least)
    return f"  {name:<44} {r:7.3f}x  95% [{lo:.3f}, {hi:.3f}]  from {len(pairs)} paired repetitions" + (f"  {say}" if say else "")


def difference_line(name, pairs, unit, at_most=None):
    """One printed line: the mean difference, its interval and the verdict against a target."""
    d, lo, hi = difference(pairs)
    say = verdict(lo, hi, at_most)
    return f"  {name:<44} {d:+8.3f} {unit}  95% [{lo:+.3f}, {hi:+.3f}]  from {len(pairs)} paired repetitions" + (f"  {say}" if say else "")


def pairs_by_rep(rows, rep, value, side, a="on", b="off"):
    """(a's value, b's value) of each repetition both ran: rows are lists of fields, `rep` and
    `value` column indexes (values may hold thousands separators), `side(row)` names a row's side
    (a, b, or anything else for a row of another measurement)."""
    of = lambda want: {r[rep]: float(r[value].replace(",", "")) for r in rows if side(r) == want}
    on, off = of(a), of(b)
    return [(on[k], off[k]) for k in on if k in off]


if __name__ == "__main__":
    # a check of the arithmetic: known pairs give the interval computed by hand
    r, lo, hi = ratio([(2.0, 1.0), (2.0, 1.0), (2.0, 1.0)])
    assert abs(r - 2.0) < 1e-12 and abs(lo - 2.0) < 1e-12 and abs(hi - 2.0) < 1e-12
    d, lo, hi = difference([(3.0, 1.0), (5.0, 1.0)])
    assert d == 3.0 and abs(lo - (3.0 - 12.706)) < 1e-9 and abs(hi - (3.0 + 12.706)) < 1e-9
    assert verdict(0.8, 0.88, at_most=0.9).startswith("shown ≤") and verdict(0.85, 0.95, at_most=0.9).startswith("not resolved")
    assert verdict(0.95, 1.1, at_most=0.9).startswith("shown >") and verdict(1.01, 1.2, at_least=1.0).startswith("shown ≥")
    rows = [["on", "1", "2.0"], ["off", "1", "1,000"], ["on", "2", "3.0"], ["off", "3", "1.0"]]
    assert pairs_by_rep(rows, 1, 2, lambda r: r[0]) == [(2.0, 1000.0)]
    print("paired.py: ok")
