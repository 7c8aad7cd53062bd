// Scan page: read the receipt's QR code with the phone camera.
//
// The camera and its QR code reader are qrreader.js's (the browser's BarcodeDetector, or
// jsQR loaded when the camera starts); this script says where a code read leads. Without a
// camera or without JavaScript the code form still works: this script only adds to it.
"use strict";

(function () {
  var form = document.querySelector(".code-form");
  if (!form || !window.RececoQR) return;
  // A short code as the server declares it (receipts.codes), in any case as typed.
  var CODE = new RegExp("^" + form.getAttribute("data-code-pattern") + "$", "i");
  var webUrl = form.getAttribute("data-web-url") || "";

  // Where a scanned text leads: one of our receipt or gift receipt links, or a bare short code.
  function destination(text) {
    var value = (text || "").trim();
    if (CODE.test(value)) return form.action + "?code=" + encodeURIComponent(value);
    var url;
    try { url = new URL(value); } catch (error) { return null; }
    var ours = url.origin === window.location.origin || (webUrl && url.origin === new URL(webUrl).origin);
    if (ours && /^\/app\/(receipt|gift)\/[A-Za-z0-9_-]+$/.test(url.pathname)) return window.location.origin + url.pathname;
    return null;
  }

  window.RececoQR.camera(document.querySelector(".camera"), {
    jsqr: form.getAttribute("data-jsqr"),
    open: function (text) {
      var target = destination(text);
      return target && function () { window.location.assign(target); };
    },
    found: "Receipt found, opening it…",
    notOurs: "That QR code is not a Receco receipt. Try the code on your receipt slip.",
    ready: "Point the camera at the QR code on your receipt slip.",
    failed: function (error) {
      var denied = error && (error.name === "NotAllowedError" || error.name === "SecurityError");
      return denied
        ? "The camera is blocked. Allow it in your browser settings, or type the code above."
        : "The camera could not be started. Type the code above instead.";
    },
  });
})();
