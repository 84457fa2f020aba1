// Keyboard review of simulated turns: j/k move between turns, 1-5 score the focused
// dimension (then focus moves to the next one), a/r accept/reject. Clicking a
// dimension focuses it. Keys are ignored while typing in a field.
(function () {
  "use strict";
  var focusedDim = 0;

  function typing(event) {
    var t = event.target;
    return t && (t.tagName === "INPUT" && t.type === "text" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable);
  }

  function dims() { return Array.prototype.slice.call(document.querySelectorAll("#score-dims .dim-row")); }

  function showFocus() {
    var rows = dims();
    if (!rows.length) return;
    focusedDim = Math.max(0, Math.min(focusedDim, rows.length - 1));
    rows.forEach(function (row, i) { row.classList.toggle("focused", i === focusedDim); });
  }

  // Changes typed while a save is in flight wait here and go with the next save, so
  // fast typing loses nothing when the form is swapped for the server's copy.
  var pending = {};
  var inFlight = false;

  function apply(form) {
    Object.keys(pending).forEach(function (name) {
      if (name === "verdict") { form.verdict.value = pending[name]; return; }
      var input = form.querySelector('input[name="' + name + '"][value="' + pending[name] + '"]');
      if (input) input.checked = true;
    });
  }

  function flush() {
    var form = document.getElementById("annotation-form");
    if (!form || inFlight || !Object.keys(pending).length) return;
    apply(form);
    pending = {};
    inFlight = true;
    // A form swapped in a moment ago may not be wired to htmx yet; process() is idempotent.
    if (window.htmx) window.htmx.process(form);
    form.requestSubmit();
  }

  function change(name, value) {
    pending[name] = value;
    var form = document.getElementById("annotation-form");
    if (form) apply(form);
    flush();
  }

  // A successful save swaps the form out, so its own afterRequest event never reaches
  // the document: the swap (afterSettle below) ends the save; a failed one ends here.
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.target && event.target.id === "annotation-form" && !event.detail.successful) { inFlight = false; }
  });

  function go(delta) {
    var review = document.getElementById("turn-review");
    if (!review || !review.dataset.turn) return;
    var next = parseInt(review.dataset.turn, 10) + delta;
    var link = document.querySelector('[data-turn-link="' + next + '"]');
    if (link) { focusedDim = 0; pending = {}; link.click(); }
  }

  function markCurrent() {
    var review = document.getElementById("turn-review");
    if (!review) return;
    document.querySelectorAll("[data-turn-link]").forEach(function (a) {
      a.classList.toggle("current", a.dataset.turnLink === review.dataset.turn);
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
    var key = event.key;
    if (key === "j") { go(1); }
    else if (key === "k") { go(-1); }
    else if (key >= "1" && key <= "5") {
      var row = dims()[focusedDim];
      if (!row) return;
      focusedDim = Math.min(focusedDim + 1, dims().length - 1);
      change(row.dataset.dim, key);
    } else if (key === "a" || key === "r") {
      if (!document.getElementById("annotation-form")) return;
      change("verdict", key === "a" ? "accept" : "reject");
    } else { return; }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var row = event.target.closest && event.target.closest("#score-dims .dim-row");
    if (row) { focusedDim = dims().indexOf(row); showFocus(); }
  });

  document.addEventListener("htmx:afterSettle", function () { inFlight = false; showFocus(); markCurrent(); flush(); });
  document.addEventListener("DOMContentLoaded", showFocus);
})();
