// The live view: wires the list, the filter, the detail pane, the timeline and the conditioner to the server.
// Records come through the paged API (what the server already has), then through the live channel from the
// next id on; the store drops a record it already holds, should the two ever overlap.

import { fetchRecords, getJSON, openLive, withToken } from "./api.js";
import { ConditionerPanel } from "./conditioner.js";
import { DetailPane } from "./detail.js";
import { parseFilter } from "./filter.js";
import { bytes } from "./format.js";
import { ExchangeList } from "./list.js";
import { Store } from "./model.js";
import { Timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const store = new Store();
let info = null;
let paused = false;
let held = [];            // rows that arrived while paused
let incoming = [];        // records from the live channel not yet added
let loaded = false;
let ended = false;
let dropped = 0;
let clearedBefore = 0;
let filterText = "";      // the filter the list shows (the box may be ahead of it while typing)

const detail = new DetailPane({
  pane: $("detail"), tabs: $("tabs"), body: $("tab-body"), close: $("close-detail"), store,
  curlDialog: { dialog: $("curl-dialog"), text: $("curl-text"), note: $("curl-note") },
});
const list = new ExchangeList({
  head: $("list-head"), viewport: $("viewport"), spacer: $("spacer"),
  onSelect: (id) => detail.show(store.byId.get(id) ?? null),
});
const timeline = new Timeline($("timeline"), $("timeline-note"), $("switches"));
const conditioner = new ConditionerPanel({
  panel: $("conditioner"), dialog: $("confirm-dialog"), dialogText: $("confirm-text"),
  sourceName: () => info?.name ?? "(unknown)",
  onState: (state) => timeline.setSwitches(state.switches),
});

function showCounts() {
  const shown = list.view.length, total = store.rows.length;
  const noun = total === 1 ? "exchange" : "exchanges";
  let text = shown === total ? `${total} ${noun}` : `${shown} / ${total} ${noun}`;
  if (paused && held.length) text += ` (${held.length} new, paused)`;
  $("counts").textContent = text;
  $("counts").dataset.shown = String(shown);
  $("counts").dataset.total = String(total);
  $("counts").dataset.filter = filterText;
}

function showStatus() {
  const parts = [];
  if (info) {
    parts.push(`${info.source === "file" ? "File" : info.source === "command" ? "Command" : "Interface"} ${info.name}`);
    if (info.bodyLimit != null) parts.push(`bodies kept up to ${bytes(info.bodyLimit)} each, ${bytes(info.sessionLimit)} in all`);
  }
  if (dropped > 0) parts.push(`${dropped} older exchanges no longer held by the server (session limit)`);
  if (disconnected) parts.push("live updates lost: reconnecting");
  parts.push(!loaded ? "loading…" : ended ? (info?.source === "file" ? "file read to the end" : "capture ended") : "live");
  if (paused) parts.push("paused");
  $("status").textContent = parts.join(" · ");
  document.body.dataset.state = !loaded ? "loading" : ended ? "ended" : "live";
}

function flush() {
  const rows = [];
  for (const record of incoming) {
    const row = store.add(record);
    if (row) rows.push(row);
  }
  incoming = [];
  if (paused) held.push(...rows); else list.added(rows);
  showCounts();
}

let flushTimer = null;
function receive(message) {
  if (message.type === "exchange" && message.exchange) {
    incoming.push(message.exchange);
    if (loaded && flushTimer == null) flushTimer = setTimeout(() => { flushTimer = null; flush(); }, 50);
  } else if (message.type === "throughput") timeline.add(message.t, message.up, message.down);
  else if (message.type === "conditioner") conditioner.update(message.state ?? message);
  else if (message.type === "end") { ended = true; showStatus(); }
}

let retry = 0;
let disconnected = false;
function connect() {
  // From the first record not yet held: what the paged API gave is not sent again.
  openLive(store.nextId, receive, () => {
    if (ended) return;
    disconnected = true;
    showStatus();
    // The channel dropped: listen again from where it stopped, a little later each time.
    retry = Math.min(retry + 1, 5);
    setTimeout(connect, 1000 * retry);
  }, () => {
    if (disconnected) { disconnected = false; retry = 0; showStatus(); }
  });
}

function applyFilter() {
  filterText = $("filter").value;
  const filter = parseFilter(filterText);
  $("filter").classList.toggle("invalid", filter.errors.length > 0);
  $("filter").title = filter.errors.join("\n");
  list.setFilter(filter);
  showCounts();
}

let filterTimer = null;
$("filter").addEventListener("input", () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(applyFilter, 60);
});
$("pause").addEventListener("click", () => {
  paused = !paused;
  $("pause").setAttribute("aria-pressed", String(paused));
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused) { list.added(held); held = []; }
  showCounts();
  showStatus();
});
$("clear").addEventListener("click", () => {
  clearedBefore = store.nextId;
  // The HAR then holds what the list shows from here on, as DevTools' export after a clear.
  $("har").href = withToken(`api/har?since=${clearedBefore}`);
  held = [];
  store.clear();
  list.setSource(store.rows);
  detail.show(null);
  showCounts();
  showStatus();
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !$("detail").hidden && !document.querySelector("dialog[open]")) detail.show(null);
  if (event.key === "/" && document.activeElement !== $("filter")) { event.preventDefault(); $("filter").focus(); }
});
$("har").href = withToken("api/har");

async function start() {
  showStatus();
  try { info = await getJSON("api/info"); } catch (error) { $("status").textContent = `The server did not answer: ${error.message}`; return; }
  $("source").textContent = info.name ?? "";
  list.follow = info.source !== "file";
  ended = info.ended === true;
  document.title = `TapKit: ${info.name ?? "live view"}`;
  conditioner.load();
  getJSON("api/throughput").then((history) => timeline.load(history)).catch(() => timeline.schedule());
  // Rows are shown page by page as they arrive, so a large capture is browsable while the rest loads.
  await fetchRecords(0, (page) => {
    const rows = [];
    for (const record of page.exchanges ?? []) {
      const row = store.add(record);
      if (row) rows.push(row);
    }
    dropped = Math.max(dropped, page.dropped ?? 0);
    list.added(rows);
    showCounts();
  });
  loaded = true;
  connect();
  showCounts();
  showStatus();
}

start();
