// Talks to capture --ui's server (the contract: docs/liveview.md, "API"). Every request carries
// the token the printed URL gave this page: the server refuses anything without it.

const token = new URLSearchParams(location.search).get("token") ?? "";

export function withToken(path) {
  const url = new URL(path, location.href);
  if (token) url.searchParams.set("token", token);
  return url.pathname + url.search;
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
  } catch { /* not JSON: the status line says enough */ }
  const error = new Error(message);
  error.status = response.status;
  return error;
}

export async function getJSON(path) {
  const response = await fetch(path, { headers: { "X-TapKit-Token": token }, cache: "no-store" });
  if (!response.ok) throw await failure(response);
  return response.json();
}

export async function getBytes(path) {
  const response = await fetch(path, { headers: { "X-TapKit-Token": token }, cache: "no-store" });
  if (!response.ok) throw await failure(response);
  return new Uint8Array(await response.arrayBuffer());
}

export async function postJSON(path, value) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "X-TapKit-Token": token, "Content-Type": "application/json" },
    body: JSON.stringify(value),
  });
  if (!response.ok) throw await failure(response);
  return response.json();
}

// Every record the server has, from id `since` on, page by page (the server sends at most a few thousand a call).
export async function fetchRecords(since, onPage) {
  let next = since;
  for (;;) {
    const page = await getJSON(`api/exchanges?since=${next}`);
    onPage(page);
    if (!page.exchanges || page.exchanges.length === 0 || page.next === next) return page.next ?? next;
    next = page.next;
  }
}

// The live channel from record id `since` on: one JSON object per text frame. Reconnects are the caller's business.
export function openLive(since, onMessage, onClose, onOpen = () => {}) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(`${scheme}//${location.host}${withToken(`api/live?since=${since}`)}`);
  socket.addEventListener("message", (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    onMessage(message);
  });
  socket.addEventListener("open", () => onOpen());
  socket.addEventListener("close", () => onClose());
  return socket;
}
