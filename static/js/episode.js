// Episode page niceties; htmx and its ws extension do the work.
// Ctrl/Cmd+Enter sends the composer; a sent action clears the text; new steps scroll into view.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    var form = document.getElementById("composer");
    if (!form || !(event.ctrlKey || event.metaKey) || event.key !== "Enter") return;
    if (!form.contains(event.target)) return;
    event.preventDefault();
    form.requestSubmit();
  });
  document.body.addEventListener("htmx:wsAfterSend", function () {
    var text = document.getElementById("action-text");
    if (text) text.value = "";
  });
  document.body.addEventListener("htmx:oobAfterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (target && target.matches && target.matches("li.step[data-status='pending']")) {
      target.scrollIntoView({ behavior: "smooth", block: "nearest" });
    }
  });
})();
