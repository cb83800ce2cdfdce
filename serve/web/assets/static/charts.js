// charts.js draws every figure.q-chart of a page (see package assets' doc
// for the markup) with the vendored Observable Plot, as the page format's
// tables "Kinds" and "Roles" say: a line over time with its bands and marks,
// bars grouped by color, stacked lines, shares, histograms, points and
// bubbles, heat maps, ranges, funnels, a calendar, a timeline, a table,
// figures and text.
//
// It runs under the pages' strict Content-Security-Policy: no eval, no
// inline script or style. Plot writes a <style> element into what it draws;
// charts.js removes it before the drawing joins the page (its rules are in
// charts.css) and styles only through the CSSOM. Data is shown with
// textContent, never as HTML.
//
// A block's data stays in its <details> table, which the server sends open
// (the page works without JavaScript) and charts.js folds under the
// drawing; a block charts.js cannot draw says so in one line, shows that
// table, and the error goes to the console. Each figure drawn gets
// data-drawn="true" (or "failed"), and redraws when its width changes.
// window.quireCharts.draw(root) draws the figures a script added to root;
// figures added to the page are drawn on their own too.
(() => {
  "use strict";
  const Plot = window.Plot;
  const d3 = window.d3;

  // The table of chart kinds (page-format.md, "Kinds"), as the server
  // checks a block against it: for each kind, the shapes it reads, the
  // roles it needs, in order, and those it may take. The page writes it,
  // from the server's own table, in <script type="application/json"
  // id="q-chart-kinds">; charts.js keeps no copy of it.
  function readKinds() {
    const el = document.getElementById("q-chart-kinds");
    if (!el) return null;
    try {
      return JSON.parse(el.textContent);
    } catch (err) {
      console.error("quire: the page's table of chart kinds is not JSON:", err);
      return null;
    }
  }
  let kindTable;

  // rolesOf is what a kind reads of a table's columns: the roles it needs
  // and those it may take.
  function rolesOf(kind) {
    if (kindTable === undefined) kindTable = readKinds();
    if (!kindTable) throw new Error("the page gives no table of chart kinds");
    const k = kindTable[kind];
    if (!k) throw new Error(`there is no chart of the kind ${kind}`);
    return { needs: k.needs || [], optional: k.optional || [] };
  }

  const PLOT_CLASS = "q-plot";
  const ROW_HEIGHT = 26; // a band's height in the charts drawn across (range, funnel, timeline)

  // ---- time: a series' at, and a role's time --------------------------------

  const PERIOD_FORM = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-W(\d{2})|-Q([1-4]))?$/;

  // periodOf tells the grain of an at written as a period ("" for an RFC 3339
  // time, null for text that is no time).
  function periodOf(s) {
    const m = PERIOD_FORM.exec(s);
    if (!m) return Number.isNaN(Date.parse(s)) ? null : "";
    if (m[3] !== undefined) return "day";
    if (m[2] !== undefined) return "month";
    if (m[4] !== undefined) return "week";
    if (m[5] !== undefined) return "quarter";
    return "year";
  }

  // isoWeekStart is the Monday that begins ISO week w of year y, in UTC.
  function isoWeekStart(y, w) {
    const jan4 = new Date(Date.UTC(y, 0, 4));
    const monday = new Date(jan4.getTime() - ((jan4.getUTCDay() + 6) % 7) * 86400000);
    return new Date(monday.getTime() + (w - 1) * 7 * 86400000);
  }

  // timeOf is when a time begins: a period's first instant, in UTC, or the
  // RFC 3339 time itself; null for text that is no time.
  function timeOf(s) {
    if (typeof s !== "string") return null;
    const m = PERIOD_FORM.exec(s);
    if (!m) {
      const t = Date.parse(s);
      return Number.isNaN(t) ? null : new Date(t);
    }
    const y = +m[1];
    if (m[3] !== undefined) return new Date(Date.UTC(y, +m[2] - 1, +m[3]));
    if (m[2] !== undefined) return new Date(Date.UTC(y, +m[2] - 1, 1));
    if (m[4] !== undefined) return isoWeekStart(y, +m[4]);
    if (m[5] !== undefined) return new Date(Date.UTC(y, (+m[5] - 1) * 3, 1));
    return new Date(Date.UTC(y, 0, 1));
  }

  const INTERVAL = {
    day: () => d3.utcDay,
    week: () => d3.utcMonday,
    month: () => d3.utcMonth,
    quarter: () => d3.utcMonth.every(3),
    year: () => d3.utcYear,
  };

  // endOf is when a time ends: the start of the period after it, or the
  // RFC 3339 time itself (a timeline's bar ends there).
  function endOf(s) {
    const t = timeOf(s);
    const p = periodOf(s);
    return t && p ? INTERVAL[p]().offset(t, 1) : t;
  }

  // A period written as the page format writes it, for axes and titles.
  const fmtDay = () => d3.utcFormat("%b %-d, %Y");
  function periodLabel(t, period) {
    switch (period) {
      case "day":
        return fmtDay()(t);
      case "week":
        return d3.utcFormat("%G-W%V")(t);
      case "month":
        return d3.utcFormat("%b %Y")(t);
      case "quarter":
        return `${t.getUTCFullYear()}-Q${Math.floor(t.getUTCMonth() / 3) + 1}`;
      case "year":
        return String(t.getUTCFullYear());
      default:
        return d3.utcFormat("%b %-d, %Y %H:%M")(t);
    }
  }

  // A time axis over the periods of a series: ticks on periods, labelled as
  // the period is written, at most one for each 80 pixels.
  function timeAxis(times, period, width) {
    if (!period || times.length === 0) return { type: "utc" };
    const iv = INTERVAL[period]();
    const lo = times[0];
    const hi = times[times.length - 1];
    let ticks = iv.range(lo, iv.offset(hi, 1));
    const most = Math.max(2, Math.floor(width / 80));
    if (ticks.length > most) {
      const step = Math.ceil(ticks.length / most);
      ticks = ticks.filter((_, i) => i % step === 0);
    }
    let format;
    if (period === "day") {
      format = (t, i) =>
        i === 0 || t.getUTCMonth() === 0 && t.getUTCDate() <= (ticks.length > 1 ? 7 : 31)
          ? d3.utcFormat("%b %-d, %Y")(t)
          : d3.utcFormat("%b %-d")(t);
    } else {
      format = (t) => periodLabel(t, period);
    }
    return { type: "utc", ticks, tickFormat: format };
  }

  // ---- numbers ---------------------------------------------------------------

  // A number is written to its data: with the decimals it has (242.75,
  // 0.125, 3.5; a whole number with none), up to MOST_DECIMALS. One with
  // more is a sum's rounding error or a division left unrounded
  // (4.800000000000001, 12.333333333333334), shown to two decimals, or to
  // two significant digits where that shows more (0.0012).
  const MOST_DECIMALS = 4;
  const UNROUNDED = { maximumFractionDigits: 2, maximumSignificantDigits: 2, roundingPriority: "morePrecision" };

  // decimalsOf is how many decimals v is written with, or null for more
  // than MOST_DECIMALS.
  function decimalsOf(v) {
    if (Number.isInteger(v)) return 0;
    const m = /(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(v)));
    const d = (m[1] ? m[1].length : 0) - (m[2] ? +m[2] : 0);
    return d <= MOST_DECIMALS ? Math.max(0, d) : null;
  }

  // formatOf is the browser's number format of opts, made once (a chart
  // writes a title for each of its points).
  const formats = new Map();
  function formatOf(opts) {
    const key = JSON.stringify(opts);
    if (!formats.has(key)) formats.set(key, new Intl.NumberFormat(undefined, opts));
    return formats.get(key);
  }

  function num(v) {
    if (typeof v !== "number") return String(v);
    const d = decimalsOf(v);
    return formatOf(d === null ? UNROUNDED : { maximumFractionDigits: d }).format(v);
  }

  // money writes an amount in a currency: a whole amount without cents,
  // any other with at least the currency's minor digits ($12.50) and its
  // own decimals beyond them ($0.125). It throws for a code the browser
  // knows no currency of.
  function money(v, currency) {
    const minor = formatOf({ style: "currency", currency }).resolvedOptions().maximumFractionDigits;
    const d = decimalsOf(v);
    const digits = d === 0 ? 0 : d === null ? minor : Math.max(minor, d);
    return formatOf({ style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(v);
  }

  // A part of a total, as a percent.
  const percent = (part, total) => `${formatOf({ maximumFractionDigits: 2 }).format((part / total) * 100)}%`;

  // A value with its unit: a currency written as its code (USD) as money,
  // any other unit after the number, never on a line apart from it.
  function withUnit(v, unit) {
    if (typeof v !== "number") return String(v);
    if (unit && /^[A-Z]{3}$/.test(unit)) {
      try {
        return money(v, unit);
      } catch {
        // not a currency this browser knows: the number and the code
      }
    }
    return unit ? `${num(v)}\u00a0${unit}` : num(v);
  }

  // wholeTicks is the tick options of an axis over values. Over whole
  // numbers alone (counts) it ticks at whole numbers only, at most one for
  // each spacing pixels of the axis' length, as Plot would, and writes them
  // as whole numbers; over any other values it is empty: Plot's own ticks.
  // (Plot takes an object with a range(lo, hi) as an interval to tick at;
  // this one answers d3's ticks over the domain at a step of at least 1.)
  function wholeTicks(values, length, spacing) {
    const nums = values.filter((v) => typeof v === "number");
    if (!nums.length || !nums.every(Number.isInteger)) return {};
    const most = Math.max(1, Math.floor(length / spacing));
    const ticks = {
      floor: (x) => x,
      offset: (x) => x,
      range: (lo, hi) => d3.ticks(lo, hi, Math.max(1, Math.min(most, Math.floor(hi - lo)))).filter(Number.isInteger),
    };
    return { ticks, tickFormat: num };
  }

  function clip(s, n) {
    s = String(s);
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }
  // textWidth guesses the pixels a label takes at Plot's 10 px font.
  function textWidth(labels) {
    let most = 0;
    for (const l of labels) most = Math.max(most, String(l).length);
    return most * 6.2;
  }

  // ---- a table's columns, by role ---------------------------------------------

  function cellText(c) {
    return c === null || c === undefined ? "" : String(c);
  }

  // columnsOf gives each role of the kind its column's index, as the page
  // format says: a written role names its column; a needed role left out
  // takes the next column no written role names, in order.
  function columnsOf(kind, table, written) {
    const spec = rolesOf(kind);
    const names = table.columns.map((c) => c.name);
    const at = {};
    const taken = new Set();
    for (const [role, col] of Object.entries(written || {})) {
      const i = names.indexOf(col);
      if (i < 0) throw new Error(`the role ${role} names the column "${col}", which the table does not have`);
      at[role] = i;
      taken.add(i);
    }
    let next = 0;
    for (const need of spec.needs) {
      if (need in at) continue;
      while (next < names.length && taken.has(next)) next++;
      if (next >= names.length) throw new Error(`a ${kind} chart needs a column for ${need}`);
      at[need] = next;
      taken.add(next);
    }
    return at;
  }

  // rowsOf reads a table's rows as records of their roles, passing over the
  // rows whose cell is null in a role the kind needs.
  function rowsOf(kind, table, written) {
    const spec = rolesOf(kind);
    const at = columnsOf(kind, table, written);
    const rows = [];
    table.rows.forEach((cells, i) => {
      if (spec.needs.some((r) => cells[at[r]] === null || cells[at[r]] === undefined)) return;
      const row = { row: i + 1 };
      for (const r of [...spec.needs, ...spec.optional]) if (r in at) row[r] = cells[at[r]];
      rows.push(row);
    });
    const col = (role) => (role in at ? table.columns[at[role]] : null);
    return { rows, col, has: (role) => role in at };
  }

  // A column's label on an axis: its name, with its unit.
  function colLabel(c) {
    return c ? (c.unit ? `${c.name} (${c.unit})` : c.name) : null;
  }

  // xScaleOf tells how an x role's cells lie across: numbers on a linear
  // scale, times on a time scale, anything else as categories in the order
  // they come.
  function xKindOf(values) {
    if (values.every((v) => typeof v === "number")) return "number";
    if (values.every((v) => typeof v === "string" && periodOf(v) !== null)) return "time";
    return "category";
  }

  // ---- legends ------------------------------------------------------------

  // legendOf writes a legend of swatches: one entry for each name, in the
  // color the chart gives it.
  function legendOf(entries) {
    const ul = document.createElement("ul");
    ul.className = "q-legend";
    for (const e of entries) {
      const li = document.createElement("li");
      li.className = "q-legend-item";
      const sw = document.createElement("span");
      sw.className = "q-swatch";
      if (e.dashed) sw.classList.add("q-swatch-dashed");
      sw.style.backgroundColor = e.color;
      sw.setAttribute("aria-hidden", "true");
      const label = document.createElement("span");
      label.textContent = e.label;
      li.append(sw, label);
      ul.append(li);
    }
    return ul;
  }

  function colorLegend(plot, labelOf) {
    const s = plot.scale("color");
    if (!s) return null;
    return legendOf(s.domain.map((d) => ({ label: labelOf ? labelOf(d) : String(d), color: s.apply(d) })));
  }

  // rampLegend is the legend of a continuous color: its label, its lowest
  // value, the ramp and its highest. (Plot's own ramp is an image of a
  // data: URL, which the pages' img-src refuses; a CSS gradient is not.)
  function rampLegend(plot, label) {
    const s = plot.scale("color");
    if (!s) return null;
    const [lo, hi] = [s.domain[0], s.domain[s.domain.length - 1]];
    const stops = d3.range(0, 1.0001, 0.125).map((f) => s.apply(lo + (hi - lo) * f));
    const div = document.createElement("div");
    div.className = "q-legend q-legend-ramp";
    const name = document.createElement("span");
    name.className = "q-ramp-label";
    name.textContent = label || "";
    const low = document.createElement("span");
    low.textContent = num(lo);
    const bar = document.createElement("span");
    bar.className = "q-ramp-bar";
    bar.setAttribute("aria-hidden", "true");
    bar.style.backgroundImage = `linear-gradient(to right, ${stops.join(", ")})`;
    const high = document.createElement("span");
    high.textContent = num(hi);
    div.append(name, low, bar, high);
    return div;
  }

  // withoutStyles takes out the <style> elements Plot writes, which the
  // page's Content-Security-Policy would refuse (charts.css has their rules).
  function withoutStyles(node) {
    if (node.tagName && node.tagName.toLowerCase() === "style") return node;
    for (const s of node.querySelectorAll("style")) s.remove();
    return node;
  }

  // ---- the kinds --------------------------------------------------------------

  const base = (width, height) => ({
    width,
    height,
    className: PLOT_CLASS,
    style: { overflow: "visible" },
  });

  // consecutive tells whether b is the period right after a.
  function consecutive(a, b, period) {
    if (!period) return true;
    return INTERVAL[period]().offset(a, 1).getTime() === b.getTime();
  }

  // seriesPoints reads a series' points, each with its line, its time and
  // the run of consecutive periods it belongs to: a line joins only points
  // in consecutive periods.
  function seriesPoints(s) {
    const period = s.period || null;
    const out = [];
    for (const line of s.lines) {
      let run = 0;
      let prev = null;
      for (const p of line.points) {
        const t = timeOf(p.at);
        if (t === null) continue;
        if (prev && !consecutive(prev, t, period)) run++;
        prev = t;
        out.push({ line: line.name, at: p.at, t, value: p.value, low: p.low, high: p.high, z: `${line.name}\u0000${run}` });
      }
    }
    return out;
  }

  function seriesTimes(points) {
    const seen = new Map();
    for (const p of points) seen.set(p.t.getTime(), p.t);
    return [...seen.values()].sort((a, b) => a - b);
  }

  function yLabelOf(s) {
    if (s.lines.length === 1) return s.unit ? `${s.lines[0].name} (${s.unit})` : s.lines[0].name;
    return s.unit || null;
  }

  function pointTitle(s) {
    return (d) => `${d.line}\n${periodLabel(d.t, s.period)}: ${withUnit(d.value, s.unit)}` +
      (d.low !== undefined || d.high !== undefined
        ? `\n${d.low !== undefined ? withUnit(d.low, s.unit) : "…"} to ${d.high !== undefined ? withUnit(d.high, s.unit) : "…"}`
        : "");
  }

  const KINDS = {};

  // line: each line over time, its low and high as a band, its marks as
  // levels; after origin, the points ahead dashed.
  KINDS.line = (s, roles, width) => {
    const pts = seriesPoints(s);
    const names = s.lines.map((l) => l.name);
    const origin = s.origin ? timeOf(s.origin) : null;
    const observed = origin ? pts.filter((p) => p.t <= origin) : pts;
    const ahead = origin ? pts.filter((p) => p.t >= origin) : [];
    const banded = pts.filter((p) => p.low !== undefined && p.high !== undefined);
    // One line takes the page's accent; several, Plot's categorical colors.
    const color = names.length === 1 ? { domain: names, range: ["var(--q-accent, #4269d0)"] } : { domain: names };
    const levels = s.marks || [];
    const ys = pts.flatMap((p) => [p.value, p.low, p.high]).concat(levels.map((m) => m.value)).filter((v) => typeof v === "number");
    const yTicks = wholeTicks(ys, 260, 35);
    const marks = [
      Plot.gridY({ strokeOpacity: 0.12, ticks: yTicks.ticks }),
      Plot.areaY(banded, { x: "t", y1: "low", y2: "high", z: "z", fill: "line", fillOpacity: 0.18, curve: "linear" }),
      Plot.lineY(observed, { x: "t", y: "value", z: "z", stroke: "line", strokeWidth: 2 }),
    ];
    if (ahead.length) {
      marks.push(Plot.lineY(ahead, { x: "t", y: "value", z: "z", stroke: "line", strokeWidth: 2, strokeDasharray: "5 4" }));
      marks.push(Plot.ruleX([origin], { strokeOpacity: 0.4, strokeDasharray: "2 3" }));
      marks.push(Plot.text([origin], { x: (d) => d, frameAnchor: "top", dy: -2, dx: 4, textAnchor: "start", text: () => "ahead", fillOpacity: 0.7 }));
    }
    // A point is a dot where the line is short enough to see each, and
    // always where it stands alone.
    const alone = new Map();
    for (const p of pts) alone.set(p.z, (alone.get(p.z) || 0) + 1);
    const dots = pts.length <= Math.max(60, width / 6) ? pts : pts.filter((p) => alone.get(p.z) === 1);
    marks.push(Plot.dot(dots, { x: "t", y: "value", fill: "line", r: 2.5, title: pointTitle(s) }));
    if (levels.length) {
      marks.push(Plot.ruleY(levels, { y: "value", strokeDasharray: "4 3", strokeOpacity: 0.6 }));
      marks.push(Plot.text(levels, { y: "value", text: (m) => `${m.label}: ${withUnit(m.value, s.unit)}`, frameAnchor: "right", textAnchor: "end", dy: -6, fillOpacity: 0.85 }));
    }
    const plot = Plot.plot({
      ...base(width, 260),
      marginLeft: Math.max(40, textWidth(ys.map(num)) + 14),
      marginTop: origin ? 22 : 20,
      marginRight: 32, // room for half the last period's label
      x: { ...timeAxis(seriesTimes(pts), s.period, width), label: null },
      y: { label: yLabelOf(s), ...yTicks, nice: true, zero: ys.every((v) => v >= 0) && Math.min(...ys) < Math.max(...ys) * 0.5 },
      color,
      marks,
    });
    const legend = names.length > 1 ? colorLegend(plot) : null;
    return { plot, legend };
  };

  // stacked: the lines stacked over time, so that the top is their total;
  // bars at one time alone, since an area needs two.
  KINDS.stacked = (s, roles, width) => {
    const pts = seriesPoints(s);
    const times = seriesTimes(pts);
    const names = s.lines.map((l) => l.name);
    const title = pointTitle(s);
    let marks;
    let x;
    if (times.length < 2) {
      marks = [Plot.barY(pts, Plot.stackY({ x: (d) => periodLabel(d.t, s.period), y: "value", fill: "line", order: names, title }))];
      x = { label: null };
    } else {
      marks = [
        // An area's title is its line's: one varying along it would cut it.
        Plot.areaY(pts, Plot.stackY({ x: "t", y: "value", z: "line", fill: "line", order: names, fillOpacity: 0.85, title: "line", curve: "linear" })),
        Plot.lineY(pts, Plot.stackY2({ x: "t", y: "value", z: "line", stroke: "var(--q-chart-bg, white)", strokeWidth: 0.75, order: names })),
      ];
      x = { ...timeAxis(times, s.period, width), label: null };
    }
    const totals = d3.rollups(pts, (v) => d3.sum(v, (d) => d.value), (d) => d.t.getTime()).map(([, v]) => v);
    const plot = Plot.plot({
      ...base(width, 260),
      marginLeft: Math.max(40, textWidth(totals.map(num)) + 14),
      marginRight: 32,
      x,
      y: { label: s.unit || null, grid: true, nice: true, ...wholeTicks([...pts.map((p) => p.value), ...totals], 260, 35) },
      color: { domain: names },
      marks: [...marks, Plot.ruleY([0])],
    });
    return { plot, legend: colorLegend(plot) };
  };

  // calendar: a cell for each day, shaded by its value, a row of weeks for
  // each year, over which each month's name stands at the week its first
  // day is in. The weeks a month begins in differ from year to year, so the
  // names are drawn in each year's row (on a row of their own, MONTHS, above
  // Monday), not as one axis for all.
  KINDS.calendar = (s, roles, width) => {
    const pts = seriesPoints(s);
    const years = [...new Set(pts.map((p) => p.t.getUTCFullYear()))];
    const week = (t) => d3.utcMonday.count(d3.utcYear(t), t);
    const day = (t) => (t.getUTCDay() + 6) % 7;
    const MONTHS = -1;
    const monthStarts = years.flatMap((y) => d3.utcMonths(new Date(Date.UTC(y, 0, 1)), new Date(Date.UTC(y + 1, 0, 1))));
    const cell = Math.max(6, Math.min(14, Math.floor((width - 60) / 54)));
    const plot = Plot.plot({
      ...base(Math.min(width, 60 + cell * 54), years.length * (cell * 8 + 24) + 20),
      marginLeft: 40,
      marginTop: 10,
      padding: 0.1,
      x: { axis: null, domain: d3.range(54) },
      y: { tickFormat: (d) => (d === MONTHS ? "" : "MTWTFSS"[d]), tickSize: 0, label: null, domain: [MONTHS, ...d3.range(7)] },
      fy: { label: null, domain: years, tickFormat: (y) => String(y) },
      color: { type: "linear", scheme: "greens", label: yLabelOf(s) || "value", zero: true },
      marks: [
        Plot.text(monthStarts, { x: week, y: () => MONTHS, fy: (m) => m.getUTCFullYear(), text: d3.utcFormat("%b"), fillOpacity: 0.85 }),
        Plot.cell(pts, {
          x: (d) => week(d.t),
          y: (d) => day(d.t),
          fy: (d) => d.t.getUTCFullYear(),
          fill: "value",
          inset: 0.5,
          title: (d) => `${fmtDay()(d.t)}: ${withUnit(d.value, s.unit)}`,
        }),
      ],
    });
    return { plot, legend: rampLegend(plot, yLabelOf(s) || "value") };
  };

  // categoriesRows reads categories as rows of name, value, low and high.
  function categoryRows(c) {
    return c.values.map((v, i) => ({ name: v.name, value: v.value, low: v.low, high: v.high, i }));
  }

  // slotsOf gives each row of a table its place within its x, as its slot:
  // its color, then its turn among the rows of its x and color. So each row
  // has a bar of its own. It answers the slots in their order across a
  // group: the colors as they first come, each with as many slots as it
  // has rows at one x at most.
  function slotsOf(rows) {
    const turns = new Map();
    const most = new Map();
    for (const r of rows) {
      const color = r.color ?? "";
      const key = `${r.x}\u0000${color}`;
      const turn = turns.get(key) || 0;
      turns.set(key, turn + 1);
      r.slot = `${color}\u0000${turn}`;
      most.set(color, Math.max(most.get(color) || 0, turn + 1));
    }
    return [...most].flatMap(([color, n]) => d3.range(n).map((turn) => `${color}\u0000${turn}`));
  }

  // bars: a bar for each category, or for each row of a table at its x,
  // side by side with the other rows there, grouped by color.
  KINDS.bars = (data, roles, width) => {
    let rows;
    let xLabel = null;
    let yLabel = null;
    let colored = false;
    let unit = null;
    if (data.values) {
      rows = categoryRows(data).map((r) => ({ x: r.name, y: r.value, low: r.low, high: r.high }));
      yLabel = data.unit || null;
      unit = data.unit;
    } else {
      const t = rowsOf("bars", data, roles);
      rows = t.rows.map((r) => ({ x: cellText(r.x), y: r.y, color: r.color === undefined ? undefined : cellText(r.color) }));
      xLabel = t.col("x").name;
      yLabel = colLabel(t.col("y"));
      unit = t.col("y").unit;
      colored = t.has("color");
      if (xKindOf(t.rows.map((r) => r.x)) === "time") {
        rows.sort((a, b) => timeOf(a.x) - timeOf(b.x));
      }
    }
    const xs = [...new Set(rows.map((r) => r.x))];
    const title = (d) => `${d.x}${d.color !== undefined ? ` · ${d.color}` : ""}: ${withUnit(d.y, unit)}`;
    const values = rows.flatMap((r) => [r.y, r.low, r.high]).filter((v) => typeof v === "number");
    const left = Math.max(40, textWidth(values.map(num)) + 14);
    const slot = (width - left - 10) / Math.max(1, xs.length);
    const rotate = textWidth(xs) > slot - 6;
    const bottom = rotate ? Math.min(120, textWidth(xs.map((x) => clip(x, 18))) * 0.75 + 20) : 30;
    const marks = [];
    const slots = slotsOf(rows);
    if (colored || slots.length > 1) {
      // Each x is a group of bars side by side (Plot would stack the rows
      // of one x into one column).
      marks.push(Plot.barY(rows, { fx: "x", x: "slot", y: "y", fill: colored ? "color" : "var(--q-accent, #4269d0)", title, insetLeft: 0.5, insetRight: 0.5 }));
      const plot = Plot.plot({
        ...base(width, 240 + bottom),
        marginLeft: left,
        marginBottom: bottom,
        fx: { domain: xs, label: xLabel, tickRotate: rotate ? -40 : 0, tickFormat: (d) => clip(d, 18), padding: 0.15 },
        x: { axis: null, domain: slots },
        y: { label: yLabel, grid: true, nice: true, ...wholeTicks(values, 240, 35) },
        color: colored ? { domain: [...new Set(rows.map((r) => r.color))] } : undefined,
        marks: [...marks, Plot.ruleY([0])],
      });
      return { plot, legend: colored ? colorLegend(plot) : null };
    }
    marks.push(Plot.barY(rows, { x: "x", y: "y", fill: "var(--q-accent, #4269d0)", title }));
    // A bar is at most 90 pixels wide, however few they are.
    const pad = Math.min(0.8, Math.max(0.2, 1 - (90 * xs.length) / Math.max(1, width - left)));
    const ranged = rows.filter((r) => r.low !== undefined && r.high !== undefined);
    if (ranged.length) marks.push(Plot.ruleX(ranged, { x: "x", y1: "low", y2: "high", strokeWidth: 1.5, strokeOpacity: 0.7 }));
    const plot = Plot.plot({
      ...base(width, 240 + bottom),
      marginLeft: left,
      marginBottom: bottom,
      x: { domain: xs, label: xLabel, tickRotate: rotate ? -40 : 0, tickFormat: (d) => clip(d, 18), padding: pad },
      y: { label: yLabel, grid: true, nice: true, ...wholeTicks(values, 240, 35) },
      marks: [...marks, Plot.ruleY([0])],
    });
    return { plot, legend: null };
  };

  // histogram: the categories as adjoining bins, in their order.
  KINDS.histogram = (c, roles, width) => {
    const rows = categoryRows(c);
    const xs = rows.map((r) => r.name);
    const left = Math.max(40, textWidth(rows.map((r) => num(r.value))) + 14);
    const slot = (width - left - 10) / Math.max(1, xs.length);
    const rotate = textWidth(xs) > slot - 4;
    const bottom = rotate ? Math.min(120, textWidth(xs.map((x) => clip(x, 18))) * 0.75 + 20) : 30;
    const plot = Plot.plot({
      ...base(width, 240 + bottom),
      marginLeft: left,
      marginBottom: bottom,
      x: { domain: xs, label: null, padding: 0, tickRotate: rotate ? -40 : 0, tickFormat: (d) => clip(d, 18) },
      y: { label: c.unit || null, grid: true, nice: true, ...wholeTicks(rows.map((r) => r.value), 240, 35) },
      marks: [
        Plot.barY(rows, { x: "name", y: "value", fill: "var(--q-accent, #4269d0)", insetLeft: 0.5, insetRight: 0.5, title: (d) => `${d.name}: ${withUnit(d.value, c.unit)}` }),
        Plot.ruleY([0]),
      ],
    });
    return { plot, legend: null };
  };

  // share: each category's part of their total, as one bar across, with
  // each part's percent in the legend.
  KINDS.share = (c, roles, width) => {
    const rows = categoryRows(c);
    const total = d3.sum(rows, (r) => r.value);
    const pct = (v) => (total > 0 ? percent(v, total) : "—");
    const names = rows.map((r) => r.name);
    const plot = Plot.plot({
      ...base(width, 90),
      marginLeft: 12,
      marginRight: 18,
      x: { label: null, percent: true, tickFormat: (d) => `${d}%`, domain: [0, 100] },
      y: { axis: null },
      color: { domain: names },
      marks: [
        Plot.barX(rows, Plot.stackX({ x: "value", fill: "name", offset: "normalize", order: null, inset: 0.5, title: (d) => `${d.name}: ${withUnit(d.value, c.unit)} (${pct(d.value)})` })),
        Plot.text(rows, Plot.stackX({ x: "value", offset: "normalize", order: null, text: (d) => (total > 0 && (d.value / total) * (width - 20) > 36 ? pct(d.value) : ""), fill: "white" })),
      ],
    });
    const byName = new Map(rows.map((r) => [r.name, r.value]));
    return { plot, legend: colorLegend(plot, (n) => `${n} ${pct(byName.get(n))}`) };
  };

  // funnel: the categories as stages, in their order, each with its part of
  // the first.
  KINDS.funnel = (c, roles, width) => {
    const rows = categoryRows(c);
    const first = rows.length ? rows[0].value : 0;
    const part = (v) => (first > 0 ? percent(v, first) : "—");
    const most = d3.max(rows, (r) => Math.abs(r.value)) || 1;
    const left = Math.min(width * 0.4, textWidth(rows.map((r) => clip(r.name, 28))) + 16);
    const plot = Plot.plot({
      ...base(width, rows.length * (ROW_HEIGHT + 8) + 20),
      marginLeft: left,
      marginRight: 10,
      x: { axis: null, domain: [-most / 2, most / 2] },
      y: { domain: rows.map((r) => r.name), label: null, tickSize: 0, tickFormat: (d) => clip(d, 28), padding: 0.12 },
      marks: [
        Plot.barX(rows, { y: "name", x1: (d) => -d.value / 2, x2: (d) => d.value / 2, fill: "var(--q-accent, #4269d0)", fillOpacity: (d) => 1 - (d.i / Math.max(1, rows.length)) * 0.5, title: (d) => `${d.name}: ${withUnit(d.value, c.unit)}, ${part(d.value)} of ${rows[0].name}` }),
        Plot.text(rows, { y: "name", x: 0, text: (d) => `${withUnit(d.value, c.unit)} · ${part(d.value)}`, fill: "var(--q-on-accent, white)", stroke: "var(--q-accent, #4269d0)", strokeWidth: 3, paintOrder: "stroke" }),
      ],
    });
    return { plot, legend: null };
  };

  // An x of a table across: numbers, times or categories.
  function xChannel(rows, role, width) {
    const vals = rows.map((r) => r[role]);
    const k = xKindOf(vals);
    if (k === "time") return { k, get: (d) => timeOf(d[role]), scale: { type: "utc" } };
    if (k === "number") return { k, get: (d) => d[role], scale: { type: "linear", nice: true, ...wholeTicks(vals, width, 80) } };
    return { k, get: (d) => cellText(d[role]), scale: { type: "point", domain: [...new Set(vals.map(cellText))], padding: 0.5 } };
  }

  // scatter and bubble: a point for each row, sized by size for a bubble,
  // colored by color, labelled by mark.
  function points(kind) {
    return (table, roles, width) => {
      const t = rowsOf(kind, table, roles);
      const rows = t.rows.map((r) => ({ ...r, color: r.color === undefined || r.color === null ? undefined : cellText(r.color) }));
      const x = xChannel(rows, "x", width);
      const colored = t.has("color");
      const unitX = t.col("x").unit;
      const unitY = t.col("y").unit;
      const title = (d) =>
        [
          d.mark ? String(d.mark) : null,
          `${t.col("x").name}: ${withUnit(d.x, unitX)}`,
          `${t.col("y").name}: ${withUnit(d.y, unitY)}`,
          kind === "bubble" ? `${t.col("size").name}: ${withUnit(d.size, t.col("size").unit)}` : null,
          colored && d.color !== undefined ? `${t.col("color").name}: ${d.color}` : null,
        ].filter(Boolean).join("\n");
      const opts = { x: x.get, y: "y", title, fillOpacity: kind === "bubble" ? 0.6 : 0.85 };
      if (colored) opts.fill = (d) => d.color ?? "—";
      else opts.fill = "var(--q-accent, #4269d0)";
      if (kind === "bubble") {
        opts.r = "size";
        opts.stroke = "currentColor";
        opts.strokeOpacity = 0.4;
      } else {
        opts.r = 3.5;
      }
      const marks = [Plot.dot(rows, opts)];
      const marked = rows.filter((r) => r.mark !== undefined && r.mark !== null);
      if (marked.length) marks.push(Plot.text(marked, { x: x.get, y: "y", text: (d) => clip(d.mark, 32), dy: -9, fillOpacity: 0.85 }));
      const left = Math.max(40, textWidth(rows.map((r) => num(r.y))) + 14);
      const plot = Plot.plot({
        ...base(width, 280),
        marginLeft: left,
        marginRight: 16,
        inset: kind === "bubble" ? 18 : 8,
        x: { ...x.scale, label: colLabel(t.col("x")), grid: true },
        y: { label: colLabel(t.col("y")), grid: true, nice: true, ...wholeTicks(rows.map((r) => r.y), 280, 35) },
        r: kind === "bubble" ? { range: [3, Math.max(12, Math.min(36, width / 20))] } : undefined,
        color: colored ? { type: "categorical" } : undefined,
        marks,
      });
      return { plot, legend: colored ? colorLegend(plot) : null };
    };
  }
  KINDS.scatter = points("scatter");
  KINDS.bubble = points("bubble");

  // heatmap: a cell for each row, at its x and y, shaded by its value.
  KINDS.heatmap = (table, roles, width) => {
    const t = rowsOf("heatmap", table, roles);
    const rows = t.rows.map((r) => ({ x: cellText(r.x), y: cellText(r.y), value: r.value, rawx: r.x }));
    let xs = [...new Set(rows.map((r) => r.x))];
    if (xKindOf(t.rows.map((r) => r.x)) === "time") xs = xs.sort((a, b) => timeOf(a) - timeOf(b));
    else if (xKindOf(t.rows.map((r) => r.x)) === "number") xs = xs.sort((a, b) => +a - +b);
    const ys = [...new Set(rows.map((r) => r.y))];
    const left = Math.min(width * 0.35, textWidth(ys.map((y) => clip(y, 24))) + 16);
    const slot = (width - left - 10) / Math.max(1, xs.length);
    const rotate = textWidth(xs) > slot - 4;
    const bottom = rotate ? Math.min(100, textWidth(xs.map((x) => clip(x, 16))) * 0.75 + 20) : 30;
    const label = colLabel(t.col("value"));
    const plot = Plot.plot({
      ...base(width, Math.min(600, Math.max(120, ys.length * ROW_HEIGHT + 20 + bottom))),
      marginLeft: left,
      marginBottom: bottom,
      padding: 0.04,
      x: { domain: xs, label: t.col("x").name, tickRotate: rotate ? -40 : 0, tickFormat: (d) => clip(d, 16) },
      y: { domain: ys, label: t.col("y").name, labelAnchor: "top", tickFormat: (d) => clip(d, 24) },
      color: { type: "linear", scheme: "blues", label, zero: rows.every((r) => r.value >= 0) },
      marks: [Plot.cell(rows, { x: "x", y: "y", fill: "value", inset: 0.5, title: (d) => `${d.x} · ${d.y}: ${withUnit(d.value, t.col("value").unit)}` })],
    });
    return { plot, legend: rampLegend(plot, label) };
  };

  // range: each category's low to high, with its value marked; a value
  // without them drawn alone.
  KINDS.range = (data, roles, width) => {
    let rows;
    let unit;
    let xLabel;
    if (data.values) {
      rows = categoryRows(data).map((r) => ({ name: r.name, value: r.value, low: r.low, high: r.high }));
      unit = data.unit;
      xLabel = data.unit || null;
    } else {
      const t = rowsOf("range", data, roles);
      rows = t.rows.map((r) => ({ name: cellText(r.x), value: r.value ?? undefined, low: r.low, high: r.high }));
      unit = t.col("low").unit || (t.has("value") ? t.col("value").unit : undefined);
      xLabel = unit || null;
    }
    const names = [...new Set(rows.map((r) => r.name))];
    const ranged = rows.filter((r) => typeof r.low === "number" && typeof r.high === "number");
    const valued = rows.filter((r) => typeof r.value === "number");
    const left = Math.min(width * 0.4, textWidth(names.map((n) => clip(n, 28))) + 16);
    const title = (d) =>
      `${d.name}: ${d.value !== undefined ? withUnit(d.value, unit) + " " : ""}` +
      (d.low !== undefined ? `(${withUnit(d.low, unit)} to ${withUnit(d.high, unit)})` : "");
    const plot = Plot.plot({
      ...base(width, names.length * ROW_HEIGHT + 50),
      marginLeft: left,
      marginRight: 16,
      x: { label: xLabel, grid: true, nice: true, ...wholeTicks(rows.flatMap((r) => [r.value, r.low, r.high]), width, 80) },
      y: { domain: names, label: null, tickFormat: (d) => clip(d, 28) },
      marks: [
        Plot.ruleY(ranged, { y: "name", x1: "low", x2: "high", stroke: "var(--q-accent, #4269d0)", strokeWidth: 6, strokeOpacity: 0.45, strokeLinecap: "round", title }),
        Plot.dot(valued, { y: "name", x: "value", fill: "var(--q-accent, #4269d0)", stroke: "var(--q-chart-bg, white)", r: 4.5, title }),
      ],
    });
    return { plot, legend: null };
  };

  // timeline: a bar for each row, from its start to its end, on the line
  // its y names; a period ends where the next begins.
  KINDS.timeline = (table, roles, width) => {
    const t = rowsOf("timeline", table, roles);
    const rows = t.rows
      .map((r) => ({ y: cellText(r.y), start: timeOf(r.start), end: endOf(r.end), s: r.start, e: r.end, color: r.color === undefined || r.color === null ? undefined : cellText(r.color), mark: r.mark }))
      .filter((r) => r.start && r.end);
    const ys = [...new Set(rows.map((r) => r.y))];
    const colored = t.has("color");
    const left = Math.min(width * 0.35, textWidth(ys.map((y) => clip(y, 24))) + 16);
    const title = (d) => `${d.y}: ${d.s} to ${d.e}${d.color !== undefined ? `\n${t.col("color").name}: ${d.color}` : ""}${d.mark ? `\n${d.mark}` : ""}`;
    const marks = [
      Plot.barX(rows, {
        y: "y",
        x1: "start",
        x2: "end",
        fill: colored ? (d) => d.color ?? "—" : "var(--q-accent, #4269d0)",
        title,
        rx: 2,
      }),
    ];
    const marked = rows.filter((r) => typeof r.mark === "string");
    if (marked.length) marks.push(Plot.text(marked, { y: "y", x: "end", text: (d) => clip(d.mark, 32), textAnchor: "start", dx: 4 }));
    const plot = Plot.plot({
      ...base(width, ys.length * (ROW_HEIGHT + 6) + 50),
      marginLeft: left,
      marginRight: marked.length ? 80 : 16,
      x: { type: "utc", label: null, grid: true },
      y: { domain: ys, label: null, tickFormat: (d) => clip(d, 24), padding: 0.2 },
      color: colored ? { type: "categorical" } : undefined,
      marks,
    });
    return { plot, legend: colored ? colorLegend(plot) : null };
  };

  // table: the table, its numbers aligned and its units in the header.
  KINDS.table = (table) => {
    const el = document.createElement("table");
    el.className = "q-table";
    const thead = el.createTHead().insertRow();
    for (const c of table.columns) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = colLabel(c);
      thead.append(th);
    }
    const numeric = table.columns.map((_, i) => table.rows.length > 0 && table.rows.every((r) => r[i] === null || typeof r[i] === "number"));
    const tbody = el.createTBody();
    for (const r of table.rows) {
      const tr = tbody.insertRow();
      r.forEach((cell, i) => {
        const td = tr.insertCell();
        td.textContent = typeof cell === "number" ? num(cell) : cellText(cell);
        if (numeric[i]) td.className = "q-num";
      });
    }
    const wrap = document.createElement("div");
    wrap.className = "q-table-wrap";
    wrap.append(el);
    return { html: wrap };
  };

  // figure: each value as a figure, with its name, the view's unit and its
  // range.
  KINDS.figure = (c, roles, width, fig) => {
    let cells = [];
    try {
      cells = JSON.parse(fig.dataset.cells || "[]");
    } catch {
      cells = [];
    }
    const wrap = document.createElement("div");
    wrap.className = "q-figures";
    c.values.forEach((v, i) => {
      const tile = document.createElement("div");
      tile.className = "q-figure";
      if (typeof cells[i] === "string") {
        tile.dataset.address = cells[i];
        tile.title = cells[i];
        tile.classList.add("q-addressed");
      }
      const value = document.createElement("div");
      value.className = "q-figure-value";
      value.textContent = withUnit(v.value, c.unit);
      const name = document.createElement("div");
      name.className = "q-figure-name";
      name.textContent = v.name;
      tile.append(value, name);
      if (v.low !== undefined || v.high !== undefined) {
        const range = document.createElement("div");
        range.className = "q-figure-range";
        range.textContent = `${v.low !== undefined ? withUnit(v.low, c.unit) : "…"} to ${v.high !== undefined ? withUnit(v.high, c.unit) : "…"}`;
        tile.append(range);
      }
      wrap.append(tile);
    });
    const longest = Math.max(0, ...[...wrap.querySelectorAll(".q-figure-value")].map((v) => v.textContent.length));
    wrap.style.setProperty("--q-figure-chars", String(longest));
    return { html: wrap };
  };

  // text: the text, as Markdown. The server rendered it, under the page
  // format's rules, into the block's <details>; it is shown in its place.
  // Without that, each paragraph is shown as text.
  KINDS.text = (t, roles, width, fig) => {
    const wrap = document.createElement("div");
    wrap.className = "q-text";
    const details = fig.querySelector(":scope > details.q-chart-table");
    const rendered = details ? [...details.childNodes].filter((n) => !(n.nodeType === 1 && n.tagName === "SUMMARY")) : [];
    if (rendered.some((n) => n.nodeType === 1 || n.textContent.trim() !== "")) {
      for (const n of rendered) wrap.append(n.cloneNode(true));
    } else {
      for (const para of t.text.split(/\n\s*\n/)) {
        if (para.trim() === "") continue;
        const p = document.createElement("p");
        p.textContent = para.trim();
        wrap.append(p);
      }
    }
    return { html: wrap };
  };

  // The kinds drawn as HTML keep no separate data table: it is the drawing.
  const AS_HTML = new Set(["table", "figure", "text"]);

  // ---- drawing a figure ----------------------------------------------------------

  function widthOf(el) {
    const w = el.clientWidth || el.getBoundingClientRect().width;
    return Math.max(240, Math.floor(w || 640));
  }

  // foldTable folds a block's data table under its first drawing: the
  // server sends it open, for a page read without JavaScript. A kind drawn
  // as HTML is its table, so that one is hidden. A redrawn block keeps the
  // table as the reader left it.
  function foldTable(fig) {
    const details = fig.querySelector(":scope > details.q-chart-table");
    if (!details) return;
    if (AS_HTML.has(fig.dataset.kind)) details.hidden = true;
    else details.open = false;
  }

  function draw(fig) {
    const target = fig.querySelector(":scope > .q-chart-draw");
    const script = fig.querySelector(":scope > script.q-chart-data");
    if (!target || !script) return;
    const kind = fig.dataset.kind;
    try {
      const draw = KINDS[kind];
      if (!draw) throw new Error(`there is no chart of the kind ${kind}`);
      if (!AS_HTML.has(kind) && !(Plot && d3)) throw new Error("the charting library did not load");
      const data = JSON.parse(script.textContent);
      const roles = fig.dataset.roles ? JSON.parse(fig.dataset.roles) : {};
      const width = widthOf(target);
      const out = draw(data, roles, width, fig);
      const parts = [];
      if (out.legend) parts.push(out.legend);
      if (out.plot) {
        const svg = withoutStyles(out.plot);
        svg.setAttribute("role", "img");
        svg.setAttribute("aria-label", `${kind} chart`);
        parts.push(svg);
      }
      if (out.html) parts.push(out.html);
      target.replaceChildren(...parts);
      target.dataset.width = String(width);
      if (!fig.dataset.drawn) foldTable(fig);
      fig.dataset.drawn = "true";
    } catch (err) {
      fig.dataset.drawn = "failed";
      fig.classList.add("q-chart-failed");
      const p = document.createElement("p");
      p.className = "q-chart-error";
      p.textContent = `Couldn’t draw this chart: ${err && err.message ? err.message : err}. Its data is below.`;
      target.replaceChildren(p);
      const details = fig.querySelector(":scope > details.q-chart-table");
      if (details) details.open = true;
      console.error(`quire: the ${kind} chart ${fig.dataset.address || fig.id}:`, err);
    }
  }

  // A drawing follows its block's width: redrawn once the width has
  // settled, when it changed by more than a few pixels.
  const resized = new Set();
  let resizeTimer = 0;
  const observer = typeof ResizeObserver === "function"
    ? new ResizeObserver((entries) => {
      for (const e of entries) {
        const target = e.target;
        const before = +(target.dataset.width || 0);
        if (before && Math.abs(widthOf(target) - before) > 8) resized.add(target.parentElement);
      }
      if (resized.size) {
        clearTimeout(resizeTimer);
        resizeTimer = setTimeout(() => {
          for (const fig of resized) if (fig.isConnected && !AS_HTML.has(fig.dataset.kind)) draw(fig);
          resized.clear();
        }, 150);
      }
    })
    : null;

  function drawAll(root) {
    const figs = [];
    if (root.matches && root.matches("figure.q-chart")) figs.push(root);
    if (root.querySelectorAll) figs.push(...root.querySelectorAll("figure.q-chart"));
    for (const fig of figs) {
      if (fig.dataset.drawn) continue;
      draw(fig);
      const target = fig.querySelector(":scope > .q-chart-draw");
      if (observer && target) observer.observe(target);
    }
  }

  window.quireCharts = { draw: (root) => drawAll(root || document) };

  function start() {
    drawAll(document);
    // When the page's charts were first drawn (BenchmarkDrawFulfillOrder
    // reads it).
    if (performance.mark) performance.mark("quire-charts-drawn");
    // Figures a script adds later (a page brought up to date) are drawn too.
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) if (n.nodeType === 1) drawAll(n);
    }).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
