// The filter box, as DevTools' Network panel reads it: words separated by spaces all have to match; a word is
// free text (anywhere in method, host, path, status, type, addresses) or `key:value`; a leading `-` negates.
//   host:api.example.com  host:*.example.com   path:/v1  path:*.png   method:POST
//   status:404  status:4xx  status:200-299      type:json (json html js css image font media xml text grpc
//   binary websocket, or part of the Content-Type)   proto:h2  proto:h3  proto:tls  proto:quic
// A word that cannot be read (status:abc) is reported and left out, so the rest still filters.

function glob(pattern) {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "i");
}

// Substring unless the value has a wildcard, then the whole field must match the glob.
function textTest(value, field) {
  const lower = value.toLowerCase();
  if (/[*?]/.test(value)) {
    const re = glob(value);
    return (row) => row[field] != null && re.test(row[field]);
  }
  return (row) => row[field] != null && row[field].toLowerCase().includes(lower);
}

function pathTest(value) {
  // The path without its query for globs (`*.png` matches /a.png?x=1), the whole target for substrings.
  if (/[*?]/.test(value)) {
    const re = glob(value);
    return (row) => row.path != null && re.test(row.path.split("?")[0]);
  }
  const lower = value.toLowerCase();
  return (row) => row.path != null && row.path.toLowerCase().includes(lower);
}

function statusTest(value) {
  const lower = value.toLowerCase();
  let match;
  if ((match = /^([1-5])xx$/.exec(lower))) {
    const digit = match[1];
    return (row) => row.statusCode != null && String(row.statusCode)[0] === digit;
  }
  if ((match = /^(\d{3})-(\d{3})$/.exec(lower))) {
    const low = Number(match[1]), high = Number(match[2]);
    if (low > high) throw new Error(`status range ${value} runs backwards`);
    return (row) => row.statusCode != null && row.statusCode >= low && row.statusCode <= high;
  }
  if (/^\d{1,3}$/.test(lower)) return (row) => row.statusCode === Number(lower);
  if (lower === "none") return (row) => row.status == null;
  throw new Error(`status:${value} is not a code (404), a class (4xx), a range (200-299) or none`);
}

function typeTest(value) {
  const lower = value.toLowerCase();
  return (row) => row.type === lower || (row.mime != null && row.mime.includes(lower));
}

function protocolTest(value) {
  const lower = value.toLowerCase();
  if (lower === "tls") return (row) => row.tls != null;
  if (lower === "quic") return (row) => row.record.http3 != null;
  return (row) => row.protocol != null && row.protocol.toLowerCase() === lower;
}

const keys = {
  host: (value) => textTest(value, "host"),
  domain: (value) => textTest(value, "host"),
  path: pathTest,
  url: pathTest,
  method: (value) => { const upper = value.toUpperCase(); return (row) => row.method != null && row.method.toUpperCase() === upper; },
  status: statusTest,
  type: typeTest,
  proto: protocolTest,
  protocol: protocolTest,
};

function words(text) {
  const found = [];
  const re = /(-?)(?:([a-z]+):)?(?:"([^"]*)"|(\S+))/gi;
  let match;
  while ((match = re.exec(text))) {
    found.push({ negate: match[1] === "-", key: match[2]?.toLowerCase() ?? null, value: match[3] ?? match[4] ?? "" });
  }
  return found;
}

// Returns { test(row) -> Bool, errors: [String], empty: Bool }.
export function parseFilter(text) {
  const tests = [];
  const errors = [];
  for (const word of words(text)) {
    let test;
    if (word.key != null && keys[word.key]) {
      if (word.value === "") continue;  // `status:` while still typing
      try { test = keys[word.key](word.value); } catch (error) { errors.push(error.message); continue; }
    } else {
      const lower = (word.key != null ? `${word.key}:${word.value}` : word.value).toLowerCase();
      if (lower === "") continue;
      test = (row) => row.search.includes(lower);
    }
    tests.push(word.negate ? (row) => !test(row) : test);
  }
  return {
    empty: tests.length === 0,
    errors,
    test: (row) => { for (const test of tests) if (!test(row)) return false; return true; },
  };
}
