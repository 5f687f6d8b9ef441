// "Copy as curl": the request as a curl command line that sends the same method, target, headers and body.
// Captured bytes are hostile: nothing in them may make the pasted command read a local file, run a program or
// change curl's options. So every argument is single-quoted for a POSIX shell (bash, dash), the body goes by
// --data-raw (which, unlike --data-binary, never reads "@file") or, when it is not plain text, on standard
// input from printf's octal escapes (--data-binary @-), the URL is http or https only, and a header whose name
// is not an HTTP token or whose value no shell argument can carry is left out and said so.

import { header } from "./model.js";

export function shellQuote(text) { return `'${String(text).replace(/'/g, `'\\''`)}'`; }

// Header fields curl makes itself from its own options, or that HTTP/2 carries as pseudo-headers.
// Host is in the URL.
const skipped = new Set(["content-length", "transfer-encoding", "connection", "host"]);

// RFC 9110's token: a name that starts with "@" would make curl read a file of headers.
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// Header fields curl sends on its own unless told otherwise: an empty value ("Name:") tells it to send none.
const curlDefaults = ["User-Agent", "Accept"];
const bodyDefaults = ["Content-Type", "Expect"];

// Bytes per printf argument: 4 characters a byte at most, well under Linux's 128 KiB limit for one argument.
const printfChunk = 16 * 1024;

// The body as --data-raw can carry it: UTF-8 text with no control character but tab and newline (a carriage
// return or NUL cannot be pasted or passed as an argument). Null when it is not.
function plainText(body) {
  let text;
  try { text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body); } catch { return null; }
  return /[\u0000-\u0008\u000b-\u001f\u007f]/.test(text) ? null : text;
}

// A printf format that writes exactly `bytes`: printable ASCII as itself ("%" doubled, "\" escaped), every other
// byte as a three-digit octal escape, which POSIX printf, dash's and bash's alike, turns back into the byte.
export function printfFormat(bytes) {
  let format = "";
  for (const b of bytes) {
    if (b === 0x25) format += "%%";
    else if (b === 0x5c) format += "\\\\";
    else if (b >= 0x20 && b < 0x7f && b !== 0x27) format += String.fromCharCode(b);
    else format += "\\" + b.toString(8).padStart(3, "0");
  }
  return format;
}

// The command that writes `bytes` to standard output: one printf, or several in braces for a long body.
export function printfCommand(bytes) {
  const parts = [];
  for (let start = 0; start < bytes.length; start += printfChunk) {
    parts.push(`printf ${shellQuote(printfFormat(bytes.subarray(start, start + printfChunk)))}`);
  }
  return parts.length === 1 ? parts[0] : `{ ${parts.join("; ")}; }`;
}

function urlOf(row, headers, notes) {
  const record = row.record, request = record.request;
  const captured = (header(headers, ":scheme") ?? "").toLowerCase();
  const scheme = captured === "http" || captured === "https" ? captured : row.tls ? "https" : "http";
  const authority = header(headers, ":authority") ?? header(headers, "host");
  const target = request.uri ?? "";
  if (/^https?:\/\//i.test(target)) return escapeControls(target, notes);  // absolute form, as sent to a proxy
  if (authority == null) notes.push("No Host header was sent; the server's address is used.");
  // A target that is not origin form ("*", another scheme's URL) is asked for at "/" of the same server.
  const path = target.startsWith("/") ? target : "/";
  if (path !== target) notes.push(`The target ${JSON.stringify(target)} is not a path; the command asks for "/".`);
  return escapeControls(`${scheme}://${authority ?? record.server}${path}`, notes);
}

// No argument can hold a NUL, and a pasted newline ends the command: control characters go percent-encoded.
function escapeControls(url, notes) {
  const escaped = url.replace(/[\u0000-\u0020\u007f]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase()}`);
  if (escaped !== url) notes.push("The URL's control characters and spaces are percent-encoded.");
  return escaped;
}

// Returns { command, notes: [String] }; `body` is the request body's bytes, or null when the server did not keep it.
export function curlCommand(row, body) {
  const record = row.record, request = record.request;
  const notes = [];
  if (!request) return { command: null, notes: ["No request was captured for this exchange."] };
  const headers = request.headers ?? [];
  const url = urlOf(row, headers, notes);
  const parts = ["curl", shellQuote(url)];
  // curl would expand [] and {} as a URL pattern, and remove "/../" and "/./" segments.
  if (/[[\]{}]/.test(url)) parts.push("--globoff");
  if (/\/\.\.?(\/|$|\?|#)/.test(url)) parts.push("--path-as-is");
  const method = request.method ?? "GET";
  const size = request.body?.size ?? 0;
  const sendsBody = size > 0 && body != null && body.length > 0;
  // curl -X HEAD would wait for a body that never comes; --head asks without one.
  if (method === "HEAD" && !sendsBody) parts.push("--head");
  else if (method !== "GET" || sendsBody) parts.push("-X", shellQuote(method));
  if (row.protocol === "h2") parts.push(url.startsWith("https:") ? "--http2" : "--http2-prior-knowledge");
  else if (request.version === "HTTP/1.0") parts.push("--http1.0");
  const left = [];
  for (const [name, value] of headers) {
    if (name.startsWith(":") || skipped.has(name.toLowerCase())) continue;
    const text = String(value);
    if (!token.test(name) || /[\u0000\r\n]/.test(text)) { left.push(name); continue; }
    // "Name:" would tell curl not to send the field at all; "Name;" sends it empty.
    parts.push("-H", shellQuote(text === "" ? `${name};` : `${name}: ${text}`));
  }
  if (left.length) notes.push(`Left out ${left.length} header field(s) no command line can carry as sent: ${left.map((n) => JSON.stringify(n)).join(", ")}.`);
  for (const name of [...curlDefaults, ...(sendsBody ? bodyDefaults : [])]) {
    if (header(headers, name) == null) parts.push("-H", shellQuote(`${name}:`));
  }
  let input = null;
  if (size > 0) {
    if (body == null) notes.push(`The ${size}-byte request body was not kept by the server; the command sends none.`);
    else {
      if (body.length < size) notes.push(`Only ${body.length} of the body's ${size} bytes were kept; the command sends those.`);
      const text = plainText(body);
      if (text != null) parts.push("--data-raw", shellQuote(text));
      else {
        parts.push("--data-binary", "@-");
        input = printfCommand(body);
      }
    }
  }
  if (header(headers, "accept-encoding") != null) parts.push("--compressed");
  const command = parts.join(" ");
  return { command: input == null ? command : `${input} | ${command}`, notes };
}
