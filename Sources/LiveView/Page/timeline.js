// Throughput per direction over time, drawn on a canvas: bytes per bucket client → server above the axis and
// server → client below it, with each conditioner switch marked where it happened.

import { bytes, clockTime, element } from "./format.js";

export class Timeline {
  constructor(canvas, note, switchList) {
    this.canvas = canvas;
    this.note = note;
    this.switchList = switchList;  // the switches as text too: a canvas says nothing to a screen reader or a test
    this.bucket = 1;
    this.start = null;
    this.up = [];
    this.down = [];
    this.switches = [];
    this.scheduled = false;
    new ResizeObserver(() => this.schedule()).observe(canvas);
  }

  // The server's history: { bucket, start, up: [...], down: [...] }.
  load(history) {
    this.bucket = history.bucket > 0 ? history.bucket : 1;
    this.start = history.start ?? null;
    this.up = (history.up ?? []).slice();
    this.down = (history.down ?? []).slice();
    this.schedule();
  }

  // One closed bucket from the live channel.
  add(t, up, down) {
    if (this.start == null) this.start = t;
    const index = Math.max(0, Math.round((t - this.start) / this.bucket));
    while (this.up.length <= index) { this.up.push(0); this.down.push(0); }
    this.up[index] = up;
    this.down[index] = down;
    this.schedule();
  }

  setSwitches(switches) {
    this.switches = switches ?? [];
    this.switchList.replaceChildren(...this.switches.map((change) => {
      const item = element("li", null, `${clockTime(change.t)} ${change.profile ?? "off"}`);
      item.dataset.profile = change.profile ?? "";
      return item;
    }));
    this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => { this.scheduled = false; this.draw(); });
  }

  draw() {
    const canvas = this.canvas, ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth, height = canvas.clientHeight;
    if (width === 0 || height === 0) return;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const style = getComputedStyle(canvas);
    const colour = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    const middle = Math.round(height / 2) + 0.5;
    g.strokeStyle = colour("--axis", "#999");
    g.beginPath(); g.moveTo(0, middle); g.lineTo(width, middle); g.stroke();
    const count = this.up.length;
    const lastSwitch = this.switches.length ? this.switches[this.switches.length - 1].t : null;
    if (this.start == null && lastSwitch == null) { this.note.textContent = "no traffic yet"; return; }
    const start = this.start ?? this.switches[0].t;
    const end = Math.max(start + Math.max(count, 1) * this.bucket, lastSwitch ?? 0);
    const x = (t) => ((t - start) / (end - start)) * (width - 2) + 1;
    const peak = Math.max(1, ...this.up, ...this.down);
    const half = middle - 4;
    const bar = (values, sign, fill) => {
      g.fillStyle = fill;
      values.forEach((value, i) => {
        if (!value) return;
        const left = x(start + i * this.bucket), right = x(start + (i + 1) * this.bucket);
        const h = Math.max(1, (value / peak) * half);
        g.fillRect(left, sign < 0 ? middle - h : middle, Math.max(1, right - left - 0.5), h);
      });
    };
    bar(this.up, -1, colour("--up", "#3b7dd8"));
    bar(this.down, 1, colour("--down", "#2e9d5b"));
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "top";
    for (const [index, change] of this.switches.entries()) {
      const at = Math.round(x(change.t)) + 0.5;
      g.strokeStyle = colour("--switch", "#d2691e");
      g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(at, 0); g.lineTo(at, height); g.stroke();
      g.setLineDash([]);
      g.fillStyle = colour("--switch", "#d2691e");
      g.fillText(change.profile ?? "off", Math.min(at + 3, width - 60), 2 + (index % 3) * 12);  // staggered: switches close together
    }
    this.note.textContent = `${clockTime(start)} – ${clockTime(end)}, ${this.bucket} s buckets, peak ${bytes(peak)} per bucket`;
  }
}
