// "Copy as curl": the request as a curl command line that sends the same method, target, headers and body.
// Every argument is single-quoted for a POSIX shell, so captured text cannot break out of its argument.

import { header } from "./model.js";

export function shellQuote(text) { return `'${String(text).replace(/'/g, `'\\''`)}'`; }

// Header fields curl makes itself from its own options, or that HTTP/2 carries as pseudo-headers.
// Host is in the URL.
const skipped = new Set(["content-length", "transfer-encoding", "connection", "host"]);

// Returns { command, notes: [String] }; `body` is the request body's bytes, or null when the server did not keep it.
export function curlCommand(row, body) {
  const record = row.record, request = record.request;
  const notes = [];
  if (!request) return { command: null, notes: ["No request was captured for this exchange."] };
  const headers = request.headers ?? [];
  const scheme = header(headers, ":scheme") ?? (row.tls ? "https" : "http");
  const authority = header(headers, ":authority") ?? header(headers, "host");
  const target = request.uri ?? "";
  let url;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) url = target;  // absolute form, as sent to a proxy
  else {
    if (authority == null) notes.push("No Host header was sent; the server's address is used.");
    url = `${scheme}://${authority ?? record.server}${target}`;
  }
  const parts = ["curl", shellQuote(url)];
  const method = request.method ?? "GET";
  if (method !== "GET" || (body && body.length > 0)) parts.push("-X", shellQuote(method));
  if (row.protocol === "h2") parts.push(scheme === "https" ? "--http2" : "--http2-prior-knowledge");
  else if (request.version === "HTTP/1.0") parts.push("--http1.0");
  for (const [name, value] of headers) {
    if (name.startsWith(":") || skipped.has(name.toLowerCase())) continue;
    parts.push("-H", shellQuote(`${name}: ${value}`));
  }
  const size = request.body?.size ?? 0;
  if (size > 0) {
    if (body == null) notes.push(`The ${size}-byte request body was not kept by the server; the command sends none.`);
    else {
      const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
      const printable = !/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text);
      if (printable) parts.push("--data-binary", shellQuote(text));
      else {
        parts.push("--data-binary", "@request-body.bin");
        notes.push("The request body is binary: save it (Request body tab) as request-body.bin next to the command.");
      }
    }
  }
  if (header(headers, "accept-encoding") != null) parts.push("--compressed");
  return { command: parts.join(" "), notes };
}
