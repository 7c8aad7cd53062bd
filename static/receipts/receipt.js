// Receipt page: the "Print / save as PDF" button (hidden when scripts are off).
"use strict";
document.querySelectorAll("[data-action=print]").forEach(function (button) {
  if (typeof window.print !== "function") return;
  button.hidden = false;
  button.addEventListener("click", function () { window.print(); });
});

// A logo that cannot be loaded (offline, moved) is hidden rather than shown broken.
document.querySelectorAll("img.logo").forEach(function (logo) {
  function hide() { logo.hidden = true; }
  if (logo.complete && logo.naturalWidth === 0) hide();
  else logo.addEventListener("error", hide);
});

