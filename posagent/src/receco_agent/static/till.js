"use strict";
// Merchant and customer text is only ever set through textContent, never parsed as HTML.
(function () {
  const lines = [];
  const $ = (id) => document.getElementById(id);
  // As the service writes amounts (receipts/money.py): symbol, grouped units, the
  // currency's minor-unit digits (none for JPY, three for KWD).
  const symbol = document.body.dataset.currencySymbol;
  const digits = parseInt(document.body.dataset.currencyDigits, 10);
  const scale = 10 ** digits;

  function money(minor) {
    const units = String(Math.floor(minor / scale)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return symbol + units + (digits ? "." + String(minor % scale).padStart(digits, "0") : "");
  }

  function toMinor(text) {
    const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
    if (!match || (match[2] || "").length > digits) return null;
    return parseInt(match[1], 10) * scale + parseInt((match[2] || "").padEnd(digits, "0") || "0", 10);
  }

  function showError(message) {
    const box = $("error");
    box.textContent = message;
    box.hidden = !message;
  }

  function render() {
    const body = $("lines");
    body.replaceChildren();
    if (!lines.length) {
      const row = body.insertRow();
      row.className = "empty";
      const cell = row.insertCell();
      cell.colSpan = 5;
      cell.textContent = "No items yet";
    }
    lines.forEach((line, index) => {
      const row = body.insertRow();
      row.insertCell().textContent = line.name;
      [String(line.quantity), money(line.price), money(line.price * line.quantity)].forEach((text) => {
        const cell = row.insertCell();
        cell.className = "num";
        cell.textContent = text;
      });
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "remove";
      remove.textContent = "×";
      remove.setAttribute("aria-label", "Remove " + line.name);
      remove.addEventListener("click", () => { lines.splice(index, 1); render(); });
      row.insertCell().appendChild(remove);
    });
    $("total").textContent = money(lines.reduce((sum, l) => sum + l.price * l.quantity, 0));
    $("charge").disabled = !lines.length;
  }

  $("add-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("item-name").value.trim();
    const price = toMinor($("item-price").value);
    const quantity = parseInt($("item-qty").value, 10);
    if (!name) return showError("Enter an item name.");
    if (price === null) {
      return showError(digits ? `Enter a price such as 2500 or 2500.${"5".padEnd(digits, "0")}.` : "Enter a price such as 2500.");
    }
    if (!(quantity >= 1)) return showError("Quantity must be 1 or more.");
    showError("");
    lines.push({ name, price, quantity });
    $("item-name").value = "";
    $("item-price").value = "";
    $("item-qty").value = "1";
    $("item-name").focus();
    render();
  });

  $("charge").addEventListener("click", async () => {
    const button = $("charge");
    button.disabled = true;
    button.textContent = "Charging…";
    showError("");
    const sale = {
      items: lines.map((l) => ({ name: l.name, quantity: l.quantity, price: l.price })),
      total: lines.reduce((sum, l) => sum + l.price * l.quantity, 0),
      paymentMethod: $("payment").value,
    };
    try {
      const response = await fetch("/test-transaction", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(sale),
      });
      const answer = await response.json();
      if (!response.ok || answer.status !== "success") {
        throw new Error(answer.error || "HTTP " + response.status);
      }
      showReceipt(answer);
    } catch (error) {
      showError("Charge failed: " + error.message);
      button.disabled = false;
    } finally {
      button.textContent = "Charge";
    }
  });

  function showReceipt(answer) {
    $("short-code").textContent = answer.shortCode;
    const link = $("receipt-url");
    link.textContent = answer.receiptUrl;
    if (/^https?:\/\//.test(answer.receiptUrl)) link.href = answer.receiptUrl;
    if (typeof answer.qrCodeUrl === "string" && answer.qrCodeUrl.startsWith("data:image/png;base64,")) {
      $("qr").src = answer.qrCodeUrl;
    }
    $("queued").hidden = !answer.queued;
    $("receipt").hidden = false;
  }

  $("new-sale").addEventListener("click", () => {
    lines.length = 0;
    $("receipt").hidden = true;
    render();
    $("item-name").focus();
  });

  render();
})();
