// Reading a QR code from the camera's video, for the scan page and the verify page: the
// reader, and the camera section both pages show (start and stop buttons, viewfinder,
// status line).
//
// Uses the browser's BarcodeDetector where it reads QR codes; otherwise loads jsQR
// (vendored from npm, served from our static files) only when asked, so that the pages
// themselves stay small.
"use strict";

(function () {
  // Cheap phones: frames scaled down to at most 640 pixels, about five frames a second.
  var MAX_SIDE = 640;
  var INTERVAL_MS = 200;

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

  function jsqrDetector(jsqrSrc) {
    var canvas = document.createElement("canvas");
    var ready = window.jsQR ? Promise.resolve() : loadScript(jsqrSrc);
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

  // A promise of {detect: function (video) -> promise of the text read or null, kind:
  // "native" or "jsqr"}; jsQR is loaded from ``jsqrSrc`` when the browser has no reader.
  function detector(jsqrSrc) {
    return nativeDetector().then(function (native) {
      if (native) return { detect: native, kind: "native" };
      return jsqrDetector(jsqrSrc).then(function (detect) { return { detect: detect, kind: "jsqr" }; });
    });
  }

  // Shows the camera ``section`` (hidden until then: without a camera the page's other
  // ways in still work) and runs it. ``options``: ``jsqr``, where jsQR is; ``open(text)``,
  // for a text read, what to do once the camera is stopped (a function), or null when the
  // text is not a receipt of ours; the status line's words: ``found``, ``notOurs``,
  // ``ready``, and ``failed(error)`` when the camera could not be started.
  function camera(section, options) {
    if (!section || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) return;
    var startButton = section.querySelector("[data-action=start-camera]");
    var stopButton = section.querySelector("[data-action=stop-camera]");
    var viewfinder = section.querySelector(".viewfinder");
    var video = section.querySelector("video");
    var status = section.querySelector(".camera-status");
    var stream = null, timer = null, detect = null;
    section.hidden = false;

    function say(text) { status.textContent = text; }

    function stop() {
      if (timer) window.clearTimeout(timer);
      timer = null;
      if (stream) stream.getTracks().forEach(function (track) { track.stop(); });
      stream = null;
      video.srcObject = null;
      viewfinder.hidden = true;
      startButton.hidden = false;
    }

    function tick() {
      detect(video).then(function (text) {
        if (!stream) return;
        var then = text ? options.open(text) : null;
        if (then) {
          say(options.found);
          stop();
          then();
          return;
        }
        if (text) say(options.notOurs);
        timer = window.setTimeout(tick, INTERVAL_MS);
      }).catch(function () { timer = window.setTimeout(tick, INTERVAL_MS); });
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
        .then(function () { return detector(options.jsqr); })
        .then(function (reader) {
          section.setAttribute("data-decoder", reader.kind);
          detect = reader.detect;
          say(options.ready);
          stopButton.focus();
          tick();
        })
        .catch(function (error) {
          stop();
          say(options.failed(error));
        });
    }

    startButton.addEventListener("click", start);
    stopButton.addEventListener("click", function () { stop(); say(""); startButton.focus(); });
    window.addEventListener("pagehide", stop);
  }

  window.RececoQR = { detector: detector, camera: camera };
})();
