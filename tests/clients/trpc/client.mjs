// Calls a Receco server with the official tRPC client, untyped, exactly as an
// integrator's TypeScript code would at run time. Prints one JSON document of
// outcomes for tests/agentapi/test_trpc_client.py to check.
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from "@trpc/client";

const [base, token, shortCode] = process.argv.slice(2);
const url = `${base}/api/trpc`;
const headers = () => ({ Authorization: "Bearer " });
const single = createTRPCClient({ links: [httpLink({ url, headers })] });
const batched = createTRPCClient({ links: [httpBatchLink({ url, headers })] });

async function outcome(promise) {
  try {
    return { ok: true, data: await promise };
  } catch (error) {
    if (!(error instanceof TRPCClientError)) throw error;
    return { ok: false, message: error.message, data: error.data, code: error.shape?.code };
  }
}

const sale = {
  token,
  short_code: shortCode,
  merchant_string_id: "test-trpc-shop",
  merchant_name: "tRPC Shop",
  merchant_logo: null,
  accent_color: null,
  total_amount: 2500,
  currency: "NGN",
  transaction_date: new Date().toISOString(),
  items: [{ name: "Tea", quantity: 1, unit_price: 2500, total_price: 2500 }],
  customer_email: null,
  customer_phone: null,
};

const result = {
  create: await outcome(single.createReceiptFromPOS.mutate(sale)),
  replay: await outcome(batched.createReceiptFromPOS.mutate(sale)),
  get: await outcome(single.getReceipt.query({ token: shortCode.toLowerCase() })),
  missing: await outcome(single.getReceipt.query({ token: "ZZZZZZ" })),
  malformed: await outcome(single.getReceipt.query({ token: "no!" })),
  wrongKind: await outcome(single.getReceipt.mutate({ token })),
  batch: await Promise.all([
    outcome(batched.getReceipt.query({ token })),
    outcome(batched.getReceipt.query({ token: "YYYYYY" })),
  ]),
  contact: await Promise.all([
    outcome(batched.updateReceiptContact.mutate({ token, email: "customer@example.com" })),
    outcome(batched.updateReceiptContact.mutate({ token })),
  ]),
};
console.log(JSON.stringify(result));
