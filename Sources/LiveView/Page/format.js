// Numbers and times in words, one place for every view.

export function clockTime(seconds) {
  if (seconds == null) return "";
  const date = new Date(seconds * 1000);
  const pad = (n, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function isoTime(seconds) {
  if (seconds == null) return "";
  // Microseconds as captured (toISOString stops at milliseconds).
  const micros = Math.round((seconds % 1) * 1e6);
  return new Date(Math.floor(seconds) * 1000).toISOString().replace(".000Z", `.${String(micros).padStart(6, "0")}Z`);
}

export function duration(seconds) {
  if (seconds == null) return "";
  if (seconds < 0.001) return `${(seconds * 1e6).toFixed(0)} µs`;
  if (seconds < 1) return `${(seconds * 1000).toFixed(1)} ms`;
  return `${seconds.toFixed(2)} s`;
}

// Powers of 1000, as the command line prints sizes.
export function bytes(count) {
  if (count == null) return "";
  if (count < 1000) return `${count} B`;
  const units = ["KB", "MB", "GB", "TB"];  // the command line's spelling
  let value = count / 1000, unit = 0;
  while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text != null) node.textContent = text;
  return node;
}
