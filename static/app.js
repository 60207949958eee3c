// Verity: progressive enhancement of the run panel. Without JS a refresh shows the run state.
// Data from events is written with textContent only; the one HTML swap is a server-rendered partial.
(function () {
  "use strict";

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmtNumber(value) {
    if (typeof value !== "number") return value === null || value === undefined ? "" : String(value);
    if (Number.isInteger(value)) return value.toLocaleString();
    if (value !== 0 && Math.abs(value) < 0.001) return value > 0 ? "< 0.001" : value.toExponential(2);
    return Number(value.toPrecision(4)).toLocaleString();
  }

  // Under a second in the page's words ("<1 s", "不到 1 秒": run_panel.elapsed_label), never "0 s".
  function formatSeconds(seconds, underSecond) {
    if (seconds < 1) return underSecond || "<1 s";
    seconds = Math.floor(seconds);
    var m = Math.floor(seconds / 60), s = seconds % 60;
    return m ? m + " min " + s + " s" : s + " s";
  }

  function RunPanel(panel) {
    this.panel = panel;
    this.i18n = JSON.parse(panel.getAttribute("data-i18n") || "{}");
    this.started = Date.now() - Number(panel.getAttribute("data-elapsed") || 0) * 1000;
    this.quiet = JSON.parse(panel.getAttribute("data-quiet-tools") || "[]");
    this.labels = JSON.parse(panel.getAttribute("data-tool-labels") || "{}");
    this.stepStarted = {};
    this.swapped = false;
  }

  RunPanel.prototype.start = function () {
    var self = this, panel = this.panel;
    var url = panel.getAttribute("data-events-url") + "?after=" + (panel.getAttribute("data-after") || "0");
    this.source = new EventSource(url);
    ["tool_started", "tool_finished", "task", "evidence", "analysis_plan", "verification", "answer_delta", "answer",
     "question", "run_finished"].forEach(function (kind) {
      self.source.addEventListener(kind, function (message) {
        var data = {};
        try { data = JSON.parse(message.data); } catch (err) { return; }
        self[kind](data);
      });
    });
    this.timer = window.setInterval(function () { self.tick(); }, 1000);
    var stop = panel.querySelector("[data-interrupt]");
    if (stop) {
      stop.hidden = false;
      stop.addEventListener("click", function () {
        stop.disabled = true;
        fetch(panel.getAttribute("data-interrupt-url"), { method: "POST" });
      });
    }
  };

  RunPanel.prototype.tick = function () {
    var label = this.panel.querySelector("[data-elapsed-label]");
    var under = this.i18n.under_second;
    if (label) label.textContent = formatSeconds((Date.now() - this.started) / 1000, under);
    var now = Date.now(), started = this.stepStarted;
    this.panel.querySelectorAll(".step.running [data-step-elapsed]").forEach(function (node) {
      var since = started[node.getAttribute("data-step-elapsed")];
      if (since) node.textContent = " (" + formatSeconds((now - since) / 1000, under) + ")";
    });
  };

  RunPanel.prototype.stepNode = function (id) {
    return this.panel.querySelector('[data-step-id="' + CSS.escape(String(id)) + '"]');
  };

  RunPanel.prototype.tool_started = function (data) {
    var list = this.panel.querySelector("[data-steps]");
    if (!list || this.stepNode(data.id) || this.isQuiet(data.tool)) return;
    var item = el("li", "step running");
    item.setAttribute("data-step-id", data.id);
    var icon = el("span", "step-icon");
    icon.appendChild(el("span", "spinner"));
    item.appendChild(icon);
    item.appendChild(el("span", "step-tool", (this.i18n.running || "Running {tool}…").replace("{tool}", this.label(data.tool))));
    var elapsed = el("span", "muted small");
    elapsed.setAttribute("data-step-elapsed", data.id);
    item.appendChild(elapsed);
    this.stepStarted[data.id] = Date.now();
    list.appendChild(item);
    this.announce(item.querySelector(".step-tool").textContent);
  };

  // Progress in words for screen readers (the live region sits outside the panel, which is swapped).
  RunPanel.prototype.announce = function (text) {
    var region = document.querySelector("[data-announcer]");
    if (region && text) region.textContent = text;
  };

  RunPanel.prototype.label = function (tool) {
    return this.labels[tool] || String(tool).replace(/_/g, " ");
  };

  // Planning and evidence tools show up as the plan and the evidence cards, not as steps.
  RunPanel.prototype.isQuiet = function (tool) {
    return this.quiet.indexOf(tool) >= 0 || String(tool).indexOf("task_") === 0;
  };

  RunPanel.prototype.tool_finished = function (data) {
    if (this.isQuiet(data.tool)) return;
    var item = this.stepNode(data.id);
    if (!item) { this.tool_started(data); item = this.stepNode(data.id); }
    if (!item) return;
    item.className = "step " + (data.ok ? "ok" : "failed");
    item.textContent = "";
    item.appendChild(el("span", "step-icon", data.ok ? "✓" : "✗"));
    item.appendChild(el("span", "step-tool", this.label(data.tool)));
    if (data.interpretation) item.appendChild(el("p", "step-text", data.interpretation));
    var error = data.error && (data.error.message || data.error.error);
    if (!data.ok && error) item.appendChild(el("p", "step-text error", error));
    (data.figures || []).forEach(function (fig) {
      if (!fig.url || fig.url.charAt(0) !== "/") return;
      var figure = el("figure"), img = el("img");
      img.src = fig.url; img.alt = fig.caption || ""; img.loading = "lazy";
      figure.appendChild(img);
      figure.appendChild(el("figcaption", null, fig.caption || ""));
      item.appendChild(figure);
    });
  };

  RunPanel.prototype.task = function (data) {
    var list = this.panel.querySelector("[data-tasks]");
    if (!list) return;
    var item = list.querySelector('[data-task-id="' + CSS.escape(String(data.id)) + '"]');
    if (data.status === "deleted") { if (item) item.remove(); return; }
    if (!item) {
      item = el("li");
      item.setAttribute("data-task-id", data.id);
      list.appendChild(item);
    }
    item.className = "task task-" + data.status;
    item.textContent = data.subject;
  };

  RunPanel.prototype.evidence = function (data) {
    var list = this.panel.querySelector("[data-evidence]");
    if (!list || list.querySelector('[data-evidence-id="' + CSS.escape(String(data.id)) + '"]')) return;
    var t = this.i18n, card = el("article", "evidence-card");
    card.setAttribute("data-evidence-id", data.id);
    var claim = el("p", "claim");
    claim.appendChild(el("span", "badge confidence-" + data.confidence, t[data.confidence] || data.confidence));
    claim.appendChild(document.createTextNode(" " + data.claim));
    card.appendChild(claim);
    var details = el("details");
    details.appendChild(el("summary", null, (t.method || "Method") + ": " + (data.method || "")));
    if (data.result_summary) details.appendChild(el("p", null, data.result_summary));
    if (data.sample_size !== null && data.sample_size !== undefined) {
      details.appendChild(el("p", null, (t.sample_size || "Sample size") + ": " + fmtNumber(data.sample_size)));
    }
    var table = el("table", "metrics"), body = el("tbody");
    Object.keys(data.metrics || {}).forEach(function (key) {
      var row = el("tr");
      row.appendChild(el("th", null, key));
      row.appendChild(el("td", null, fmtNumber(data.metrics[key])));
      body.appendChild(row);
    });
    table.appendChild(body);
    details.appendChild(table);
    if ((data.limitations || []).length) {
      details.appendChild(el("p", null, t.limitations || "Limitations"));
      var ul = el("ul");
      data.limitations.forEach(function (text) { ul.appendChild(el("li", null, text)); });
      details.appendChild(ul);
    }
    card.appendChild(details);
    list.appendChild(card);
  };

  RunPanel.prototype.analysis_plan = function (data) {
    var box = this.panel.querySelector("[data-analysis-plan]");
    if (!box) return;
    box.textContent = "";
    box.appendChild(el("dt", null, this.i18n.plan_goal || "Goal"));
    box.appendChild(el("dd", null, data.goal || ""));
    if ((data.method_plan || []).length) {
      box.appendChild(el("dt", null, this.i18n.plan_methods || "Planned methods"));
      box.appendChild(el("dd", null, data.method_plan.join("; ")));
    }
  };

  // Each claim checked against the analyses it cites gets a mark on its evidence card.
  RunPanel.prototype.verification = function (data) {
    var self = this;
    (data.results || []).forEach(function (result) {
      if (["passed", "failed", "partly_verified"].indexOf(result.status) < 0) return;
      var card = self.panel.querySelector('[data-evidence-id="' + CSS.escape(String(result.evidence_id)) + '"]');
      if (!card) return;
      var old = card.querySelector("[data-check]");
      if (old) old.remove();
      card.classList.remove("check-passed", "check-failed", "check-partly_verified");
      card.classList.add("check-" + result.status);
      var mark = el("span", "badge check check-" + result.status, self.i18n["check_" + result.status] || result.status);
      mark.setAttribute("data-check", "");
      var claim = card.querySelector(".claim");
      if (claim) { claim.appendChild(document.createTextNode(" ")); claim.appendChild(mark); }
    });
  };

  // A streamed answer grows live as plain text; the final `answer` event swaps in the rendered one.
  RunPanel.prototype.answer_delta = function (data) {
    var live = this.panel.querySelector("[data-live-answer]");
    if (!live) {
      var section = el("section", "answer live");
      live = el("div", "answer-body");
      live.setAttribute("data-live-answer", "");
      live.style.whiteSpace = "pre-wrap";
      section.appendChild(live);
      var body = this.panel.querySelector(".run-body");
      this.panel.insertBefore(section, body || null);
    }
    if (data.reset) { live.textContent = ""; return; }
    live.textContent += data.text || "";
  };

  RunPanel.prototype.answer = function () { this.swap(); };

  // The run waits for an answer: the server-rendered partial brings the question form.
  RunPanel.prototype.question = function () { this.swap(); };

  RunPanel.prototype.run_finished = function () {
    this.finish();
    this.swap();
  };

  RunPanel.prototype.finish = function () {
    if (this.source) this.source.close();
    if (this.timer) window.clearInterval(this.timer);
  };

  // The answer and the final state come from the server-rendered `_run.html` partial, so the
  // markdown rendering and escaping live in one place.
  RunPanel.prototype.swap = function () {
    var self = this;
    fetch(this.panel.getAttribute("data-partial-url"), { headers: { "X-Requested-With": "fetch" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html || !self.panel.isConnected) return;
        var holder = document.createElement("div");
        holder.innerHTML = html;  // server-rendered partial, escaped by Jinja
        var fresh = holder.querySelector("[data-run-id]");
        if (!fresh) return;
        self.panel.replaceWith(fresh);
        self.panel = fresh;
        fresh.querySelectorAll("form[data-chip]").forEach(readingChip);
        var status = fresh.querySelector(".run-status .status-badge");
        if (status) self.announce(status.textContent.trim());
        if (fresh.getAttribute("data-active") !== "true") self.finish();
      });
  };

  // An upload is read in the background: poll the dataset until it is no longer "loading", then swap
  // in the server-rendered preview card; while it loads, a read that got further (its percent) is
  // swapped in too, so the card says how far it has got (the server renders the words, en or zh).
  function watchDataset(card) {
    var delay = 1000, statusUrl = card.getAttribute("data-status-url");
    var shown = card.querySelector("[data-read-percent]");
    var percent = shown ? shown.getAttribute("data-read-percent") : null;
    function poll() {
      if (!card.isConnected) return;
      fetch(statusUrl, { headers: { "Accept": "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (body) {
          var status = body && body.dataset && body.dataset.status;
          if (status && status !== "loading") return swapDataset(card);
          var progress = body && body.dataset && body.dataset.progress;
          if (progress && String(progress.percent) !== percent) return swapDataset(card);
          delay = Math.min(delay * 1.5, 10000);
          window.setTimeout(poll, delay);
        })
        .catch(function () { delay = Math.min(delay * 2, 30000); window.setTimeout(poll, delay); });
    }
    window.setTimeout(poll, delay);
  }

  function swapDataset(card) {
    return fetch(card.getAttribute("data-partial-url"), { headers: { "X-Requested-With": "fetch" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (!html || !card.isConnected) return;
        var holder = document.createElement("div");
        holder.innerHTML = html;  // server-rendered partial, escaped by Jinja
        var fresh = holder.querySelector("[data-dataset-id]");
        if (!fresh) return;
        card.replaceWith(fresh);
        if (fresh.hasAttribute("data-dataset-loading")) watchDataset(fresh);
      });
  }

  // "Check every number with analysis.py" runs in the background: while the run panel's live region
  // says "checking…", poll the panel's partial; once the check is over, copy its outcome into the same
  // live region (so it is announced) and swap in the fresh downloads (the button is back or gone).
  function watchNumberCheck(region) {
    var panel = region.closest("[data-run-id]");
    var url = panel && panel.getAttribute("data-partial-url");
    var delay = 2000;
    if (!url) return;
    function poll() {
      if (!region.isConnected) return;
      fetch(url, { headers: { "X-Requested-With": "fetch" } })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          var holder = document.createElement("div");
          holder.innerHTML = html || "";  // server-rendered partial, escaped by Jinja
          var fresh = holder.querySelector("#reproduction");
          if (!html || (fresh && fresh.hasAttribute("data-number-check"))) {
            delay = Math.min(delay * 1.5, 10000);
            window.setTimeout(poll, delay);
            return;
          }
          region.removeAttribute("data-number-check");
          region.innerHTML = fresh ? fresh.innerHTML : "";
          var downloads = panel.querySelector("nav.downloads"), freshDownloads = holder.querySelector("nav.downloads");
          if (downloads && freshDownloads) {
            downloads.replaceWith(freshDownloads);
            freshDownloads.querySelectorAll("form").forEach(disableOnSubmit);
          }
        })
        .catch(function () { delay = Math.min(delay * 2, 30000); window.setTimeout(poll, delay); });
    }
    window.setTimeout(poll, delay);
  }

  // A file input in the page's language (templates/_file_field.html): the browser's own button is hidden
  // (still focusable, so the keyboard and screen readers reach it), the label acts as the button, and the
  // chosen file's name is shown beside it.
  function fileField(field) {
    var input = field.querySelector("input[type=file]");
    var button = field.querySelector("[data-file-button]"), name = field.querySelector("[data-file-name]");
    if (!input || !button || !name) return;
    input.classList.add("file-input");
    button.hidden = false;
    name.hidden = false;
    function show() {
      var files = Array.prototype.map.call(input.files || [], function (file) { return file.name; });
      name.textContent = files.length ? files.join(", ") : name.getAttribute("data-none");
    }
    input.addEventListener("change", show);
    show();  // a file kept by the browser on going back
  }

  // A form's buttons are disabled once it is sent: a second click sends nothing twice.
  function disableOnSubmit(form) {
    form.addEventListener("submit", function () {
      form.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
    });
  }

  // Enter sends the question, Shift+Enter makes a new line; Enter that confirms an input method's
  // composition (Chinese, Japanese) only ends the composition.
  function enterSends(textarea) {
    textarea.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
      if (!textarea.value.trim()) return;
      event.preventDefault();
      var form = textarea.form;
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    });
  }

  function copyButton(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    var status = button.parentNode.querySelector("[data-copy-status]");
    if (!target) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.textContent.trim();
      var done = function () { if (status) status.textContent = button.getAttribute("data-copied") || "Copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(target); });
      } else {
        selectText(target);
        try { if (document.execCommand("copy")) done(); } catch (err) { /* the text stays selected */ }
      }
    });
  }

  function selectText(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // A reading chip (the measure, the groups, the kind of answer): choosing another value with the
  // pointer re-runs the question at once. From the keyboard, arrows only move through the values
  // (a closed select changes on each arrow) and Enter or the Re-run button sends the choice; without
  // scripts the Re-run button is always there.
  function readingChip(form) {
    var select = form.querySelector("[data-chip-select]");
    var button = form.querySelector("[data-chip-submit]");
    var keyed = false;
    if (!select) return;
    if (button) button.hidden = true;
    function send() {
      if (!select.value) return;
      form.classList.add("chip-busy");
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }
    select.addEventListener("pointerdown", function () { keyed = false; });
    select.addEventListener("keydown", function (event) {
      keyed = true;
      if (event.key === "Enter" && select.value) { event.preventDefault(); send(); }
    });
    select.addEventListener("change", function () {
      if (!keyed) { send(); return; }
      if (button && select.value) button.hidden = false;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var replaced = document.querySelector("[data-replace-url]");
    if (replaced && window.history.replaceState) window.history.replaceState(null, "", replaced.getAttribute("data-replace-url"));
    document.querySelectorAll("textarea[data-enter-sends]").forEach(enterSends);
    document.querySelectorAll("button[data-copy]").forEach(copyButton);
    document.querySelectorAll("[data-dataset-loading]").forEach(watchDataset);
    document.querySelectorAll("[data-run-id]").forEach(function (panel) {
      if (panel.getAttribute("data-active") === "true" && window.EventSource) {
        new RunPanel(panel).start();
      }
    });
    document.querySelectorAll("[data-number-check]").forEach(watchNumberCheck);
    document.querySelectorAll("[data-file-field]").forEach(fileField);
    document.querySelectorAll("form").forEach(disableOnSubmit);
    document.querySelectorAll("form[data-chip]").forEach(readingChip);
  });
})();
