// The refund form (templates/admin/receipts/receipt/refund.html): typing an amount ticks
// "An amount", choosing a quantity ticks "Chosen items", so that what the owner fills in is
// what is refunded. Without scripts the server reads the form the same way
// (dashboard.refund_forms.meant).
"use strict";
document.querySelectorAll("form.refund-form").forEach(function (form) {
  function tick(choice) {
    var radio = form.querySelector('input[name="what"][value="' + choice + '"]');
    if (radio) { radio.checked = true; }
  }
  form.querySelectorAll('input[name="amount"]').forEach(function (box) {
    box.addEventListener("input", function () { if (box.value.trim()) { tick("amount"); } });
  });
  form.querySelectorAll('input[name^="item_"]').forEach(function (box) {
    box.addEventListener("input", function () { if (Number(box.value) > 0) { tick("items"); } });
  });
});
