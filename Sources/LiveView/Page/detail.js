// The detail pane of one exchange: tabs for headers, bodies, timing, connection facts (TLS, QUIC, HTTP/2, HTTP/3,
// gRPC) and WebSocket messages. Everything is built with createElement and textContent.

import { getBytes } from "./api.js";
import { releaseBlobs, renderBody } from "./body.js";
import { curlCommand } from "./curl.js";
import { bytes, clockTime, duration, element, isoTime } from "./format.js";
import { charset, header, mimeType } from "./model.js";

function absent(text = "not captured") { return element("span", "absent", text); }

// A two-column table of facts; a null value is shown as absent, never filled in.
function facts(rows, className = "facts") {
  const table = element("table", className);
  const body = element("tbody");
  for (const [label, value, note] of rows) {
    const tr = element("tr");
    const th = element("th", null, label);
    const td = element("td");
    if (value == null) td.append(absent(note));
    else if (value instanceof Node) td.append(value);
    else if (value === "") td.append(absent("(empty)"));
    else td.textContent = String(value);
    tr.append(th, td);
    body.append(tr);
  }
  table.append(body);
  return table;
}

function headerTable(headers) {
  if (!Array.isArray(headers) || headers.length === 0) return element("p", "absent", "no header fields");
  const table = element("table", "headers");
  const body = element("tbody");
  for (const [name, value] of headers) {
    const tr = element("tr");
    tr.append(element("th", null, name), element("td", null, value));
    body.append(tr);
  }
  table.append(body);
  return table;
}

function section(title, ...content) {
  const box = element("section", "detail-section");
  box.append(element("h3", null, title), ...content);
  return box;
}

// The record's own members as they were sent: booleans, numbers, strings and arrays as JSON text.
function recordFacts(object, labels = {}) {
  return facts(Object.entries(object).filter(([, v]) => typeof v !== "object" || v === null || Array.isArray(v))
    .map(([key, value]) => [labels[key] ?? key, value == null ? null : Array.isArray(value) ? value.join(", ") || "(none)" : String(value),
      value === null ? "none" : undefined]));
}

// A QUIC connection's record (`quic` in --json): its TLS handshake as far as it was read, then each side's
// transport parameters. null is what was not seen, and says which message was missing.
function quicSection(quic) {
  const told = (value) => value == null ? null : String(value);
  const id = (value) => value === "" ? "(empty)" : value;
  const parameters = quic.transport_parameters, ids = quic.connection_ids ?? {};
  return section("QUIC", facts([
    ["Version", quic.version],
    ["Server name (SNI)", quic.server_name, "none sent"],
    [quic.decrypted ? "ALPN chosen" : "ALPN offered", Array.isArray(quic.alpn) ? quic.alpn.join(", ") || null : null, "none"],
    ["Decrypted", told(quic.decrypted)],
    ["Problem", quic.problem, "none"],
    ["Resumption offered", told(quic.resumption_offered), "not seen (no ClientHello read)"],
    ["Resumed", told(quic.resumed), "not seen (no ServerHello read)"],
    ["0-RTT offered", told(quic.early_data_offered), "not seen (no ClientHello read)"],
    ["0-RTT accepted", told(quic.early_data_accepted), "not seen (the EncryptedExtensions was not decrypted)"],
    ["Client's first destination connection ID", id(ids.client_initial_dcid), "not seen"],
    ["Client's source connection ID", id(ids.client_scid), "not seen"],
    ["Server's source connection ID", id(ids.server_scid), "not seen (no long header from the server)"],
  ]), element("h4", null, "Client transport parameters"),
  parameters ? parameterTable(parameters.client) : absent("not seen (no ClientHello read)"),
  element("h4", null, "Server transport parameters"),
  parameters?.server ? parameterTable(parameters.server) : absent("not seen (its Handshake packets were not decrypted)"));
}

// Each parameter as sent, in order: numbers, `true` for a flag, hex, or an object's members.
function parameterTable(parameters) {
  if (!Array.isArray(parameters) || parameters.length === 0) return absent("none sent");
  const shown = (value) => value !== null && typeof value === "object"
    ? Object.entries(value).map(([key, member]) => `${key} ${Array.isArray(member) ? member.join(", ") : member}`).join("; ")
    : String(value);
  return facts(parameters.map((parameter) => [String(parameter.name), shown(parameter.value)]), "facts transport-parameters");
}

export class DetailPane {
  constructor({ pane, tabs, body, close, store, curlDialog }) {
    Object.assign(this, { pane, tabs, body, store, curlDialog });
    this.row = null;
    this.tab = "headers";
    close.addEventListener("click", () => this.show(null));
  }

  show(row) {
    releaseBlobs();
    this.row = row;
    this.pane.hidden = row == null;
    if (row == null) return;
    const tabs = [["headers", "Headers"], ["request", "Request body"], ["response", "Response body"], ["timing", "Timing"],
      ["connection", "Connection"]];
    if (row.type === "websocket") tabs.push(["messages", "Messages"]);
    if (!tabs.some(([key]) => key === this.tab)) this.tab = "headers";
    this.tabs.replaceChildren(...tabs.map(([key, label]) => {
      const button = element("button", key === this.tab ? "tab active" : "tab", label);
      button.type = "button";
      button.dataset.tab = key;
      button.setAttribute("role", "tab");
      button.setAttribute("aria-selected", String(key === this.tab));
      button.addEventListener("click", () => { this.tab = key; this.show(this.row); });
      return button;
    }));
    this.body.replaceChildren(this[this.tab](row));
  }

  headers(row) {
    const record = row.record, request = record.request, response = record.response;
    const box = element("div", "tab-headers");
    const curl = element("button", "copy-curl", "Copy as curl");
    curl.type = "button";
    curl.disabled = request == null;
    curl.addEventListener("click", () => this.copyCurl(row));
    box.append(curl);
    const status = response == null ? null
      : [row.status, response.reason].filter((part) => part != null && part !== "").join(" ");
    box.append(section("General", facts([
      ["Method", row.method, "no request captured"],
      ["Target", request?.uri, "no request captured"],
      ["Host", row.hostHeader, "no Host header sent"],
      ["Status", status, "no response captured"],
      ["Versions", [request?.version, response?.version].filter(Boolean).join(" → ") || null],
      ["Client", record.client],
      ["Server", record.server],
      ["Complete", record.complete === undefined ? null : record.complete ? "yes" : "no: not seen whole"],
      ["Upgrade", record.upgrade_decoded ? "decoded after the 101 (WebSocket messages)" : null, "none"],
    ])));
    if (Array.isArray(record.warnings) && record.warnings.length > 0) {
      const list = element("ul", "warnings");
      for (const warning of record.warnings) list.append(element("li", null, warning));
      box.append(section("Warnings", list));
    }
    box.append(section("Response headers", response ? headerTable(response.headers) : absent("no response captured")));
    box.append(section("Request headers", request ? headerTable(request.headers) : absent("no request captured")));
    return box;
  }

  request(row) { return this.bodyTab(row, "request"); }

  response(row) { return this.bodyTab(row, "response"); }

  bodyTab(row, side) {
    const record = row.record, message = record[side];
    const box = element("div", "tab-body");
    if (message == null) { box.append(absent(`no ${side} captured`)); return box; }
    const kept = record.bodies?.[side];
    const encoding = side === "response" ? message.body?.encoding : null;
    box.append(facts([
      ["Size (decoded)", message.body?.size == null ? null : `${bytes(message.body.size)} (${message.body.size} bytes)`],
      ["SHA-256", message.body?.sha256 || null, "not given by the server"],
      ["Content-Type", header(message.headers, "content-type"), "none sent"],
      ...(side === "response" ? [["Decoded from", encoding?.length ? encoding.join(", ") : null, "no content coding"]] : []),
      ["Kept by the server", kept == null ? null : kept.kept ? `yes (${bytes(kept.size)})` : `no: ${kept.reason ?? "no reason given"}`],
    ]));
    const view = element("div", "body-view");
    box.append(view);
    if ((message.body?.size ?? 0) === 0) { view.append(element("p", "absent", "empty body")); return box; }
    if (kept && !kept.kept) return box;
    view.append(element("p", "loading", "loading…"));
    const shown = this.row;
    getBytes(`api/exchanges/${row.id}/${side}-body`).then((data) => {
      if (this.row !== shown) return;
      view.replaceChildren(renderBody(data, mimeType(message.headers), charset(message.headers)));
      if (kept && kept.size != null && data.length < (message.body?.size ?? 0)) {
        view.prepend(element("p", "note", `Only the first ${bytes(data.length)} of ${bytes(message.body.size)} were kept.`));
      }
    }).catch((error) => {
      if (this.row === shown) view.replaceChildren(element("p", "absent", `Body not available: ${error.message}`));
    });
    return box;
  }

  timing(row) {
    const t = row.record.timing ?? {};
    const start = t.request_start ?? null;
    const since = (value) => value == null ? null : start == null ? isoTime(value) : `${isoTime(value)} (+${duration(value - start)})`;
    return facts([
      ["Request start", since(t.request_start)],
      ["Response start (first byte)", since(t.response_start)],
      ["Response end", since(t.response_end)],
      ["Waiting for the first byte", start != null && t.response_start != null ? duration(t.response_start - start) : null],
      ["Receiving", t.response_start != null && t.response_end != null ? duration(t.response_end - t.response_start) : null],
      ["Total", row.duration == null ? null : duration(row.duration)],
    ]);
  }

  connection(row) {
    const record = row.record;
    const box = element("div", "tab-connection");
    box.append(section("Endpoints", facts([["Client", record.client], ["Server", record.server]])));
    if (row.tls) box.append(section("TLS", recordFacts(row.tls.tls, {
      version: "Version", cipher_suite: "Cipher suite", server_name: "Server name (SNI)", alpn: "ALPN chosen",
      offered_alpn: "ALPN offered", resumed: "Resumed", hello_retry_request: "HelloRetryRequest",
      early_data_offered: "Early data offered", decrypted: "Decrypted", problem: "Problem",
    })));
    else if (row.quic) box.append(quicSection(row.quic.quic));
    else if (record.http3) box.append(section("QUIC", absent("no QUIC connection record seen for this connection")));
    else box.append(section("TLS", absent("no TLS session seen on this connection")));
    if (record.http3) {
      box.append(section("HTTP/3 stream", recordFacts(record.http3, {
        stream: "Stream", push_id: "Push ID", pushed_on: "Pushed on stream", outcome: "Outcome", by: "By",
        error_code: "Error code", error: "Error", goaway_id: "GOAWAY id", header_table_unknown: "Header table unknown",
      })));
    }
    if (record.http2) {
      const outcome = record.http2.outcome;
      box.append(section("HTTP/2 stream", recordFacts(record.http2, {
        stream: "Stream", pushed_on: "Pushed on stream", outcome: "Outcome", by: "By", error_code: "Error code",
        error: "Error", last_stream: "Last stream", header_table_unknown: "Header table unknown",
      }), ...(typeof outcome === "object" && outcome ? [recordFacts(outcome)] : [])));
    }
    if (record.grpc) {
      const grpc = record.grpc;
      box.append(section("gRPC call", recordFacts(grpc, { service: "Service", method: "Method", status: "Status", message: "Message" }),
        this.grpcMessages("Request messages", grpc.request_messages), this.grpcMessages("Response messages", grpc.response_messages)));
    }
    return box;
  }

  grpcMessages(title, messages) {
    const box = element("div", "grpc-messages");
    box.append(element("h4", null, `${title}: ${messages?.count ?? "not counted"}`));
    const listed = messages?.listed ?? [];
    if (listed.length === 0) return box;
    const table = element("table", "list");
    const head = element("tr");
    for (const label of ["#", "Size", "Compressed", "First bytes (hex)"]) head.append(element("th", null, label));
    table.append(head);
    listed.forEach((message, index) => {
      const tr = element("tr");
      tr.append(element("td", null, String(index + 1)), element("td", null, message.size == null ? "" : `${message.size} B`),
        element("td", null, message.compressed == null ? "" : message.compressed ? "yes" : "no"),
        element("td", "mono", message.hex_prefix ?? ""));
      table.append(tr);
    });
    if ((messages.count ?? 0) > listed.length) box.append(element("p", "note", `${messages.count - listed.length} more not listed`));
    box.append(table);
    return box;
  }

  messages(row) {
    const messages = this.store.messagesFor(row);
    if (messages.length === 0) return element("p", "absent", "no WebSocket messages captured");
    const table = element("table", "list ws-messages");
    const head = element("tr");
    for (const label of ["", "Time", "Kind", "Size", "Data"]) head.append(element("th", null, label));
    table.append(head);
    for (const message of messages) {
      const tr = element("tr", message.from === "client" ? "sent" : "received");
      const arrow = element("td", "direction", message.from === "client" ? "↑" : message.from === "server" ? "↓" : "?");
      arrow.title = message.from === "client" ? "client → server" : "server → client";
      let data = message.text ?? "";
      if (message.text_is_partial) data += " …";
      if (message.kind === "close") data = `close ${message.close_code ?? "(no code)"} ${message.close_reason ?? ""}`.trim();
      if (message.text == null && message.kind === "binary") data = message.sha256 ? `binary, sha256 ${message.sha256}` : "binary";
      tr.append(arrow, element("td", null, clockTime(message.ts)), element("td", null, message.kind ?? ""),
        element("td", null, message.size == null ? "" : `${message.size} B`), element("td", "data", data));
      if (Array.isArray(message.warnings) && message.warnings.length) tr.title = message.warnings.join("\n");
      table.append(tr);
    }
    return table;
  }

  async copyCurl(row) {
    let body = null;
    const size = row.record.request?.body?.size ?? 0;
    if (size > 0 && row.record.bodies?.request?.kept !== false) {
      try { body = await getBytes(`api/exchanges/${row.id}/request-body`); } catch { body = null; }
    }
    const { command, notes } = curlCommand(row, body);
    const { dialog, text, note } = this.curlDialog;
    text.value = command ?? "";
    let copied = false;
    if (command != null) {
      try { await navigator.clipboard.writeText(command); copied = true; } catch { copied = false; }
    }
    note.textContent = [copied ? "Copied to the clipboard." : "Select and copy:", ...notes].join(" ");
    dialog.showModal();
    text.select();
  }
}
