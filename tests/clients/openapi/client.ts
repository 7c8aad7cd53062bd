// Calls every procedure of a Receco server through a client generated from its OpenAPI
// document: openapi-typescript makes ./schema.d.ts from /api/openapi.json, and tsc checks
// this script against it before it runs (tests/agentapi/test_openapi_clients.py).
// Usage: node client.js <base URL> <API key> <merchant id> <token>; prints one JSON object.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

declare const process: { argv: string[] }; // Node's, without @types/node

const [baseUrl, apiKey, merchant, token] = process.argv.slice(2);
const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

const sale = {
  token,
  merchant_string_id: merchant,
  total_amount: 130000,
  currency: "NGN",
  items: [
    { name: "Jollof rice", quantity: 2, unit_price: 50000, total_price: 100000 },
    { name: "Chapman", quantity: 1, unit_price: 30000, total_price: 30000 },
  ],
  payment_method: "card",
};
const results: Record<string, unknown> = {};

const created = await client.POST("/api/trpc/createReceiptFromPOS", { body: sale });
results.createReceiptFromPOS = { status: created.response.status, data: created.data?.result.data };
const shortCode = created.data?.result.data.short_code ?? "";

const read = await client.GET("/api/trpc/getReceipt", {
  params: { query: { input: JSON.stringify({ token: shortCode }) } },
});
results.getReceipt = { status: read.response.status, data: read.data?.result.data };

const missing = await client.GET("/api/trpc/getReceipt", {
  params: { query: { input: JSON.stringify({ token: "ZZZZZZ" }) } },
});
results.missing = { status: missing.response.status, error: missing.error?.error };

const contact = await client.POST("/api/trpc/updateReceiptContact", {
  body: { token, email: "customer@example.com" },
});
results.updateReceiptContact = { status: contact.response.status, data: contact.data?.result.data };

const refund = await client.POST("/api/trpc/refundReceipt", {
  body: { token, items: [{ index: 1, quantity: 1 }], reason: "Warm drink" },
});
results.refundReceipt = { status: refund.response.status, data: refund.data?.result.data };

const other = await client.POST("/api/trpc/createReceiptFromPOS", { body: { ...sale, token: `${token}v` } });
const voided = await client.POST("/api/trpc/voidReceipt", {
  body: { token: `${token}v`, reason: "Rung up twice" },
});
results.voidReceipt = { status: voided.response.status, sale: other.response.status, data: voided.data?.result.data };

// The log's queries: a server whose log holds no checkpoint yet answers each 404.
const proof = await client.GET("/api/trpc/getReceiptProof", {
  params: { query: { input: JSON.stringify({ token }) } },
});
results.getReceiptProof = { status: proof.response.status, error: proof.error?.error };

const checkpoint = await client.GET("/api/trpc/getLogCheckpoint", {
  params: { query: { input: JSON.stringify({}) } },
});
results.getLogCheckpoint = { status: checkpoint.response.status, error: checkpoint.error?.error };

const consistency = await client.GET("/api/trpc/getLogConsistency", {
  params: { query: { input: JSON.stringify({ from: 1 }) } },
});
results.getLogConsistency = { status: consistency.response.status, error: consistency.error?.error };

console.log(JSON.stringify(results));
