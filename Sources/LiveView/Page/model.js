// The records the server sends, as `capture --http --json` writes them (docs/http.md), and the row facts the list
// sorts and filters on, worked out once per record. A field the record does not have stays absent (null): the
// page shows what was sent, never a value made up to fill a column.

export function header(headers, name) {
  if (!Array.isArray(headers)) return null;
  const wanted = name.toLowerCase();
  for (const [key, value] of headers) if (String(key).toLowerCase() === wanted) return value;
  return null;
}

export function connectionKey(record) { return `${record.client}|${record.server}`; }

export function mimeType(headers) {
  const value = header(headers, "content-type");
  if (value == null) return null;
  return value.split(";")[0].trim().toLowerCase();
}

export function charset(headers) {
  const value = header(headers, "content-type");
  const match = value == null ? null : /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(value);
  return match ? match[1].toLowerCase() : null;
}

// The kind of body, for `type:` and for choosing a body view.
export function typeOf(mime) {
  if (mime == null) return null;
  if (mime === "application/json" || mime.endsWith("+json") || mime === "text/json") return "json";
  if (mime.startsWith("application/grpc")) return "grpc";
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime.includes("javascript") || mime === "text/ecmascript") return "js";
  if (mime === "text/css") return "css";
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("font/") || mime.includes("font")) return "font";
  if (mime.startsWith("audio/") || mime.startsWith("video/")) return "media";
  if (mime.endsWith("xml")) return "xml";
  if (mime.startsWith("text/") || mime === "application/x-www-form-urlencoded") return "text";
  return "binary";
}

function protocolOf(record) {
  if (record.http2) return "h2";
  if (record.http3) return "h3";
  const version = record.request?.version ?? record.response?.version;
  if (version == null) return null;
  const match = /^HTTP\/(\d(?:\.\d)?)$/i.exec(version);
  if (!match) return version;
  return match[1] === "2.0" || match[1] === "2" ? "h2" : `http/${match[1]}`;  // as DevTools names them
}

export function statusText(response) {
  if (response == null) return null;
  if (typeof response.status_text === "string" && response.status_text !== "") return response.status_text;
  if (typeof response.status === "number") return String(response.status);
  return response.version === "HTTP/0.9" ? "(no status line)" : "(no status code)";
}

export function hostOf(record) {
  const headers = record.request?.headers;
  return header(headers, "host") ?? header(headers, ":authority");
}

// One row of the list. Sort keys are numbers or lower-case strings; `search` is what free text matches.
export class Row {
  constructor(record) {
    this.id = record.id;
    this.record = record;
    const request = record.request ?? null, response = record.response ?? null;
    const timing = record.timing ?? {};
    this.start = timing.request_start ?? timing.response_start ?? record.ts ?? null;
    this.firstByte = timing.response_start ?? null;
    this.end = timing.response_end ?? null;
    this.duration = this.start != null && this.end != null ? Math.max(0, this.end - this.start) : null;
    this.method = request?.method ?? null;
    this.hostHeader = hostOf(record);
    this.host = this.hostHeader ?? record.server ?? null;  // the server's address when no Host was sent, as the CLI shows it
    this.path = request?.uri ?? null;
    this.status = statusText(response);
    this.statusCode = typeof response?.status === "number" ? response.status : null;
    this.mime = mimeType(response?.headers);
    this.type = record.response?.status === 101 && /websocket/i.test(header(response.headers, "upgrade") ?? "")
      ? "websocket" : typeOf(this.mime);
    this.protocol = protocolOf(record);
    this.size = typeof response?.body?.size === "number" ? response.body.size : null;
    this.tls = null;
    this.quic = null;  // the QUIC connection's record (HTTP/3), when the server sent one
    this.complete = record.complete !== false;
    this.warned = Array.isArray(record.warnings) && record.warnings.length > 0;
    if (record.not_http) {  // a connection's bytes that made no exchange: a row of its own, as the CLI's line
      const total = (record.not_http.client_bytes ?? 0) + (record.not_http.server_bytes ?? 0);
      this.status = `${total} bytes not parsed as HTTP (${record.not_http.client_bytes} from the client, ${record.not_http.server_bytes} from the server)`;
      this.complete = false;
      this.warned = true;
    }
    this.search = [this.method, this.host, this.path, this.status, this.mime, record.client, record.server]
      .filter((part) => part != null).join(" ").toLowerCase();
  }

  get protocolLabel() {
    if (this.protocol == null) return this.tls ? "TLS" : null;
    return this.tls ? `${this.protocol} TLS` : this.protocol;
  }
}

// Everything received so far: exchanges as rows, TLS and QUIC connection records and WebSocket messages joined to
// the connection (client, server) they belong to.
export class Store {
  constructor() {
    this.rows = [];
    this.byId = new Map();
    this.tls = new Map();         // connection -> [tls record], in time order
    this.quic = new Map();        // connection -> [quic record], in time order
    this.messages = new Map();    // connection -> [websocket record]
    this.rowsByConnection = new Map();
    this.seenIds = new Set();     // the live channel and the paged fetch may both deliver a record
    this.nextId = 0;
    this.minStart = Infinity;
    this.maxEnd = -Infinity;
  }

  // Returns the new Row for an exchange, null for other records (and for a record already held).
  add(record) {
    if (typeof record.id === "number") {
      if (this.seenIds.has(record.id)) return null;
      this.seenIds.add(record.id);
      this.nextId = Math.max(this.nextId, record.id + 1);
    }
    const key = connectionKey(record);
    if (record.tls && record.timing === undefined) {  // a TLS connection record, as --json prints it
      push(this.tls, key, record);
      for (const row of this.rowsByConnection.get(key) ?? []) if (!row.record.tls) row.tls = this.tlsFor(row);
      return null;
    }
    if (record.quic && record.timing === undefined) {  // a QUIC connection record, as --json prints it
      push(this.quic, key, record);
      for (const row of this.rowsByConnection.get(key) ?? []) if (!row.record.quic) row.quic = this.quicFor(row);
      return null;
    }
    if (record.type === "websocket") { push(this.messages, key, record); return null; }
    if (record.type !== undefined) return null;  // a record kind this page does not know: not an exchange
    const row = new Row(record);
    // The server may give the connection's TLS record inside the exchange; otherwise it came as a record of its own.
    row.tls = record.tls?.tls ? record.tls : this.tlsFor(row);
    row.quic = record.quic?.quic ? record.quic : this.quicFor(row);
    this.rows.push(row);
    if (typeof record.id === "number") this.byId.set(record.id, row);
    push(this.rowsByConnection, key, row);
    if (row.start != null) this.minStart = Math.min(this.minStart, row.start);
    const last = row.end ?? row.firstByte ?? row.start;
    if (last != null) this.maxEnd = Math.max(this.maxEnd, last);
    return row;
  }

  // The TLS session of a row's connection: the latest one that began before the exchange (a port used again
  // later is another connection).
  tlsFor(row) { return this.sessionFor(this.tls, row); }

  // The QUIC connection of a row, chosen as for TLS.
  quicFor(row) { return this.sessionFor(this.quic, row); }

  sessionFor(map, row) {
    const sessions = map.get(connectionKey(row.record));
    if (!sessions) return null;
    let found = null;
    for (const session of sessions) if (row.start == null || session.ts == null || session.ts <= row.start) found = session;
    return found ?? sessions[0];
  }

  // WebSocket messages of an upgraded exchange: those on its connection after its response.
  messagesFor(row) {
    const all = this.messages.get(connectionKey(row.record)) ?? [];
    const after = row.firstByte ?? row.start;
    return all.filter((message) => after == null || message.ts == null || message.ts >= after);
  }

  // Clear empties the list; TLS sessions, QUIC connections and WebSocket messages stay, as their connections may go on.
  clear() {
    this.rows = [];
    this.byId.clear();
    this.rowsByConnection.clear();
    this.minStart = Infinity;
    this.maxEnd = -Infinity;
  }
}

function push(map, key, value) {
  const list = map.get(key);
  if (list) list.push(value); else map.set(key, [value]);
}
