/* casslab charts: draws every line chart of a casslab HTML page with uPlot (vendored beside
 * this file, embedded in the page: nothing is fetched).
 *
 * Each chart is a figure element of class "chart" whose data-chart attribute is its ID, holding a
 * div of class "plot-host" and a JSON script element of class "chart-data" written by
 * crates/casslab-core/src/report/uplot_chart.rs:
 *   { title,
 *     x: { kind: "time" | "linear" | "percentile", label, from, to,
 *          t0_ms (time: the wall clock of x = 0 in Unix ms, or null for seconds since the start),
 *          max_one_in (percentile: the "1 in N" the axis reaches) },
 *     y: { label, log },
 *     series: [{ name, color, dashed, bold, points: [[x, y or null (a gap)], ...] }],
 *     marks: [{ kind: "warmup" | "event" | "suspect" | "knee", from, to, label }] }
 * Series may have points at different x: they are aligned here on the union of their x
 * (a series without a point at an x is drawn across it; a null y breaks its line).
 *
 * What a reader can do: hover (the legend shows the x and every series' value there), drag
 * across the plot to zoom into an interval, double-click to zoom back out, click a legend
 * entry to hide or show its series.
 *
 * Event for other sections of the page (e.g. flame graphs per time slice): a time chart
 * (x.kind "time") announces the window a reader picked on it:
 *   document.addEventListener('casslab:window', e => e.detail)
 *   detail = { chart: ID, from_s, to_s }   on a selection or a zoom, in seconds since the run
 *                                          started (the chart's x, also when it shows the clock)
 *   detail = { chart: ID, from_s: null, to_s: null }   when the zoom is reset (double-click)
 * Every drawn chart is in `window.casslabCharts[ID]` (the uPlot instance), for scripts and
 * tests.
 */
(function () {
  'use strict';
  var charts = (window.casslabCharts = window.casslabCharts || {});
  var HEIGHT = 300;
  // a chart alone in its row (the latency-versus-throughput curve) is taller
  var WIDE_HEIGHT = 380;

  // Short numbers, as the terminal report writes them: 0.05, 2.5, 150, 12.5k, 1.5M.
  function fmtNum(v) {
    if (v == null || !isFinite(v)) return '--';
    var a = Math.abs(v);
    var trim = function (s) { return s.indexOf('.') >= 0 ? s.replace(/0+$/, '').replace(/\.$/, '') : s; };
    if (a >= 1e6) return trim((v / 1e6).toFixed(2)) + 'M';
    if (a >= 1e4) return trim((v / 1e3).toFixed(1)) + 'k';
    if (a >= 100 || a === 0) return v.toFixed(0);
    if (a >= 1) return trim(v.toFixed(2));
    return trim(v.toFixed(4));
  }
  // Tick labels; a log axis leaves some of its ticks (null) unlabelled.
  function tickLabels(u, splits) { return splits.map(function (v) { return v == null ? '' : fmtNum(v); }); }
  function pad2(n) { return (n < 10 ? '0' : '') + n; }
  // "14:03:12" (or "14:03:12.5" with tenths) in UTC, `s` seconds after `t0Ms`.
  function clock(t0Ms, s, tenths) {
    var ms = Math.round(t0Ms + s * 1000);
    var day = ((ms % 86400000) + 86400000) % 86400000;
    var t = pad2(Math.floor(day / 3600000)) + ':' + pad2(Math.floor(day / 60000) % 60) + ':' + pad2(Math.floor(day / 1000) % 60);
    return tenths ? t + '.' + Math.floor((day % 1000) / 100) : t;
  }
  // A "1 in N" value as a percentile: 10 -> 90%, 1000 -> 99.9%.
  function percentile(oneIn) {
    if (!(oneIn > 1)) return '0%';
    var p = 100 * (1 - 1 / oneIn);
    var digits = Math.min(5, Math.max(0, Math.floor(Math.log10(oneIn)) - 2));
    return p.toFixed(digits) + '%';
  }
  function decadeLabel(d) {
    if (d <= 0) return '0%';
    if (d === 1) return '90%';
    return ('99.' + '9'.repeat(d - 2) + '%').replace('.%', '%');
  }

  // x values (sorted, with the axis' ends) and one y array per series on them.
  function align(cfg) {
    var set = {};
    var xs = [];
    var add = function (x) { if (isFinite(x) && !set[x]) { set[x] = 1; xs.push(x); } };
    cfg.series.forEach(function (s) { s.points.forEach(function (p) { add(p[0]); }); });
    if (cfg.x.from != null) add(cfg.x.from);
    if (cfg.x.to != null) add(cfg.x.to);
    xs.sort(function (a, b) { return a - b; });
    var at = {};
    xs.forEach(function (x, i) { at[x] = i; });
    var data = [xs];
    cfg.series.forEach(function (s) {
      var ys = new Array(xs.length); // undefined: no point here, drawn across
      s.points.forEach(function (p) {
        var y = p[1];
        if (y == null || !isFinite(y) || (cfg.y.log && y <= 0)) y = null; // a gap
        ys[at[p[0]]] = y;
      });
      data.push(ys);
    });
    return data;
  }

  function xValue(cfg) {
    if (cfg.x.kind === 'percentile') return function (u, v) { return v == null ? '--' : percentile(v); };
    if (cfg.x.kind === 'time' && cfg.x.t0_ms != null) return function (u, v) { return v == null ? '--' : clock(cfg.x.t0_ms, v, Math.abs(v % 1) > 1e-6); };
    if (cfg.x.kind === 'time') return function (u, v) { return v == null ? '--' : v.toFixed(1) + ' s'; };
    return function (u, v) { return fmtNum(v); };
  }

  var CLOCK_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400];

  function xAxis(cfg) {
    var ax = { label: cfg.x.label, stroke: '#444c56', grid: { stroke: '#e6e9ed', width: 1 }, ticks: { stroke: '#8c959f', width: 1, size: 4 } };
    if (cfg.x.kind === 'percentile') {
      ax.splits = function (u, i, min, max) {
        var out = [];
        for (var d = Math.ceil(Math.log10(Math.max(min, 1)) - 1e-9); Math.pow(10, d) <= max * 1.0001; d++) out.push(Math.pow(10, d));
        return out;
      };
      ax.values = function (u, splits) { return splits.map(function (v) { return decadeLabel(Math.round(Math.log10(v))); }); };
    } else if (cfg.x.kind === 'time' && cfg.x.t0_ms != null) {
      var t0 = cfg.x.t0_ms / 1000;
      ax.incrs = CLOCK_INCRS;
      // ticks on round wall-clock times, not on round seconds since the start
      ax.splits = function (u, i, min, max, incr) {
        var out = [];
        for (var v = Math.ceil((min + t0) / incr - 1e-9) * incr - t0; v <= max + 1e-9; v += incr) out.push(v);
        return out;
      };
      ax.values = function (u, splits) { return splits.map(function (v) { return clock(cfg.x.t0_ms, v, false); }); };
      ax.space = 70;
    } else {
      ax.values = tickLabels;
    }
    return ax;
  }

  function yScale(cfg) {
    if (cfg.y.log) return { distr: 3 };
    return {
      range: function (u, min, max) {
        var hi = max != null && max > 0 ? max : 1;
        return uPlot.rangeNum(Math.min(0, min == null ? 0 : min), hi, 0.05, true);
      },
    };
  }

  function xScale(cfg) {
    // exactly the range asked for (uPlot would widen a log axis to whole decades, so a zoom
    // would not stay where the reader dragged)
    if (cfg.x.kind === 'percentile') return { time: false, distr: 3, range: function (u, min, max) { return [min, max]; } };
    return { time: false };
  }

  var MARK_STYLE = {
    warmup: { fill: 'rgba(200,190,230,0.45)', text: '#6a5a8c' },
    event: { fill: 'rgba(225,87,89,0.15)', line: '#e15759', text: '#b3363a' },
    suspect: { fill: 'rgba(242,142,43,0.16)', text: '#9a5b00' },
    knee: { line: '#1f2328', text: '#1f2328', dash: [5, 4] },
  };

  // Phase bands, events, suspect intervals and the knee: shaded behind the series, their lines
  // and labels on top.
  function marksPlugin(cfg) {
    var marks = cfg.marks || [];
    function spans(u) {
      var pr = uPlot.pxRatio, b = u.bbox;
      return marks.map(function (m) {
        var x0 = Math.max(b.left, Math.min(b.left + b.width, u.valToPos(m.from, 'x', true)));
        var x1 = Math.max(b.left, Math.min(b.left + b.width, u.valToPos(m.to, 'x', true)));
        if (m.kind === 'event') x1 = Math.max(x1, x0 + 2 * pr); // an instant event still shows
        return { m: m, x0: x0, x1: x1, style: MARK_STYLE[m.kind] || MARK_STYLE.event, visible: u.valToPos(m.to, 'x', true) >= b.left && u.valToPos(m.from, 'x', true) <= b.left + b.width };
      }).filter(function (s) { return s.visible; });
    }
    return {
      hooks: {
        drawClear: function (u) {
          var ctx = u.ctx, b = u.bbox;
          ctx.save();
          spans(u).forEach(function (s) {
            if (s.style.fill && s.x1 > s.x0) {
              ctx.fillStyle = s.style.fill;
              ctx.fillRect(s.x0, b.top, s.x1 - s.x0, b.height);
            }
          });
          ctx.restore();
        },
        draw: function (u) {
          var ctx = u.ctx, b = u.bbox, pr = uPlot.pxRatio, n = 0;
          ctx.save();
          ctx.font = Math.round(11 * pr) + 'px system-ui, sans-serif';
          ctx.textAlign = 'left';
          ctx.textBaseline = 'top';
          spans(u).forEach(function (s) {
            if (s.style.line) {
              // on whole pixels, two wide: a crisp line wherever the mark falls
              var lx = Math.round(s.x0);
              ctx.strokeStyle = s.style.line;
              ctx.lineWidth = 2 * pr;
              ctx.setLineDash((s.style.dash || []).map(function (d) { return d * pr; }));
              ctx.beginPath();
              ctx.moveTo(lx, b.top);
              ctx.lineTo(lx, b.top + b.height);
              ctx.stroke();
            }
            ctx.fillStyle = s.style.text;
            var w = ctx.measureText(s.m.label).width;
            var x = Math.min(s.x0 + 4 * pr, b.left + b.width - w - 2 * pr);
            ctx.fillText(s.m.label, Math.max(b.left + 2 * pr, x), b.top + (4 + 13 * (n++ % 4)) * pr);
          });
          ctx.restore();
        },
      },
    };
  }

  // The `casslab:window` event of a time chart (see the header).
  function windowPlugin(id, cfg, full) {
    if (cfg.x.kind !== 'time') return { hooks: {} };
    var announce = function (from, to) {
      document.dispatchEvent(new CustomEvent('casslab:window', { detail: { chart: id, from_s: from, to_s: to } }));
    };
    return {
      hooks: {
        setSelect: function (u) {
          if (u.select.width > 0) announce(u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x'));
        },
        setScale: function (u, key) {
          if (key !== 'x') return;
          var sx = u.scales.x;
          var eps = (full[1] - full[0]) * 1e-9;
          if (sx.min <= full[0] + eps && sx.max >= full[1] - eps) announce(null, null);
          else announce(sx.min, sx.max);
        },
      },
    };
  }

  function build(fig) {
    var id = fig.getAttribute('data-chart');
    var host = fig.querySelector('.plot-host');
    var json = fig.querySelector('script.chart-data');
    if (!host || !json || charts[id]) return;
    var cfg = JSON.parse(json.textContent);
    var height = fig.closest('.charts.wide') ? WIDE_HEIGHT : HEIGHT;
    var data = align(cfg);
    var xs = data[0];
    var full = [xs[0], xs[xs.length - 1]];
    var series = [{ label: cfg.x.kind === 'percentile' ? 'percentile' : cfg.x.kind === 'time' ? 'time' : cfg.x.label, value: xValue(cfg) }];
    cfg.series.forEach(function (s) {
      series.push({
        label: s.name,
        stroke: s.color,
        width: s.bold ? 2.6 : 1.8,
        dash: s.dashed ? [6, 4] : undefined,
        spanGaps: false,
        value: function (u, v) { return fmtNum(v); },
        points: { size: 5 },
      });
    });
    var opts = {
      width: Math.max(300, host.clientWidth || 560),
      height: height,
      series: series,
      scales: { x: xScale(cfg), y: yScale(cfg) },
      axes: [xAxis(cfg), { label: cfg.y.label, stroke: '#444c56', size: 60, grid: { stroke: '#e6e9ed', width: 1 }, ticks: { stroke: '#8c959f', width: 1, size: 4 }, values: tickLabels }],
      cursor: { drag: { x: true, y: false, setScale: true }, points: { size: 7 } },
      legend: { live: true },
      plugins: [marksPlugin(cfg), windowPlugin(id, cfg, full)],
    };
    var u = new uPlot(opts, data, host);
    charts[id] = u;
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        var w = Math.max(300, host.clientWidth);
        if (Math.abs(w - u.width) > 1) u.setSize({ width: w, height: height });
      }).observe(host);
    }
  }

  document.querySelectorAll('figure.chart[data-chart]').forEach(build);
})();
