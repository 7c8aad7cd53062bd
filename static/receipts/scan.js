// Scan page: read the receipt's QR code with the phone camera.
//
// The QR code is read by qrreader.js (the browser's BarcodeDetector, or jsQR loaded when
// the camera starts). Without a camera or without JavaScript the code form still works:
// this script only adds to it.
"use strict";

(function () {
  var form = document.querySelector(".code-form");
  var section = document.querySelector(".camera");
  if (!form || !section || !window.RececoQR || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;

  var startButton = section.querySelector("[data-action=start-camera]");
  var stopButton = section.querySelector("[data-action=stop-camera]");
  var viewfinder = section.querySelector(".viewfinder");
  var video = section.querySelector("video");
  var status = section.querySelector(".camera-status");
  var stream = null;
  var timer = null;
  var detect = null;
  // Cheap phones: look at about five frames a second.
  var INTERVAL_MS = 200;
  var CODE = /^[A-Za-z0-9]{6}$/;
  var webUrl = form.getAttribute("data-web-url") || "";

  section.hidden = false;

  function say(text) { status.textContent = text; }

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
      .then(function () { return window.RececoQR.detector(form.getAttribute("data-jsqr")); })
      .then(function (reader) {
        section.setAttribute("data-decoder", reader.kind);
        detect = reader.detect;
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
