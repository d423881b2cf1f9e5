// The admin page works without this file (plain forms); it only adds comfort:
// the workspace switcher submits on change, the editor shows its size against the
// budget while typing, and destructive buttons ask first.
"use strict";
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
  document.querySelectorAll("textarea[data-budget]").forEach(function (area) {
    var budget = Number(area.dataset.budget);
    var shown = document.querySelector('[data-size-of="' + area.id + '"]');
    if (!shown) { return; }
    var update = function () {
      // Characters (code points), as the server counts them: .length counts UTF-16
      // units, two for an emoji.
      var size = [...area.value.replace(/\r\n/g, "\n")].length;
      shown.textContent = size.toLocaleString("en") + " / " + budget.toLocaleString("en") + " chars";
      shown.classList.toggle("bad", size > budget);
    };
    area.addEventListener("input", update);
    update();
  });
  document.querySelectorAll("[data-confirm]").forEach(function (button) {
    button.addEventListener("click", function (event) {
      if (!window.confirm(button.dataset.confirm)) { event.preventDefault(); }
    });
  });
});
