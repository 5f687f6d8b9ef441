// The exchange list: a virtualised grid. Only the rows in sight exist as elements (a pool reused on scroll), so
// 100,000 exchanges cost one array of rows, not 100,000 × 9 DOM nodes; filtering and sorting work on that array.

import { bytes, clockTime, duration, element } from "./format.js";

const rowHeight = 22;  // px; style.css's .row height must agree

const columns = [
  { key: "start", label: "Time", text: (row) => clockTime(row.start), sort: (row) => row.start },
  { key: "method", label: "Method", text: (row) => row.method, sort: (row) => row.method },
  { key: "host", label: "Host", text: (row) => row.host, sort: (row) => row.host?.toLowerCase(),
    absent: (row) => row.hostHeader == null ? "no Host header: the server's address" : null },
  { key: "path", label: "Path", text: (row) => row.path, sort: (row) => row.path },
  { key: "status", label: "Status", text: (row) => row.status ?? "no response", sort: (row) => row.statusCode ?? row.status,
    absent: (row) => row.status == null ? "no response was captured" : null },
  { key: "protocol", label: "Protocol", text: (row) => row.protocolLabel, sort: (row) => row.protocolLabel },
  { key: "size", label: "Size", text: (row) => bytes(row.size), sort: (row) => row.size,
    title: "Decoded response body (de-chunked, decompressed)" },
  { key: "duration", label: "Duration", text: (row) => duration(row.duration), sort: (row) => row.duration,
    title: "Request's first byte to the response's last byte" },
  { key: "waterfall", label: "Waterfall", text: null, sort: (row) => row.start },
];

function compare(a, b) {
  if (a == null) return b == null ? 0 : 1;  // absent values last whichever the direction
  if (b == null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ExchangeList {
  constructor({ head, viewport, spacer, onSelect }) {
    this.head = head;
    this.viewport = viewport;
    this.spacer = spacer;
    this.onSelect = onSelect;
    this.source = [];
    this.view = [];
    this.filter = null;
    this.sortKey = null;   // null: arrival order
    this.descending = false;
    this.selected = null;
    this.pool = [];
    this.scale = { start: 0, span: 1 };
    this.scheduled = false;
    this.follow = true;    // keep the newest row in sight when the list was scrolled to its end (not for a file)
    this.buildHead();
    viewport.addEventListener("scroll", () => this.schedule());
    new ResizeObserver(() => this.schedule()).observe(viewport);
    viewport.addEventListener("click", (event) => {
      const rowElement = event.target.closest(".row");
      if (rowElement && rowElement.dataset.id !== undefined) this.select(Number(rowElement.dataset.id));
    });
    viewport.addEventListener("keydown", (event) => this.key(event));
  }

  buildHead() {
    for (const column of columns) {
      const cell = element("button", `cell ${column.key}`, column.label);
      cell.type = "button";
      cell.dataset.key = column.key;
      if (column.title) cell.title = column.title;
      cell.addEventListener("click", () => this.sortBy(column.key));
      this.head.append(cell);
    }
  }

  sortBy(key) {
    if (this.sortKey === key) {
      if (this.descending) { this.sortKey = null; this.descending = false; } else this.descending = true;
    } else { this.sortKey = key; this.descending = false; }
    for (const cell of this.head.children) {
      cell.classList.toggle("sorted", cell.dataset.key === this.sortKey);
      cell.classList.toggle("descending", cell.dataset.key === this.sortKey && this.descending);
      cell.setAttribute("aria-sort", cell.dataset.key !== this.sortKey ? "none" : this.descending ? "descending" : "ascending");
    }
    this.refresh();
  }

  // The list keeps its own array: rows held back while paused are in the store but not here yet.
  setSource(rows) { this.source = rows.slice(); this.refresh(); }

  // A new filter starts at the top of its rows, as a new search does.
  setFilter(filter) { this.filter = filter; this.refresh(); this.viewport.scrollTop = 0; this.schedule(); }

  // Rebuilds the view from the source: filter, then sort.
  refresh() {
    const test = this.filter && !this.filter.empty ? this.filter.test : null;
    this.view = test ? this.source.filter(test) : this.source.slice();
    this.sort();
    this.rescale();
    this.layout();
  }

  sort() {
    if (this.sortKey == null) return;
    const column = columns.find((c) => c.key === this.sortKey);
    const sign = this.descending ? -1 : 1;
    const keyed = this.view.map((row) => [column.sort(row), row]);
    keyed.sort((a, b) => {
      const order = compare(a[0], b[0]);
      if (order !== 0) return (a[0] == null || b[0] == null) ? order : sign * order;
      return a[1].id - b[1].id;
    });
    this.view = keyed.map((pair) => pair[1]);
  }

  // New rows from the live channel: in arrival order they are appended, otherwise the view is sorted again.
  added(rows) {
    const atBottom = this.viewport.scrollTop + this.viewport.clientHeight >= this.viewport.scrollHeight - rowHeight;
    for (const row of rows) this.source.push(row);
    const test = this.filter && !this.filter.empty ? this.filter.test : null;
    const shown = test ? rows.filter(test) : rows;
    if (shown.length === 0) return;
    for (const row of shown) this.view.push(row);
    this.sort();
    this.rescale();
    this.layout();
    if (this.follow && atBottom && this.sortKey == null) this.viewport.scrollTop = this.viewport.scrollHeight;
  }

  // The waterfall spans the first start to the last end of the rows shown.
  rescale() {
    let start = Infinity, end = -Infinity;
    for (const row of this.view) {
      if (row.start != null && row.start < start) start = row.start;
      const last = row.end ?? row.firstByte ?? row.start;
      if (last != null && last > end) end = last;
    }
    this.scale = Number.isFinite(start) ? { start, span: Math.max(end - start, 1e-6) } : { start: 0, span: 1 };
  }

  layout() {
    this.spacer.style.height = `${this.view.length * rowHeight}px`;
    this.schedule(true);
  }

  schedule(now = false) {
    if (now) { this.render(); return; }
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => { this.scheduled = false; this.render(); });
  }

  render() {
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / rowHeight));
    const count = Math.ceil(this.viewport.clientHeight / rowHeight) + 2;
    while (this.pool.length < count) {
      const rowElement = element("div", "row");
      rowElement.setAttribute("role", "row");
      for (const column of columns) {
        const cell = element("div", `cell ${column.key}`);
        if (column.key === "waterfall") {
          const wait = element("span", "bar wait"), receive = element("span", "bar receive");
          cell.append(wait, receive);
        }
        rowElement.append(cell);
      }
      this.spacer.append(rowElement);
      this.pool.push(rowElement);
    }
    for (let i = 0; i < this.pool.length; i++) {
      const rowElement = this.pool[i];
      const index = first + i;
      const row = index < this.view.length && i < count ? this.view[index] : null;
      if (row == null) { rowElement.hidden = true; continue; }
      rowElement.hidden = false;
      rowElement.style.transform = `translateY(${index * rowHeight}px)`;
      rowElement.dataset.id = String(row.id);
      rowElement.dataset.index = String(index);
      rowElement.classList.toggle("selected", row.id === this.selected);
      rowElement.classList.toggle("failed", row.statusCode != null && row.statusCode >= 400);
      rowElement.classList.toggle("incomplete", !row.complete);
      rowElement.classList.toggle("warned", row.warned);
      this.fill(rowElement, row);
    }
  }

  fill(rowElement, row) {
    const cells = rowElement.children;
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c], cell = cells[c];
      if (column.key === "waterfall") { this.bar(cell, row); continue; }
      const text = column.text(row);
      const absent = column.absent?.(row) ?? (text == null || text === "" ? "not captured" : null);
      cell.textContent = text ?? "";
      cell.classList.toggle("absent", absent != null);
      cell.title = absent ?? text ?? "";
    }
  }

  bar(cell, row) {
    const [wait, receive] = cell.children;
    const { start, span } = this.scale;
    const position = (t) => `${(((t - start) / span) * 100).toFixed(3)}%`;
    const width = (a, b) => `${Math.max(((b - a) / span) * 100, 0.15).toFixed(3)}%`;
    wait.hidden = row.start == null;
    receive.hidden = row.firstByte == null;
    if (row.start != null) {
      const waitEnd = row.firstByte ?? row.end ?? row.start;
      wait.style.left = position(row.start);
      wait.style.width = width(row.start, waitEnd);
    }
    if (row.firstByte != null) {
      const end = row.end ?? row.firstByte;
      receive.style.left = position(row.firstByte);
      receive.style.width = width(row.firstByte, end);
    }
    cell.title = row.start == null ? "no times captured"
      : `start ${clockTime(row.start)}, first byte ${row.firstByte == null ? "not captured" : duration(row.firstByte - row.start)}, end ${row.end == null ? "not captured" : duration(row.end - row.start)}`;
  }

  select(id) {
    this.selected = id;
    this.render();
    this.onSelect(id);
  }

  key(event) {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    event.preventDefault();
    let index = this.view.findIndex((row) => row.id === this.selected);
    index = event.key === "ArrowDown" ? Math.min(this.view.length - 1, index + 1) : Math.max(0, index - 1);
    if (index < 0 || index >= this.view.length) return;
    const top = index * rowHeight;
    if (top < this.viewport.scrollTop) this.viewport.scrollTop = top;
    else if (top + rowHeight > this.viewport.scrollTop + this.viewport.clientHeight) {
      this.viewport.scrollTop = top + rowHeight - this.viewport.clientHeight;
    }
    this.select(this.view[index].id);
  }
}
