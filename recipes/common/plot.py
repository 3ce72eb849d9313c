"""The SVG charts of a training run in the recipes' reports (standard library only): panels of
(minutes, value) curves side by side."""

import math


def svg(panels, width, height):
    """An SVG document of side-by-side panels (each from panel())."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">\n'
            f'<rect width="{width}" height="{height}" fill="white"/>\n' + "".join(panels) +
            "</svg>\n")


def loss_and_perplexity_panels(records, width, height, count):
    """The first two of `count` panels: training loss, and validation perplexity."""
    train = [(r["elapsed_seconds"] / 60, r["loss"]) for r in records if r["kind"] == "train"]
    valid = [(r["elapsed_seconds"] / 60, r["ppl"]) for r in records if r["kind"] == "valid"]
    w = width / count
    return [panel(train, "training loss (label-smoothed, per token)", 0, w, height, "#1f77b4"),
            panel(valid, "validation perplexity (log scale)", w, w, height, "#d62728",
                  log_scale=True)]


def nice_ticks(lo, hi, count=5):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=raw)
    start = math.ceil(lo / step) * step
    ticks = []
    v = start
    while v <= hi + 1e-9 * step:
        ticks.append(round(v, 10))
        v += step
    return ticks


def log_ticks(lo, hi):
    """1, 2, 5 times powers of ten between 10**lo and 10**hi, as (log10 value, label)."""
    ticks = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in (1, 2, 5):
            v = math.log10(m) + e
            if lo <= v <= hi:
                ticks.append((v, f"{m * 10.0 ** e:g}"))
    return ticks


def panel(points, title, x0, w, h, color, log_scale=False):
    """One chart of (minutes, value) points at x0, w wide and h high."""
    left, right, top, bottom = 48, 12, 24, 36
    pw, ph = w - left - right, h - top - bottom
    parts = [f'<text x="{x0 + w / 2:.1f}" y="15" text-anchor="middle" font-size="12">{title}'
             f'</text>\n']
    if not points:
        parts.append(f'<text x="{x0 + w / 2:.1f}" y="{h / 2:.1f}" text-anchor="middle">'
                     'no records</text>\n')
        return "".join(parts)
    if log_scale:
        points = [(x, math.log10(max(y, 1e-12))) for x, y in points]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    xmax = max(xs) if max(xs) > 0 else 1.0
    ylo, yhi = min(ys), max(ys)
    if yhi - ylo < 1e-9:
        ylo, yhi = ylo - 0.5, yhi + 0.5
    pad = 0.05 * (yhi - ylo)
    ylo, yhi = ylo - pad, yhi + pad

    def sx(x):
        return x0 + left + pw * x / xmax

    def sy(y):
        return top + ph * (1 - (y - ylo) / (yhi - ylo))

    parts.append(f'<rect x="{x0 + left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                 'stroke="#888"/>\n')
    yticks = log_ticks(ylo, yhi) if log_scale else [(t, f"{t:g}") for t in nice_ticks(ylo, yhi)]
    if len(yticks) < 2:  # a narrow range: label its ends
        yticks = [(v, f"{10 ** v if log_scale else v:.3g}") for v in (ylo, yhi)]
    for t, label in yticks:
        parts.append(f'<line x1="{x0 + left}" x2="{x0 + left + pw}" y1="{sy(t):.1f}" '
                     f'y2="{sy(t):.1f}" stroke="#eee"/>\n'
                     f'<text x="{x0 + left - 4}" y="{sy(t) + 4:.1f}" text-anchor="end">'
                     f'{label}</text>\n')
    for t in nice_ticks(0, xmax):
        parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 14}" text-anchor="middle">{t:g}'
                     '</text>\n')
    parts.append(f'<text x="{x0 + left + pw / 2:.1f}" y="{h - 6}" text-anchor="middle">'
                 'training time (minutes)</text>\n')
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>\n')
    for x, y in points if len(points) <= 60 else []:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2" fill="{color}"/>\n')
    return "".join(parts)
