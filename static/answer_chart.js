// Verity: the answer card's chart and table (issue 28 point 1). The chart is drawn on a canvas from the
// rows the server put in `data-chart` (the same rows as the table beside it, recorded with the answer's
// evidence), so it can be switched between the kinds that suit the rows and saved as a PNG. No library,
// nothing loaded from elsewhere, no inline script (the page's CSP): plain canvas 2D.
(function () {
  "use strict";

  // A forecast is drawn lighter and dashed after the solid history it continues (its legend says which).
  var PALETTE = {
    bar: "#2456d6", line: "#2456d6", band: "rgba(36, 86, 214, 0.16)", grid: "#dde2e8",
    forecast: "#6b8ee8", forecastBar: "rgba(36, 86, 214, 0.45)", divider: "#8a93a3",
  };

  function numberText(value, percent, lang) {
    if (value === null || value === undefined || typeof value !== "number") return "";
    if (percent) return (value * 100).toLocaleString(lang, { maximumFractionDigits: 1 }) + "%";
    var abs = Math.abs(value);
    var digits = abs >= 100 || Number.isInteger(value) ? 0 : abs >= 1 ? 2 : 3;
    if (abs >= 1e6) return (value / 1e6).toLocaleString(lang, { maximumFractionDigits: 1 }) + "M";
    return value.toLocaleString(lang, { maximumFractionDigits: digits });
  }

  // Round steps for an axis: 1, 2 or 5 times a power of ten, about five of them.
  function ticks(low, high) {
    if (low === high) { high = low + 1; }
    var span = high - low, raw = span / 5, power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * power; }).filter(function (s) { return s >= raw; })[0];
    var out = [];
    for (var v = Math.floor(low / step) * step; v <= high + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    if (out[out.length - 1] < high) out.push(out[out.length - 1] + step);
    return out;
  }

  // Cut a label to `room` pixels with an ellipsis (group names can be long; 390 px screens are narrow).
  function fit(ctx, text, room) {
    if (ctx.measureText(text).width <= room) return text;
    while (text.length > 1 && ctx.measureText(text + "…").width > room) text = text.slice(0, -1);
    return text + "…";
  }

  function AnswerChart(figure) {
    this.figure = figure;
    this.data = JSON.parse(figure.getAttribute("data-chart"));
    this.canvas = figure.querySelector("[data-chart-canvas]");
    this.card = figure.closest(".answer");
    this.table = this.card ? this.card.querySelector("[data-result-table]") : null;
    this.kind = this.data.chart.kinds[0];
  }

  AnswerChart.prototype.start = function () {
    var self = this;
    this.figure.hidden = false;
    this.figure.querySelectorAll("[data-chart-kind]").forEach(function (button) {
      button.addEventListener("click", function () { self.show(button.getAttribute("data-chart-kind")); });
    });
    this.figure.querySelector("[data-chart-png]").addEventListener("click", function () { self.download(); });
    var width = 0;
    // redraw when the card's width changes (a phone turned, a window resized): text stays readable
    new ResizeObserver(function () {
      var now = self.figure.clientWidth;
      if (now !== width) { width = now; self.draw(); }
    }).observe(this.figure);
    this.show(this.kind);
  };

  AnswerChart.prototype.show = function (kind) {
    this.kind = kind;
    this.figure.setAttribute("data-shown", kind);
    this.figure.querySelectorAll("[data-chart-kind]").forEach(function (button) {
      button.setAttribute("aria-pressed", button.getAttribute("data-chart-kind") === kind ? "true" : "false");
    });
    var asTable = kind === "table";
    this.canvas.hidden = asTable;
    this.figure.querySelector("[data-chart-png]").hidden = asTable;
    if (this.table) this.table.classList.toggle("result-table-focus", asTable);
    if (asTable && this.table) this.table.scrollIntoView({ block: "nearest" });
    if (!asTable) this.draw();
  };

  // The points drawn: a forecast's known periods first (`past`), then the table's rows.
  AnswerChart.prototype.series = function () {
    var d = this.data, value = d.chart.value, band = d.chart.band;
    var past = (d.chart.history || []).map(function (row) {
      return { label: String(row[0]), value: row[1], low: null, high: null, past: true };
    });
    return past.concat(d.rows.map(function (row) {
      return {
        label: String(row[0]),
        value: typeof row[value] === "number" ? row[value] : null,
        low: band && typeof row[band[0]] === "number" ? row[band[0]] : null,
        high: band && typeof row[band[1]] === "number" ? row[band[1]] : null,
        past: false,
      };
    })).filter(function (p) { return p.value !== null; });
  };

  AnswerChart.prototype.draw = function () {
    if (this.kind === "table") return;
    this.render(this.canvas, Math.max(260, this.figure.clientWidth), window.devicePixelRatio || 1, "");
  };

  // Draw the current kind on `canvas`, `width` CSS pixels wide at `ratio` device pixels each; a `title`
  // (the saved PNG's: the question and the measure) goes above the drawing.
  AnswerChart.prototype.render = function (canvas, width, ratio, title) {
    var css = getComputedStyle(this.figure);
    var points = this.series();
    var horizontal = this.kind === "bar" && this.data.kind !== "period";
    var font = width < 500 ? 13 : 14;
    var head = title ? 2 * font + 22 : 0;
    var body = horizontal ? points.length * (font + 20) + 24 : Math.round(Math.min(420, Math.max(240, width * 0.55)));
    var height = head + body;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px";  // CSSOM, not a style attribute: allowed by the CSP
    canvas.style.height = height + "px";
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = css.getPropertyValue("--card").trim() || "#fff";
    ctx.fillRect(0, 0, width, height);  // an opaque background: the PNG reads on any viewer
    var family = "system-ui, -apple-system, 'Segoe UI', 'Noto Sans CJK SC', 'Noto Sans SC', sans-serif";
    var color = css.color || "#1d2330";
    ctx.fillStyle = color;
    ctx.textBaseline = "middle";
    if (title) {
      ctx.font = "600 " + (font + 2) + "px " + family;
      ctx.textAlign = "left";
      ctx.fillText(fit(ctx, title, width - 24), 12, 12 + font / 2 + 2);
      ctx.font = font + "px " + family;
      ctx.fillText(fit(ctx, this.data.columns[this.data.chart.value].label + " · " + this.data.columns[0].label, width - 24),
        12, 12 + font * 1.5 + 12);
      ctx.translate(0, head);
    }
    ctx.font = font + "px " + family;
    var percent = !!this.data.columns[this.data.chart.value].percent, lang = this.data.lang === "zh" ? "zh-CN" : "en";
    var text = function (v) { return numberText(v, percent, lang); };
    if (horizontal) this.bars(ctx, points, width, body, font, text);
    else this.columns(ctx, points, width, body, font, text, this.kind === "line");
  };

  // Groups: horizontal bars, the name on the left and the value at the bar's end.
  AnswerChart.prototype.bars = function (ctx, points, width, height, font, text) {
    var widest = Math.max.apply(null, points.map(function (p) { return ctx.measureText(p.label).width; }));
    var labelRoom = Math.min(width * 0.34, widest), valueRoom = 12 + Math.max.apply(null, points.map(function (p) {
      return ctx.measureText(text(p.value)).width;
    }));
    var left = 12 + labelRoom + 10, right = width - valueRoom - 8, top = 12, row = font + 20;
    var low = Math.min(0, Math.min.apply(null, points.map(function (p) { return p.value; })));
    var high = Math.max(0, Math.max.apply(null, points.map(function (p) { return p.value; })));
    var x = function (v) { return left + (v - low) / ((high - low) || 1) * (right - left); };
    var color = ctx.fillStyle;
    ctx.strokeStyle = PALETTE.grid;
    ctx.beginPath(); ctx.moveTo(x(0), top - 4); ctx.lineTo(x(0), top + points.length * row); ctx.stroke();
    points.forEach(function (p, i) {
      var y = top + i * row, mid = y + row / 2;
      ctx.fillStyle = color; ctx.textAlign = "right";
      ctx.fillText(fit(ctx, p.label, labelRoom), 12 + labelRoom, mid);
      ctx.fillStyle = PALETTE.bar;
      var a = x(Math.min(0, p.value)), b = x(Math.max(0, p.value));
      ctx.fillRect(a, y + 4, Math.max(1, b - a), row - 8);
      ctx.fillStyle = color; ctx.textAlign = "left";
      ctx.fillText(text(p.value), b + 6, mid);
    });
  };

  // Periods (and a group's bars when asked for as columns): a value axis on the left, the labels below,
  // thinned so they never overlap; a forecast's interval is the shaded band around its line.
  AnswerChart.prototype.columns = function (ctx, points, width, height, font, text, asLine) {
    var all = [];
    points.forEach(function (p) { all.push(p.value); if (p.low !== null) all.push(p.low, p.high); });
    var low = Math.min.apply(null, all), high = Math.max.apply(null, all);
    if (!asLine || low > 0 && low < (high - low)) low = Math.min(0, low);  // bars start at zero
    var steps = ticks(low, high);
    low = steps[0]; high = steps[steps.length - 1];
    var axisRoom = 10 + Math.max.apply(null, steps.map(function (v) { return ctx.measureText(text(v)).width; }));
    var history = points.some(function (p) { return p.past; });
    var left = axisRoom + 6, right = width - 12, top = history ? font + 24 : 14, bottom = height - (font + 22);
    var n = points.length, slot = (right - left) / n;
    var x = function (i) { return left + slot * (i + 0.5); };
    var y = function (v) { return bottom - (v - low) / ((high - low) || 1) * (bottom - top); };
    var color = ctx.fillStyle;
    ctx.textAlign = "right"; ctx.strokeStyle = PALETTE.grid; ctx.lineWidth = 1;
    steps.forEach(function (v) {
      ctx.beginPath(); ctx.moveTo(left, y(v)); ctx.lineTo(right, y(v)); ctx.stroke();
      ctx.fillText(text(v), axisRoom, y(v));
    });
    var widest = Math.max.apply(null, points.map(function (p) { return ctx.measureText(p.label).width; }));
    var every = Math.max(1, Math.ceil((widest + 10) / slot));
    ctx.textAlign = "center";
    points.forEach(function (p, i) {
      if (i % every === 0 || i === n - 1 && n - 1 - Math.floor((n - 1) / every) * every >= every / 2) {
        ctx.fillText(fit(ctx, p.label, slot * every - 4), x(i), bottom + 4 + font / 2 + 6);
      }
    });
    var first = points.findIndex(function (p) { return !p.past; });  // where the forecast begins
    if (history && first > 0) {  // a dotted line between the last known period and the first forecast one
      ctx.strokeStyle = PALETTE.divider; ctx.setLineDash([2, 4]);
      ctx.beginPath(); ctx.moveTo((x(first - 1) + x(first)) / 2, top); ctx.lineTo((x(first - 1) + x(first)) / 2, bottom);
      ctx.stroke(); ctx.setLineDash([]);
    }
    var ahead = history ? PALETTE.forecast : PALETTE.line;
    if (asLine) {
      var banded = points.filter(function (p) { return p.low !== null; });
      var from = Math.max(0, first);
      if (banded.length === n - from && banded.length > 1) {  // the interval around the forecast periods
        ctx.fillStyle = PALETTE.band;
        ctx.beginPath();
        for (var i = from; i < n; i++) (i > from ? ctx.lineTo : ctx.moveTo).call(ctx, x(i), y(points[i].high));
        for (var j = n - 1; j >= from; j--) ctx.lineTo(x(j), y(points[j].low));
        ctx.closePath(); ctx.fill();
      }
      ctx.lineWidth = 2.5;
      if (history) {  // the known periods: solid
        ctx.strokeStyle = PALETTE.line; ctx.beginPath();
        points.forEach(function (p, i) { if (p.past) (i ? ctx.lineTo : ctx.moveTo).call(ctx, x(i), y(p.value)); });
        ctx.stroke();
      }
      // the forecast: dashed and lighter when it follows history, joined to the last known value
      ctx.strokeStyle = ahead; ctx.setLineDash(history ? [8, 6] : []); ctx.beginPath();
      for (var k = Math.max(0, from - 1); k < n; k++) (k > Math.max(0, from - 1) ? ctx.lineTo : ctx.moveTo).call(ctx, x(k), y(points[k].value));
      ctx.stroke(); ctx.setLineDash([]);
      if (n <= 40) points.forEach(function (p, i) {
        ctx.fillStyle = p.past || !history ? PALETTE.line : ahead;
        ctx.beginPath(); ctx.arc(x(i), y(p.value), 3.5, 0, 2 * Math.PI); ctx.fill();
      });
    } else {
      var base = y(Math.max(low, Math.min(0, high)));
      points.forEach(function (p, i) {
        var top_ = y(p.value), w = Math.max(2, slot * 0.7);
        ctx.fillStyle = history && !p.past ? PALETTE.forecastBar : PALETTE.bar;
        ctx.fillRect(x(i) - w / 2, Math.min(top_, base), w, Math.max(1, Math.abs(base - top_)));
      });
      if (n <= 12 && slot > 44) {
        ctx.fillStyle = color; ctx.textAlign = "center";
        points.forEach(function (p, i) { ctx.fillText(fit(ctx, text(p.value), slot), x(i), y(p.value) - 9); });
      }
    }
    if (history) this.legend(ctx, left, font, color, asLine);
  };

  // "── Actual  - - Forecast" above the plot, in the page's language (the server's words).
  AnswerChart.prototype.legend = function (ctx, left, font, color, asLine) {
    var words = this.data.chart.legend || {}, at = left, mid = 6 + font / 2;
    [["actual", PALETTE.line, []], ["forecast", asLine ? PALETTE.forecast : PALETTE.forecastBar, [8, 6]]].forEach(function (entry) {
      ctx.strokeStyle = entry[1]; ctx.fillStyle = entry[1]; ctx.lineWidth = 2.5;
      if (asLine) {
        ctx.setLineDash(entry[2]); ctx.beginPath(); ctx.moveTo(at, mid); ctx.lineTo(at + 24, mid); ctx.stroke(); ctx.setLineDash([]);
      } else {
        ctx.fillRect(at + 6, mid - 6, 12, 12);
      }
      ctx.fillStyle = color; ctx.textAlign = "left";
      var word = words[entry[0]] || entry[0];
      ctx.fillText(word, at + 30, mid);
      at += 30 + ctx.measureText(word).width + 18;
    });
  };

  // The drawing as a PNG file named after the question (a browser keeps the letters a file name may hold).
  AnswerChart.prototype.download = function () {
    var name = (this.data.name || "chart").replace(/[\\/:*?"<>|\s]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60);
    // drawn again for the file: at least 720 px wide, twice as sharp, with the question as its title
    var canvas = document.createElement("canvas");
    this.render(canvas, Math.max(720, this.figure.clientWidth), 2, this.data.name || "");
    canvas.toBlob(function (blob) {
      var link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = (name || "chart") + ".png";
      document.body.appendChild(link);
      link.click();
      setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 1000);
    }, "image/png");
  };

  // The result table sorts on a click on a column's name: numbers by value, names by the page's collation;
  // a second click reverses. aria-sort tells a screen reader the order.
  function sortable(table, lang) {
    var collator = new Intl.Collator(lang === "zh" ? "zh-CN" : "en", { numeric: true });
    table.querySelectorAll("[data-sort-column]").forEach(function (button) {
      button.addEventListener("click", function () {
        var column = Number(button.getAttribute("data-sort-column"));
        var numeric = button.getAttribute("data-sort-numeric") === "true";
        var th = button.closest("th");
        var order = th.getAttribute("aria-sort") === (numeric ? "descending" : "ascending")
          ? (numeric ? "ascending" : "descending") : (numeric ? "descending" : "ascending");
        table.querySelectorAll("thead th").forEach(function (other) { other.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", order);
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var key = function (row) {
          var raw = row.cells[column].getAttribute("data-sort-value");
          return numeric ? (raw === "" ? -Infinity : Number(raw)) : raw;
        };
        rows.sort(function (a, b) {
          var ka = key(a), kb = key(b);
          var c = numeric ? ka - kb : collator.compare(ka, kb);
          return order === "ascending" ? c : -c;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function enhance(root) {
    root.querySelectorAll("[data-answer-chart]:not([data-ready])").forEach(function (figure) {
      figure.setAttribute("data-ready", "true");
      try { new AnswerChart(figure).start(); } catch (error) { figure.hidden = true; throw error; }
    });
    root.querySelectorAll("[data-result-table]:not([data-ready])").forEach(function (table) {
      table.setAttribute("data-ready", "true");
      sortable(table, document.documentElement.lang.indexOf("zh") === 0 ? "zh" : "en");
    });
  }

  function init() {
    enhance(document);
    // the run panel is swapped for its server-rendered partial when a run finishes (app.js)
    new MutationObserver(function () { enhance(document); }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
