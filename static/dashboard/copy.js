// The page that shows a new API key once: a "Copy the key" button (hidden when scripts
// are off: the key is in a text box to select and copy by hand), and the box selects
// its whole text when focused.
"use strict";
document.querySelectorAll("[data-select-on-focus]").forEach(function (box) {
  box.addEventListener("focus", function () { box.select(); });
});

document.querySelectorAll("[data-copy]").forEach(function (button) {
  var box = document.getElementById(button.getAttribute("data-copy"));
  var status = document.getElementById(box.id + "-copied");
  function say(words) { status.textContent = words; }
  function byHand() {
    box.focus();
    box.select();
    var copied = false;
    try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
    say(copied ? "Copied." : "Could not copy: the key is selected, copy it yourself.");
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(box.value).then(function () { say("Copied."); }, byHand);
    } else {
      byHand();
    }
  });
});
