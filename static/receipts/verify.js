// Verify page: checks a Receco receipt file in the browser, trusting nothing from the
// service but the keys and the checkpoint embedded in the page (#published).
//
// The checks are docs/verification.md's, as receco-verify makes them: the content's
// canonical form (RFC 8785), its Ed25519 signature by a published key (WebCrypto), the
// file's trust.hash (SHA-256), every field of the file that the signed content states
// (receco_verify.orf.reading), the checkpoint's signature (C2SP signed note) and the
// inclusion proof up to the checkpoint's root (RFC 9162, 2.1.3.2). Nothing here needs the
// network once the page is loaded, except fetching a receipt by its code, link or QR code.
"use strict";

(function () {
  var dataBlock = document.getElementById("published");
  var input = document.querySelector(".verify-input");
  var verdict = document.querySelector(".verdict");
  if (!dataBlock || !input || !verdict) return;
  var published = JSON.parse(dataBlock.textContent);
  var subtle = window.crypto && window.crypto.subtle;
  var encoder = new TextEncoder();
  var DASH = "\u2014";

  // --- bytes ---------------------------------------------------------------------------

  function fromBase64(text) {
    if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) {
      throw new Error("not base64");
    }
    var binary = atob(text);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  function fromBase64url(text) {
    var plain = String(text).replace(/-/g, "+").replace(/_/g, "/");
    while (plain.length % 4) plain += "=";
    return fromBase64(plain);
  }

  function toBase64url(bytes) {
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function toHex(bytes) {
    return Array.prototype.map.call(bytes, function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
  }

  function concat(parts) {
    var length = parts.reduce(function (sum, part) { return sum + part.length; }, 0);
    var out = new Uint8Array(length), offset = 0;
    parts.forEach(function (part) { out.set(part, offset); offset += part.length; });
    return out;
  }

  function equal(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  function sha256(bytes) {
    return subtle.digest("SHA-256", bytes).then(function (digest) { return new Uint8Array(digest); });
  }

  // --- RFC 8785: keys sorted by UTF-16 code units (the default sort), strings and numbers
  // as ECMAScript's JSON.stringify writes them. --------------------------------------------

  function canonical(value) {
    if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
    if (typeof value === "number") {
      if (!isFinite(value)) throw new Error("a number that is not finite has no canonical form");
      return JSON.stringify(value);
    }
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (typeof value === "object") {
      return "{" + Object.keys(value).sort().map(function (key) {
        return JSON.stringify(key) + ":" + canonical(value[key]);
      }).join(",") + "}";
    }
    throw new Error("a value of type " + typeof value + " has no canonical form");
  }

  // --- Ed25519 keys (RFC 8037), their ids (RFC 7638 thumbprints) ----------------------------

  var NO_ED25519 = "This browser cannot check Ed25519 signatures: use an up-to-date browser, or receco-verify.";

  // Whether ``signature`` is the Ed25519 signature of ``message`` by ``publicBytes``;
  // rejects with NO_ED25519 when the browser's WebCrypto lacks Ed25519.
  function ed25519(publicBytes, signature, message) {
    return subtle.importKey("raw", publicBytes, { name: "Ed25519" }, false, ["verify"]).then(function (key) {
      return subtle.verify({ name: "Ed25519" }, key, signature, message).catch(function () { return false; });
    }, function () { throw new Error(NO_ED25519); });
  }

  // The published keys by kid, each kid checked to be its key's thumbprint.
  function loadKeys(jwks) {
    var keys = {};
    return Promise.all((jwks || []).map(function (jwk) {
      if (!jwk || jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") return null;
      var members = '{"crv":"Ed25519","kty":"OKP","x":' + JSON.stringify(jwk.x) + "}";
      return sha256(encoder.encode(members)).then(function (digest) {
        var kid = toBase64url(digest);
        var x = fromBase64url(jwk.x);
        if (kid === jwk.kid && x.length === 32) keys[kid] = x;
      });
    })).then(function () { return keys; });
  }

  // --- C2SP signed notes and checkpoints -----------------------------------------------------

  function parseNote(note) {
    if (typeof note !== "string") throw new Error("the checkpoint is not text");
    var split = note.lastIndexOf("\n\n");
    if (split < 0 || note.charAt(note.length - 1) !== "\n") throw new Error("the checkpoint is not a signed note");
    var text = note.slice(0, split + 1);
    var signatures = note.slice(split + 2, -1).split("\n").map(function (line) {
      var match = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (!match) throw new Error("the checkpoint has a malformed signature line");
      var raw = fromBase64(match[2]);
      return { name: match[1], id: raw.slice(0, 4), signature: raw.slice(4) };
    });
    var lines = text.split("\n");
    if (lines.length < 4 || !/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error("the checkpoint is malformed");
    var root = fromBase64(lines[2]);
    if (root.length !== 32) throw new Error("the checkpoint's root is not a SHA-256 hash");
    return { text: text, signatures: signatures, origin: lines[0], size: Number(lines[1]), root: root };
  }

  // The checkpoint of ``note`` once a signature by one of ``keys`` under its origin checks.
  function verifyCheckpoint(note, keys) {
    var checkpoint;
    try { checkpoint = parseNote(note); } catch (error) { return Promise.reject(error); }
    if (checkpoint.origin !== published.origin) {
      return Promise.reject(new Error("the checkpoint is of the log " + checkpoint.origin + ", not " + published.origin));
    }
    var message = encoder.encode(checkpoint.text);
    var name = encoder.encode(checkpoint.origin + "\n");
    var tries = [];
    Object.keys(keys).forEach(function (kid) {
      tries.push(sha256(concat([name, new Uint8Array([1]), keys[kid]])).then(function (id) {
        return Promise.all(checkpoint.signatures.map(function (signed) {
          if (signed.name !== checkpoint.origin || !equal(signed.id, id.slice(0, 4))) return false;
          return ed25519(keys[kid], signed.signature, message).catch(function () { return false; });
        }));
      }));
    });
    return Promise.all(tries).then(function (results) {
      var ok = results.some(function (each) { return each.some(Boolean); });
      if (!ok) throw new Error("no valid signature by a published key");
      return checkpoint;
    });
  }

  // --- RFC 6962 tree: leaf and node hashes, RFC 9162 inclusion proof -------------------------

  function nodeHash(left, right) { return sha256(concat([new Uint8Array([1]), left, right])); }

  function inclusionRoot(leaf, index, size, proof) {
    if (!(index >= 0 && index < size)) return Promise.reject(new Error("the leaf is outside the tree"));
    var fn = index, sn = size - 1, chain = Promise.resolve(leaf);
    proof.forEach(function (sibling) {
      chain = chain.then(function (r) {
        if (sibling.length !== 32) throw new Error("a proof hash is not 32 bytes");
        if (sn === 0) throw new Error("the proof is longer than the tree is deep");
        var next;
        if (fn % 2 === 1 || fn === sn) {
          next = nodeHash(sibling, r);
          if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
        } else {
          next = nodeHash(r, sibling);
        }
        fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
        return next;
      });
    });
    return chain.then(function (r) {
      if (sn !== 0) throw new Error("the proof is shorter than the tree is deep");
      return r;
    });
  }

  function entries(count) { return count === 1 ? "1 entry" : count + " entries"; }

  // --- the file's fields, as its signed content states them (receco_verify.orf.reading) ---------

  var ABSENT = { absent: true };  // a field the file must not have: the content states there is none
  var NUMBERED_FROM = 2, IDENTIFIED_FROM = 3;

  function own(object, name) { return Object.prototype.hasOwnProperty.call(object, name); }

  // How many digits of ``code``'s amounts are minor units (the table the page was served with).
  function minorDigits(code) {
    var currencies = published.currencies || { digits: {}, "default": 2 };
    var upper = String(code || "").toUpperCase();
    return own(currencies.digits, upper) ? currencies.digits[upper] : currencies["default"];
  }

  function major(minor, code) {
    if (minor === null || minor === undefined) return null;
    var digits = minorDigits(code);
    return digits === 0 ? minor : minor / Math.pow(10, digits);
  }

  // The part of an ORF file a sale's or refund's signed content states (ABSENT: must not be
  // there). Throws for a content that is no receipt's.
  function reading(content) {
    if (content.type !== "sale" && content.type !== "refund") throw new Error("not a receipt");
    var currency = content.currency, refund = content.type === "refund", payment = content.payment;
    function m(minor) { return major(minor, currency); }
    var extension = {
      token: content.token, short_code: content.short_code, livemode: content.livemode,
      subtotal: m(content.subtotal_amount), discount: m(content.discount_amount), tip: m(content.tip_amount),
      refund_of: refund ? content.refund_of.token : null
    };
    if (content.v >= NUMBERED_FROM) extension.receipt_number = content.number;
    if (refund) {
      extension.refunded_items = content.refund_of.lines.map(function (line) {
        return { index: line.index, quantity: line.quantity };
      });
    }
    var doc = {
      receipt: { receipt_id: content.token, issue_timestamp: content.transaction_date, receipt_type: content.type },
      merchant: { merchant_id: content.merchant.id, display_name: content.merchant.name },
      line_items: content.items.map(function (item, index) {
        return {
          line_item_id: item.sku || String(index + 1), description: item.name, quantity: item.quantity,
          unit_price: m(item.unit_price), line_total: m(item.total_price)
        };
      }),
      total: m(content.total_amount),
      currency: currency,
      extensions: { receco: extension }
    };
    if (refund && content.v < IDENTIFIED_FROM) {
      // Its tax lines and card are its sale's share, which this version does not sign.
      if (payment.method) doc.payment = { payment_method: payment.method };
      return doc;
    }
    var lines = content.tax_lines;
    if (lines.length) {
      var names = lines.map(function (line) { return line.name; });
      var one = names.every(function (name) { return name === names[0]; });
      doc.tax = {
        tax_scheme: one ? names[0] : ABSENT,
        tax_lines: lines.map(function (line) {
          return { rate: Number((line.rate / 100).toFixed(6)), base_amount: m(line.taxable_amount), tax_amount: m(line.tax_amount) };
        })
      };
    } else {
      doc.tax = ABSENT;
    }
    extension.tax_lines_inclusive = lines.map(function (line) { return Boolean(line.inclusive); });
    extension.card_last4 = payment.card_last4;
    var paid = { payment_method: payment.method, provider: payment.card_brand, authorization_code: payment.authorization_code };
    var any = Object.keys(paid).some(function (name) { return paid[name]; });
    if (any) {
      Object.keys(paid).forEach(function (name) { if (!paid[name]) paid[name] = ABSENT; });
      doc.payment = paid;
    } else {
      doc.payment = ABSENT;
    }
    return doc;
  }

  var CHANGED = ": the file was changed after it was signed.";

  function shown(value) { return JSON.stringify(value); }

  function same(expected, found) {
    if (typeof expected === "number" && typeof found === "number") return expected === found;
    return typeof expected === typeof found && expected === found;
  }

  // Throws naming the first field of ``found`` that says otherwise than ``expected`` (a reading).
  function agree(expected, found, path) {
    if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
      if (found === null || typeof found !== "object" || Array.isArray(found)) {
        throw new Error("The file's " + path + " is not an object" + CHANGED);
      }
      Object.keys(expected).forEach(function (name) {
        var where = path ? path + "." + name : name, value = expected[name];
        if (value === ABSENT) {
          if (own(found, name)) throw new Error("The file has " + where + ", which the signed content has none of" + CHANGED);
        } else if (!own(found, name)) {
          throw new Error("The file has no " + where + ", the signed content says " + shown(value) + CHANGED);
        } else {
          agree(value, found[name], where);
        }
      });
    } else if (Array.isArray(expected)) {
      if (!Array.isArray(found) || found.length !== expected.length) {
        var count = Array.isArray(found) ? found.length : "no";
        throw new Error("The file's " + path + " has " + count + " entries, the signed content " + expected.length + CHANGED);
      }
      expected.forEach(function (value, index) { agree(value, found[index], path + "[" + index + "]"); });
    } else if (!same(expected, found)) {
      throw new Error("The file's " + path + " is " + shown(found) + ", the signed content says " + shown(expected) + CHANGED);
    }
  }

  // --- the checks ----------------------------------------------------------------------------

  // {content, signature, trust, log} of a receipt file: the ORF file or a proof bundle.
  function signedPart(doc) {
    if (!doc || typeof doc !== "object") return null;
    if (doc.content && typeof doc.content === "object" && "signature" in doc) {
      var log = "inclusion" in doc ? doc : null;
      return { content: doc.content, signature: doc.signature, trust: null, log: log };
    }
    var extension = doc.extensions && doc.extensions.receco;
    if (!doc.trust || !extension || !extension.signed_content || typeof extension.signed_content !== "object") return null;
    return { content: extension.signed_content, signature: doc.trust.signature, trust: doc.trust, log: extension.log || null };
  }

  // Every check's outcome, in order: {ok: true | false | null (not made), text}.
  function check(doc) {
    var results = [];
    function add(ok, text) { results.push({ ok: ok, text: text }); return ok; }
    var part = signedPart(doc);
    if (!part) {
      var extension = doc && doc.extensions && doc.extensions.receco;
      if (doc && doc.orf_version && !doc.trust && extension && extension.livemode === false) {
        add(false, "This is a test receipt: Receco does not sign test receipts. Anyone can make one, under any shop name: it records no purchase.");
      } else {
        add(false, "This file is not a signed Receco receipt: it has no signature or signed content.");
      }
      return Promise.resolve({ results: results, part: null, state: "bad" });
    }
    var content = part.content, keys, bytes, signatureOk = false;
    return loadKeys(published.keys).then(function (found) {
      keys = found;
      try { bytes = encoder.encode(canonical(content)); } catch (error) {
        add(false, "The signed content cannot be put in its canonical form: " + error.message + ".");
        return;
      }
      var publicKey = keys[content.kid];
      if (!publicKey) {
        add(false, "The key that signed this receipt (" + content.kid + ") is not one of Receco's published keys.");
        return;
      }
      var signature;
      try { signature = fromBase64(part.signature); } catch (error) {
        add(false, "The file's signature is not valid base64.");
        return;
      }
      return ed25519(publicKey, signature, bytes).then(function (ok) {
        signatureOk = ok;
        if (ok) add(true, "The signature matches the receipt's content: signed by Receco's published key " + content.kid + ".");
        else add(false, "The signature does not match the content: the receipt was changed after it was signed.");
      }, function (error) { add(false, error.message); });
    }).then(function () {
      if (!bytes || !part.trust) return;
      return sha256(bytes).then(function (digest) {
        var ok = part.trust.hash_algorithm === "SHA-256" && part.trust.hash === toHex(digest) && part.trust.signed_by === content.kid;
        if (ok) add(true, "The file's fingerprint (SHA-256) and signer match its signed content.");
        else add(false, "The file's fingerprint or signer (its trust fields) do not match its signed content.");
        var stated;
        try { stated = reading(content); } catch (error) {
          add(false, "The signed content is not a sale's or a refund's: it is no receipt's.");
          return;
        }
        try {
          agree(stated, doc, "");
          add(true, "The file's shop, items, amounts, tax, dates and numbers say what its signed content says.");
        } catch (error) { add(false, error.message); }
      });
    }).then(function () {
      if (!bytes) return "bad";
      if (!part.log) {
        add(null, "It is not in the public log yet: receipts enter it a few seconds after the sale. Download the file again later to check its place in the log.");
        return "unlogged";
      }
      return checkLog(part.log, bytes, keys, add);
    }).then(function (logState) {
      var failed = results.some(function (r) { return r.ok === false; });
      var state = failed || !signatureOk ? "bad" : content.livemode === false ? "test" : logState === "unlogged" ? "unlogged" : "good";
      return { results: results, part: signatureOk ? part : null, state: state };
    });
  }

  function checkLog(log, bytes, keys, add) {
    var checkpoint;
    return verifyCheckpoint(log.checkpoint, keys).then(function (found) {
      checkpoint = found;
      add(true, "The log's checkpoint in the file (" + entries(found.size) + ") is signed by Receco's published key.");
    }, function (error) {
      add(false, "The log's checkpoint in the file is not valid: " + error.message + ".");
    }).then(function () {
      if (!checkpoint) return "bad";
      if (log.tree_size !== checkpoint.size) {
        add(false, "The inclusion proof is for a log of " + entries(log.tree_size) + ", the checkpoint is of " + checkpoint.size + ".");
        return "bad";
      }
      var proof;
      try { proof = (log.inclusion || []).map(fromBase64); } catch (error) {
        add(false, "The inclusion proof is not a list of base64 hashes.");
        return "bad";
      }
      return sha256(concat([new Uint8Array([0]), bytes])).then(function (leaf) {
        return inclusionRoot(leaf, log.leaf_index, log.tree_size, proof);
      }).then(function (root) {
        if (!equal(root, checkpoint.root)) throw new Error("mismatch");
        add(true, "The receipt is entry " + log.leaf_index + " of the log, in its checkpoint of " + entries(log.tree_size) + ": its inclusion proof leads to the checkpoint's root.");
        return checkLatest(checkpoint, keys, add);
      }).catch(function () {
        add(false, "The inclusion proof does not lead to the checkpoint's root: the proof or the receipt was changed.");
        return "bad";
      });
    });
  }

  // RFC 9162, 2.1.4.2: whether the tree of ``newSize`` leaves and root ``newRoot`` extends
  // the one of ``oldSize`` and ``oldRoot``, by the consistency proof ``proof``.
  function consistent(oldSize, newSize, proof, oldRoot, newRoot) {
    if (!proof.length || proof.some(function (p) { return p.length !== 32; })) return Promise.resolve(false);
    var path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot].concat(proof) : proof.slice();
    var fn = oldSize - 1, sn = newSize - 1;
    while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    var chain = Promise.resolve([path[0], path[0]]);
    var broken = false;
    path.slice(1).forEach(function (c) {
      chain = chain.then(function (roots) {
        if (sn === 0) { broken = true; return roots; }
        var next;
        if (fn % 2 === 1 || fn === sn) {
          next = Promise.all([nodeHash(c, roots[0]), nodeHash(c, roots[1])]);
          if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
        } else {
          next = nodeHash(roots[1], c).then(function (sr) { return [roots[0], sr]; });
        }
        fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
        return next;
      });
    });
    return chain.then(function (roots) {
      return !broken && sn === 0 && equal(roots[0], oldRoot) && equal(roots[1], newRoot);
    });
  }

  // The file's checkpoint against the latest one this page holds: the same size must have
  // the same root, and a larger one must extend it (its consistency proof is fetched from
  // the service, and checked against the two signed roots: when the service cannot be
  // reached, this check alone is not made).
  function checkLatest(checkpoint, keys, add) {
    if (!published.checkpoint) return Promise.resolve("good");
    return verifyCheckpoint(published.checkpoint, keys).then(function (latest) {
      if (latest.size === checkpoint.size && !equal(latest.root, checkpoint.root)) {
        add(false, "Receco's published checkpoint of " + entries(latest.size) + " has another root than the file's: the log was rewritten.");
        return "bad";
      }
      if (latest.size <= checkpoint.size) return "good";
      var address = "/log/consistency?from=" + checkpoint.size + "&to=" + latest.size;
      return fetch(address, { credentials: "omit" }).then(function (response) {
        if (!response.ok) throw new Error("unavailable");
        return response.json();
      }).then(function (answer) {
        return consistent(checkpoint.size, latest.size, (answer.proof || []).map(fromBase64), checkpoint.root, latest.root);
      }).then(function (ok) {
        if (ok) {
          add(true, "The log has grown to " + entries(latest.size) + " since the file was saved and still holds it unchanged: consistency proof checked.");
          return "good";
        }
        add(false, "Receco's published log of " + entries(latest.size) + " does not extend the file's checkpoint: the log was rewritten.");
        return "bad";
      }, function () {
        add(null, "The log has grown to " + entries(latest.size) + " since the file was saved; that it still holds the file's checkpoint can be checked only with Receco reachable.");
        return "good";
      });
    }, function () { return "good"; });
  }

  // --- showing the outcome -------------------------------------------------------------------

  var TITLES = {
    good: "Verified",
    unlogged: "Signed, not in the log yet",
    test: "Test receipt: not a purchase",
    bad: "Not verified"
  };

  // Who issued the receipt, as its signature says: the merchant's id, and its identity as
  // Receco checked it (content version 3), or that nobody did: the name is then its own.
  function issuer(content) {
    var merchant = content.merchant || {};
    var id = "the merchant " + merchant.id;
    var identity = merchant.identity;
    if (identity) {
      var number = identity.registration_number ? ", " + identity.registration_number : "";
      return id + ", whose identity Receco checked: " + identity.legal_name + number + ".";
    }
    var why = own(merchant, "identity") ? "Receco has not checked who runs it" : "Its signature does not say who runs it";
    return id + ". " + why + ": the shop name on the receipt is the merchant's own.";
  }

  function summary(state, content) {
    if (state === "good") return "This receipt is genuine: it is exactly what Receco signed and logged, for " + issuer(content);
    if (state === "unlogged") {
      return "The signature is valid: the content is what Receco signed, for " + issuer(content) +
        " Its place in the public log can be checked once it is there.";
    }
    if (state === "test") {
      return "Receco signed this as a test receipt, before it stopped signing them: it was made while a till was being set up, " +
        "by anyone, under any shop name. Nobody paid for it.";
    }
    return "Do not rely on this receipt: at least one check failed (below).";
  }

  var TYPES = { sale: "Sale", refund: "Refund", void: "Void of the sale" };

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function money(minor, currency) {
    if (typeof minor !== "number") return "";
    var digits = minorDigits(currency);
    try {
      var format = new Intl.NumberFormat("en", {
        style: "currency", currency: currency, currencyDisplay: "narrowSymbol",
        minimumFractionDigits: digits, maximumFractionDigits: digits
      });
      return format.format(major(minor, currency));
    } catch (error) {
      return major(minor, currency) + " " + currency;
    }
  }

  // A moment as the receipt's page shows it: in the shop's time zone (the file's
  // extensions.receco.time_zone, which the shop set) with its abbreviation, else in UTC.
  function when(iso, zone) {
    var date = new Date(iso);
    if (isNaN(date.getTime())) return String(iso);
    var shown = zone ? local(date, zone) : null;
    return shown || date.toLocaleString("en-GB", { timeZone: "UTC", dateStyle: "medium", timeStyle: "short" }) + " UTC";
  }

  function local(date, zone) {
    try {
      var day = date.toLocaleDateString("en-GB", { timeZone: zone, dateStyle: "medium" });
      var time = date.toLocaleTimeString("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
      return day + ", " + time + " " + abbreviation(date, zone);
    } catch (error) {
      return null;  // a zone this browser does not know
    }
  }

  // The zone's abbreviation (WAT, EAT, GMT) where English has one, else its offset (GMT+1).
  function abbreviation(date, zone) {
    var named = new Intl.DateTimeFormat("en-NG", { timeZone: zone, timeZoneName: "short" }).formatToParts(date)
      .filter(function (part) { return part.type === "timeZoneName"; });
    return named.length ? named[0].value : zone;
  }

  function showSigned(content, zone) {
    var details = verdict.querySelector(".signed-details");
    var rows = verdict.querySelector(".signed-items tbody");
    clear(details);
    clear(rows);
    var merchant = content.merchant || {};
    var identity = merchant.identity;
    var checked = identity ? identity.legal_name + (identity.registration_number ? ", " + identity.registration_number : "")
      : own(merchant, "identity") ? "Not checked by Receco" : "Not stated (signed before Receco stated identities)";
    var pairs = [
      ["Merchant id", merchant.id],
      ["Identity checked by Receco", content.livemode === false ? "None: a test receipt" : checked],
      ["Name on the receipt", [merchant.name, merchant.location].filter(Boolean).join(", ") + " (the merchant's own words)"],
      [TYPES[content.type] || "Receipt", content.short_code],
      ["Number", content.number],  // signed from content version 2 on
      ["Date", content.transaction_date ? when(content.transaction_date, zone) : when(content.voided_at, zone)],
      ["Total", money(content.total_amount, content.currency)]
    ];
    if (content.livemode === false) pairs.unshift(["Mode", "Test receipt: no purchase"]);
    pairs.forEach(function (pair) {
      if (!pair[1]) return;
      var row = element("div");
      row.appendChild(element("dt", pair[0]));
      row.appendChild(element("dd", pair[1]));
      details.appendChild(row);
    });
    (content.items || []).forEach(function (item) {
      var row = element("tr");
      var name = element("td", item.name);
      name.appendChild(element("span", item.quantity + " × " + money(item.unit_price, content.currency), "item-qty"));
      row.appendChild(name);
      row.appendChild(element("td", money(item.total_price, content.currency), "amount"));
      rows.appendChild(row);
    });
    verdict.querySelector(".signed-items").hidden = !(content.items || []).length;
    verdict.querySelector(".signed").hidden = false;
  }

  function show(outcome) {
    verdict.hidden = false;
    verdict.setAttribute("data-state", outcome.state);
    verdict.querySelector(".verdict-title").textContent = TITLES[outcome.state];
    verdict.querySelector(".verdict-summary").textContent = summary(outcome.state, outcome.part ? outcome.part.content : {});
    var list = verdict.querySelector(".checks");
    clear(list);
    outcome.results.forEach(function (result) {
      var mark = result.ok === true ? "Passed: " : result.ok === false ? "Failed: " : "Not checked: ";
      var item = element("li", undefined, result.ok === true ? "check-ok" : result.ok === false ? "check-failed" : "check-pending");
      item.appendChild(element("span", mark, "check-mark"));
      item.appendChild(document.createTextNode(result.text));
      list.appendChild(item);
    });
    // What failed is shown at once; what passed is behind "How it was checked".
    verdict.querySelector(".checks-details").open = outcome.state === "bad";
    if (outcome.part) showSigned(outcome.part.content, outcome.zone);
    else verdict.querySelector(".signed").hidden = true;
    verdict.focus();
  }

  function fail(text) {
    show({ state: "bad", results: [{ ok: false, text: text }], part: null });
  }

  // Each check started replaces the one before: an older one that ends later (its receipt
  // fetched over a slow network) shows nothing over the newer one's verdict.
  var latest = 0;
  function begin() {
    var mine = ++latest;
    return function () { return mine === latest; };
  }

  function verifyText(text, current) {
    if (!subtle) {
      if (current()) fail("This browser cannot check signatures here (no Web Crypto): open the page over HTTPS, or use receco-verify.");
      return;
    }
    var doc;
    try { doc = JSON.parse(text); } catch (error) {
      if (current()) fail("This file is not a receipt file: it is not JSON.");
      return;
    }
    check(doc).then(function (outcome) {
      var extension = doc && doc.extensions && doc.extensions.receco;
      outcome.zone = extension && typeof extension.time_zone === "string" ? extension.time_zone : "";
      if (current()) show(outcome);
    }, function (error) {
      if (current()) fail("The check could not be made: " + (error && error.message ? error.message : error) + ".");
    });
  }

  function verifyFile(file) {
    if (!file) return;
    var current = begin();
    var reader = new FileReader();
    reader.onload = function () { verifyText(String(reader.result), current); };
    reader.onerror = function () { if (current()) fail("The file could not be read."); };
    reader.readAsText(file);
  }

  // --- fetching a receipt by its code, link or QR code ----------------------------------------

  var webUrl = input.getAttribute("data-web-url") || "";
  var CODE = /^[A-Za-z0-9]{6}$/;
  var TOKEN = /^[A-Za-z0-9_-]{8,64}$/;

  // The receipt file's address for a code, a token or one of our receipt links, or null.
  function fileAddress(text) {
    var value = (text || "").trim();
    var compact = value.replace(/[\s\-\u2010-\u2015\u2212]/g, "");
    if (CODE.test(compact)) return "/app/receipt/" + compact.toUpperCase() + "/receipt.orf.json";
    if (TOKEN.test(value)) return "/app/receipt/" + value + "/receipt.orf.json";
    var url;
    try { url = new URL(value); } catch (error) { return null; }
    var ours = url.origin === window.location.origin || (webUrl && url.origin === new URL(webUrl).origin);
    var match = /^\/app\/receipt\/([A-Za-z0-9_-]+)$/.exec(url.pathname);
    return ours && match ? "/app/receipt/" + match[1] + "/receipt.orf.json" : null;
  }

  function verifyReference(text) {
    var current = begin();
    var address = fileAddress(text);
    if (!address) {
      fail("That is not a Receco receipt code or link: codes have 6 letters and digits, like K7P2QX.");
      return;
    }
    fetch(address, { credentials: "omit", headers: { Accept: "application/json" } }).then(function (response) {
      if (response.status === 404) throw new Error("No receipt has that code or link.");
      if (!response.ok) throw new Error("Receco did not answer (" + response.status + "). Try again later.");
      return response.text();
    }).then(function (body) { verifyText(body, current); }, function (error) {
      if (!current()) return;
      fail(error instanceof TypeError ? "Receco could not be reached: open the saved receipt file instead." : error.message);
    });
  }

  // --- wiring ------------------------------------------------------------------------------

  var fileInput = document.getElementById("receipt-file");
  var zone = input.querySelector(".drop-zone");
  fileInput.addEventListener("change", function () { verifyFile(fileInput.files[0]); });
  zone.addEventListener("dragover", function (event) { event.preventDefault(); zone.classList.add("dragging"); });
  zone.addEventListener("dragleave", function () { zone.classList.remove("dragging"); });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("dragging");
    verifyFile(event.dataTransfer && event.dataTransfer.files[0]);
  });

  var referenceForm = input.querySelector(".reference-form");
  referenceForm.addEventListener("submit", function (event) {
    event.preventDefault();
    verifyReference(document.getElementById("reference").value);
  });

  // Opened from a receipt's "Verify this receipt" (/app/verify?reference=…): check it at once.
  var given = document.getElementById("reference").value;
  if (given && /[?&]reference=/.test(window.location.search)) verifyReference(given);

  if (!window.RececoQR) return;
  window.RececoQR.camera(input.querySelector(".camera"), {
    jsqr: input.getAttribute("data-jsqr"),
    open: function (text) { return fileAddress(text) ? function () { verifyReference(text); } : null; },
    found: "Receipt found, checking it…",
    notOurs: "That QR code is not a Receco receipt.",
    ready: "Point the camera at the QR code on the receipt.",
    failed: function () { return "The camera could not be started. Open the saved file or type the code instead."; },
  });
})();
