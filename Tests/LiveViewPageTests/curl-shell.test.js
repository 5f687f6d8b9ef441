// Copy as curl against a real shell, a real curl and a real server: for hostile captured requests (bodies that
// start with "@", "<" or "-", hold quotes, $(...), backticks, newlines, NUL and bytes that are not UTF-8; headers
// and targets with the same), the command curl.js writes is run by bash and by dash from a script file, in an empty
// folder holding a canary file, against a loopback server that records what it received. The server must receive
// exactly the captured method, target, header fields and body; no file may be read and nothing may run.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { curlCommand } from "../../Sources/LiveView/Page/curl.js";

const shells = ["bash", "dash"];
const canary = "canary-secret-contents";
let server, port, received;

before(async () => {
  server = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ method: request.method, url: request.url, headers: request.rawHeaders, body: Buffer.concat(chunks) });
      response.end("ok");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = server.address().port;
});

after(() => server.close());

function run(shell, script, cwd) {
  return new Promise((resolve) => {
    execFile(shell, [script], { cwd, env: { PATH: process.env.PATH, HOME: cwd }, encoding: "buffer", timeout: 20000 },
      (error, stdout, stderr) => resolve({ error, stdout, stderr: stderr.toString() }));
  });
}

const bytes = (text) => new TextEncoder().encode(text);
const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const long = Uint8Array.from({ length: 40000 }, (_, i) => (i * 7919 + (i >> 5)) & 0xff);

// name, captured body bytes
const bodies = [
  ["starts with @ (a file curl would upload)", bytes("@canary")],
  ["is @- (standard input)", bytes("@-")],
  ["starts with <", bytes("<canary")],
  ["starts with - (an option)", bytes("-d @canary --next http://127.0.0.1:1/")],
  ["holds single quotes", bytes("it's 'quoted' '\\'' end'")],
  ["holds $(...)", bytes("$(touch pwned-dollar) ${HOME} $HOME")],
  ["holds backticks", bytes("`touch pwned-backtick`")],
  ["holds newlines", bytes("line one\nline two\n\n'$(touch pwned-newline)'\n")],
  ["holds CR LF", bytes("a=1\r\nb=2\r\n")],
  ["holds printf's own escapes", bytes("%s %d %% \\n \\000 \\\\ %b")],
  ["is JSON", bytes('{"name":"O\'Brien","cmd":"$(id)","list":[1,2]}')],
  ["is not ASCII", bytes("héllo ✓ \u2028 日本")],
  ["holds NUL", Uint8Array.from([0x40, 0x63, 0x00, 0x61, 0x27, 0x00])],
  ["is every byte value", allBytes],
  ["is not UTF-8", Uint8Array.from([0xff, 0xfe, 0x40, 0x41, 0xc3])],
  ["is 40,000 binary bytes (several printf arguments)", long],
];

const hostileHeaders = [
  ["Content-Type", "application/octet-stream"],
  ["X-Quote", "it's"],
  ["X-Dollar", "$(touch pwned-header) `touch pwned-header-bt`"],
  ["X-Empty", ""],
  ["X-At", "@canary"],
  ["Cookie", "a=1; b='2'"],
];

function exchange(body, extra = {}) {
  const headers = [["Host", `127.0.0.1:${port}`], ...hostileHeaders, ["Content-Length", String(body.length)]];
  return {
    protocol: "http/1.1", tls: false,
    record: {
      server: `127.0.0.1:${port}`,
      request: { method: "POST", uri: "/upload?x='1'&y=$(touch${IFS}pwned-url)", version: "HTTP/1.1", headers,
                 body: { size: body.length }, ...extra },
    },
  };
}

// What the server must have received as header fields: the captured ones, then curl's own Host and Content-Length
// (curl puts Host first), compared by lower-cased name in order.
function expectedHeaders(row, bodyLength) {
  const fields = [["host", `127.0.0.1:${port}`]];
  for (const [name, value] of row.record.request.headers) {
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length") continue;
    fields.push([lower, value]);
  }
  if (bodyLength > 0 || row.record.request.method === "POST") fields.push(["content-length", String(bodyLength)]);
  return fields;
}

function pairs(raw) {
  const fields = [];
  for (let i = 0; i < raw.length; i += 2) fields.push([raw[i].toLowerCase(), raw[i + 1]]);
  return fields;
}

function sortHost(fields) {
  // curl sends Host first and Content-Length after the -H fields; compare the rest in order.
  const host = fields.filter(([n]) => n === "host"), length = fields.filter(([n]) => n === "content-length");
  return [...host, ...fields.filter(([n]) => n !== "host" && n !== "content-length"), ...length];
}

async function runEverywhere(row, body, check) {
  const { command, notes } = curlCommand(row, body);
  assert.ok(command, `no command: ${notes}`);
  for (const shell of shells) {
    const folder = mkdtempSync(join(tmpdir(), "w32-curl-"));
    try {
      writeFileSync(join(folder, "canary"), canary);
      writeFileSync(join(folder, "command.sh"), `${command} -sS -o /dev/null\n`);
      received = [];
      const result = await run(shell, join(folder, "command.sh"), folder);
      assert.equal(result.error, null, `${shell}: ${result.stderr}\n${command.slice(0, 500)}`);
      assert.equal(received.length, 1, `${shell}: ${received.length} requests reached the server`);
      check(received[0], shell);
      const left = readdirSync(folder).sort();
      assert.deepEqual(left, ["canary", "command.sh"], `${shell}: the command made files: ${left}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
}

for (const [name, body] of bodies) {
  test(`a body that ${name} reaches the server byte for byte, with the captured header fields`, async () => {
    const row = exchange(body);
    await runEverywhere(row, body, (got, shell) => {
      assert.equal(got.method, "POST", shell);
      assert.equal(got.url, row.record.request.uri, shell);
      assert.deepEqual(Buffer.from(got.body), Buffer.from(body), `${shell}: body differs`);
      assert.ok(!got.body.includes(Buffer.from(canary)), `${shell}: the canary file was sent`);
      assert.deepEqual(sortHost(pairs(got.headers)), expectedHeaders(row, body.length), shell);
    });
  });
}

test("a target with curl's URL pattern and dot segments is asked for as captured", async () => {
  const row = exchange(bytes("x"));
  row.record.request.method = "GET";
  row.record.request.uri = "/a/../b/./[1-2]{x,y}?q=`id`";
  row.record.request.body = { size: 0 };
  row.record.request.headers = [["Host", `127.0.0.1:${port}`], ["Accept", "*/*"], ["User-Agent", "app/1 'x'"]];
  await runEverywhere(row, null, (got, shell) => {
    assert.equal(got.method, "GET", shell);
    assert.equal(got.url, "/a/../b/./[1-2]{x,y}?q=`id`", shell);
    assert.deepEqual(sortHost(pairs(got.headers)),
      [["host", `127.0.0.1:${port}`], ["accept", "*/*"], ["user-agent", "app/1 'x'"]], shell);
  });
});

test("the methods are sent as captured, HEAD among them", async () => {
  for (const method of ["PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]) {
    const body = method === "HEAD" || method === "OPTIONS" ? new Uint8Array() : bytes(`@canary ${method}`);
    const row = exchange(body);
    row.record.request.method = method;
    await runEverywhere(row, body.length ? body : null, (got, shell) => {
      assert.equal(got.method, method, shell);
      assert.deepEqual(Buffer.from(got.body), Buffer.from(body), `${shell} ${method}`);
    });
  }
});

test("bash and dash are there to run the commands", () => {
  for (const shell of shells) assert.ok(["/bin", "/usr/bin"].some((dir) => existsSync(join(dir, shell))), shell);
});
