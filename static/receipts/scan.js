// Scan page: read the receipt's QR code with the phone camera.
//
// Uses the browser's BarcodeDetector where it reads QR codes; otherwise loads jsQR
// (vendored from npm, served from our static files) only when the camera starts, so
// the page itself stays small. Without a camera or without JavaScript the code form
// still works: this script only adds to it.
"use strict";

(function () {
  var form = document.querySelector(".code-form");
  var section = document.querySelector(".camera");
  if (!form || !section || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;

  var startButton = section.querySelector("[data-action=start-camera]");
  var stopButton = section.querySelector("[data-action=stop-camera]");
  var viewfinder = section.querySelector(".viewfinder");
  var video = section.querySelector("video");
  var status = section.querySelector(".camera-status");
  var canvas = document.createElement("canvas");
  var stream = null;
  var timer = null;
  var detect = null;
  // Cheap phones: look at about five frames a second, scaled down to at most 640 pixels.
  var INTERVAL_MS = 200;
  var MAX_SIDE = 640;
  var CODE = /^[A-Za-z0-9]{6}$/;
  var webUrl = form.getAttribute("data-web-url") || "";

  section.hidden = false;

  function say(text) { status.textContent = text; }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("could not load the QR reader")); };
      document.head.appendChild(script);
    });
  }

  function nativeDetector() {
    if (!("BarcodeDetector" in window)) return Promise.resolve(null);
    return window.BarcodeDetector.getSupportedFormats().then(function (formats) {
      if (formats.indexOf("qr_code") < 0) return null;
      var detector = new window.BarcodeDetector({ formats: ["qr_code"] });
      return function (source) {
        return detector.detect(source).then(function (codes) { return codes.length ? codes[0].rawValue : null; });
      };
    }).catch(function () { return null; });
  }

  function jsqrDetector() {
    var ready = window.jsQR ? Promise.resolve() : loadScript(form.getAttribute("data-jsqr"));
    return ready.then(function () {
      var context = canvas.getContext("2d", { willReadFrequently: true });
      return function (source) {
        var width = source.videoWidth, height = source.videoHeight;
        if (!width || !height) return Promise.resolve(null);
        var scale = Math.min(1, MAX_SIDE / Math.max(width, height));
        canvas.width = Math.round(width * scale);
        canvas.height = Math.round(height * scale);
        context.drawImage(source, 0, 0, canvas.width, canvas.height);
        var image = context.getImageData(0, 0, canvas.width, canvas.height);
        var found = window.jsQR(image.data, image.width, image.height, { inversionAttempts: "dontInvert" });
        return Promise.resolve(found ? found.data : null);
      };
    });
  }

  // Where a scanned text leads: one of our receipt links, or a bare short code.
  function destination(text) {
    var value = (text || "").trim();
    if (CODE.test(value)) return form.action + "?code=" + encodeURIComponent(value);
    var url;
    try { url = new URL(value); } catch (error) { return null; }
    var ours = url.origin === window.location.origin || (webUrl && url.origin === new URL(webUrl).origin);
    if (ours && /^\/app\/receipt\/[A-Za-z0-9_-]+$/.test(url.pathname)) return window.location.origin + url.pathname;
    return null;
  }

  function tick() {
    detect(video).then(function (text) {
      if (!stream) return;
      if (text) {
        var target = destination(text);
        if (target) {
          say("Receipt found, opening it…");
          stop();
          window.location.assign(target);
          return;
        }
        say("That QR code is not a Receco receipt. Try the code on your receipt slip.");
      }
      timer = window.setTimeout(tick, INTERVAL_MS);
    }).catch(function () { timer = window.setTimeout(tick, INTERVAL_MS); });
  }

  function stop() {
    if (timer) window.clearTimeout(timer);
    timer = null;
    if (stream) stream.getTracks().forEach(function (track) { track.stop(); });
    stream = null;
    video.srcObject = null;
    viewfinder.hidden = true;
    startButton.hidden = false;
  }

  function start() {
    say("Starting the camera…");
    startButton.hidden = true;
    navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false })
      .then(function (media) {
        stream = media;
        video.srcObject = media;
        viewfinder.hidden = false;
        return video.play();
      })
      .then(function () { return nativeDetector(); })
      .then(function (native) {
        section.setAttribute("data-decoder", native ? "native" : "jsqr");
        return native || jsqrDetector();
      })
      .then(function (detector) {
        detect = detector;
        say("Point the camera at the QR code on your receipt slip.");
        stopButton.focus();
        tick();
      })
      .catch(function (error) {
        stop();
        var denied = error && (error.name === "NotAllowedError" || error.name === "SecurityError");
        say(denied
          ? "The camera is blocked. Allow it in your browser settings, or type the code above."
          : "The camera could not be started. Type the code above instead.");
      });
  }

  startButton.addEventListener("click", start);
  stopButton.addEventListener("click", function () { stop(); say(""); startButton.focus(); });
  window.addEventListener("pagehide", stop);
})();
