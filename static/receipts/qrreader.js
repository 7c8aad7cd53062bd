// Reading a QR code from the camera's video, for the scan page and the verify page.
//
// Uses the browser's BarcodeDetector where it reads QR codes; otherwise loads jsQR
// (vendored from npm, served from our static files) only when asked, so that the pages
// themselves stay small.
"use strict";

(function () {
  // Cheap phones: frames scaled down to at most 640 pixels.
  var MAX_SIDE = 640;

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

  window.RececoQR = { detector: detector };
})();
