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

  function submit() {
    var form = document.getElementById("annotation-form");
    if (form) form.requestSubmit();
  }

  function go(delta) {
    var review = document.getElementById("turn-review");
    if (!review || !review.dataset.turn) return;
    var next = parseInt(review.dataset.turn, 10) + delta;
    var link = document.querySelector('[data-turn-link="' + next + '"]');
    if (link) { focusedDim = 0; link.click(); }
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
      var input = row.querySelector('input[value="' + key + '"]');
      if (!input) return;
      input.checked = true;
      focusedDim = Math.min(focusedDim + 1, dims().length - 1);
      submit();
    } else if (key === "a" || key === "r") {
      var form = document.getElementById("annotation-form");
      if (!form) return;
      form.verdict.value = key === "a" ? "accept" : "reject";
      submit();
    } else { return; }
    event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var row = event.target.closest && event.target.closest("#score-dims .dim-row");
    if (row) { focusedDim = dims().indexOf(row); showFocus(); }
  });

  document.addEventListener("htmx:afterSettle", function () { showFocus(); markCurrent(); });
  document.addEventListener("DOMContentLoaded", showFocus);
})();
