// curl.js alone: the command's shape for hostile captured requests, without running it (curl-shell.test.js runs it).

import { test } from "node:test";
import assert from "node:assert/strict";
import { curlCommand, printfFormat, shellQuote } from "../../Sources/LiveView/Page/curl.js";

const bytes = (text) => new TextEncoder().encode(text);

function row(request, extra = {}) {
  return { protocol: "http/1.1", tls: false, record: { server: "10.0.0.1:80", request }, ...extra };
}

function post(body, headers = [["Host", "h.test"], ["Content-Type", "text/plain"]]) {
  return row({ method: "POST", uri: "/", version: "HTTP/1.1", headers, body: { size: body.length } });
}

test("shellQuote closes, escapes and reopens a single quote", () => {
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  assert.equal(shellQuote("$(id) `id`"), `'$(id) \`id\`'`);
  assert.equal(shellQuote(""), "''");
});

test("printfFormat keeps printable ASCII, doubles %, escapes \\ and writes every other byte in octal", () => {
  assert.equal(printfFormat(bytes("a%b\\c'd")), "a%%b\\\\c\\047d");
  assert.equal(printfFormat(Uint8Array.from([0, 10, 13, 127, 255])), "\\000\\012\\015\\177\\377");
});

test("a text body that starts with @ goes by --data-raw, never --data-binary @file", () => {
  const { command } = curlCommand(post(bytes("@/home/u/.ssh/id_rsa")), bytes("@/home/u/.ssh/id_rsa"));
  assert.match(command, / --data-raw '@\/home\/u\/\.ssh\/id_rsa'/);
  assert.doesNotMatch(command, /--data-binary/);
});

test("a body with NUL, CR or bytes that are not UTF-8 goes on standard input from printf", () => {
  for (const body of [Uint8Array.from([0x40, 0x00]), bytes("a\r\n"), Uint8Array.from([0xff, 0x41])]) {
    const { command } = curlCommand(post(body), body);
    assert.match(command, /^printf '[^']*' \| curl /);
    assert.match(command, / --data-binary @-$/);
    assert.doesNotMatch(command, /--data-raw/);
  }
});

test("the only @ argument is @-, for any body", () => {
  for (const body of [bytes("@x"), bytes("<x"), Uint8Array.from([0x40, 0, 0x40]), bytes("-d @x")]) {
    const { command } = curlCommand(post(body), body);
    const unquoted = command.replace(/'[^']*'/g, "''");
    assert.deepEqual(unquoted.match(/@\S*/g), body.some((b) => b < 0x20) ? ["@-"] : null, command);
  }
});

test("header fields a command line cannot carry as sent are left out and named", () => {
  const headers = [["Host", "h.test"], ["@/etc/passwd", "x"], ["X-Bad", "a\nb"], ["X-Empty", ""], ["X-Ok", "1"]];
  const { command, notes } = curlCommand(row({ method: "GET", uri: "/", version: "HTTP/1.1", headers, body: { size: 0 } }), null);
  assert.doesNotMatch(command, /passwd|X-Bad/);
  assert.match(command, / -H 'X-Empty;' -H 'X-Ok: 1'/);
  assert.ok(notes.some((note) => note.includes('"@/etc/passwd"') && note.includes('"X-Bad"')), notes.join(" "));
});

test("curl's own User-Agent, Accept and Content-Type are turned off when the capture had none", () => {
  const { command } = curlCommand(post(bytes("x"), [["Host", "h.test"]]), bytes("x"));
  for (const name of ["User-Agent", "Accept", "Content-Type", "Expect"]) assert.ok(command.includes(` -H '${name}:'`), name);
  const get = curlCommand(row({ method: "GET", uri: "/", version: "HTTP/1.1", headers: [["Host", "h"], ["user-agent", "u"]], body: { size: 0 } }), null);
  assert.ok(!get.command.includes("'User-Agent:'") && !get.command.includes("'Content-Type:'"), get.command);
});

test("only http and https URLs: another scheme in :scheme or an absolute target is not used", () => {
  const h2 = row({ method: "GET", uri: "/x", version: "HTTP/2.0", body: { size: 0 },
                   headers: [[":scheme", "file"], [":authority", "h.test"], [":path", "/x"]] }, { protocol: "h2" });
  assert.match(curlCommand(h2, null).command, /^curl 'http:\/\/h\.test\/x' --http2-prior-knowledge/);
  const proxy = row({ method: "GET", uri: "file:///etc/passwd", version: "HTTP/1.1", headers: [["Host", "h.test"]], body: { size: 0 } });
  const { command, notes } = curlCommand(proxy, null);
  assert.match(command, /^curl 'http:\/\/h\.test\/' /);
  assert.ok(notes.length > 0);
  const absolute = row({ method: "GET", uri: "http://p.test/a", version: "HTTP/1.1", headers: [["Host", "p.test"]], body: { size: 0 } });
  assert.match(curlCommand(absolute, null).command, /^curl 'http:\/\/p\.test\/a' /);
});

test("control characters in the URL are percent-encoded, so the command stays one line", () => {
  const r = row({ method: "GET", uri: "/a\nb\u0000", version: "HTTP/2.0", headers: [[":authority", "h"]], body: { size: 0 } });
  assert.match(curlCommand(r, null).command, /^curl 'http:\/\/h\/a%0Ab%00' /);
});

test("a body the server did not keep is said to be missing; no request, no command", () => {
  const { command, notes } = curlCommand(post(bytes("abc")), null);
  assert.doesNotMatch(command, /--data/);
  assert.ok(notes[0].includes("3-byte request body was not kept"));
  assert.equal(curlCommand(row(null), null).command, null);
});
