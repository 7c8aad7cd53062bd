// "We can't find that receipt yet": look for it again every few seconds (no meta refresh,
// which moves a reader on without warning) and open it as soon as it is there. The status
// line says what is happening; it changes only when there is news, so a screen reader
// is not interrupted every few seconds. Without scripts, the "Look again now" link does it.
"use strict";
(function () {
  var status = document.getElementById("recheck");
  if (!status || typeof window.fetch !== "function") return;
  var seconds = parseInt(status.getAttribute("data-seconds"), 10) || 30;
  var tries = parseInt(status.getAttribute("data-tries"), 10) || 20;
  var minutes = Math.round((seconds * tries) / 60);
  status.textContent = "This page looks for it again every " + seconds + " seconds for the next " + minutes +
    " minutes, and opens it when it arrives.";

  function stop(words) { status.textContent = words; }

  function look() {
    tries -= 1;
    fetch(window.location.href, { method: "HEAD", cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (response.ok) {
          stop("Your receipt has arrived. Opening it…");
          window.location.reload();
        } else if (response.status === 429) {
          stop("Too many tries from your network: wait a few minutes, then use “Look again now”.");
        } else {
          next();
        }
      })
      .catch(next);
  }

  function next() {
    if (tries > 0) setTimeout(look, seconds * 1000);
    else stop("It has not arrived yet. Ask the shop, or use “Look again now” later.");
  }

  setTimeout(look, seconds * 1000);
})();
