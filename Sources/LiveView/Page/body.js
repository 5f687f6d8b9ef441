// A body as the page shows it: JSON as a tree, raster images as a picture, HTML and SVG as source (or in a frame
// that runs no script), other text as text, anything else as hex. Captured bytes only ever reach the page as text
// nodes, a blob URL of a raster image type in an <img>, or the srcdoc of a sandboxed frame: never as markup of this
// page, and never as a URL of an active type (HTML, SVG, XML) at this page's origin, which a user could open in a
// new tab ("Open image in new tab") where the sandbox and <img>'s no-script rule no longer hold.

import { bytes as formatBytes, element } from "./format.js";
import { parseJSON, renderJSONTree } from "./jsontree.js";
import { typeOf } from "./model.js";

const hexShown = 64 * 1024;      // a hex view starts with this many bytes; "show all" renders the rest
const textShown = 1024 * 1024;
const urls = [];                 // blob URLs of the body on screen, revoked when the next one is shown

export function releaseBlobs() { while (urls.length) URL.revokeObjectURL(urls.pop()); }

function blobURL(bytes, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  urls.push(url);
  return url;
}

function decode(bytes, charset) {
  try { return new TextDecoder(charset ?? "utf-8").decode(bytes); } catch { return new TextDecoder("utf-8").decode(bytes); }
}

// Text when it decodes as UTF-8 and has no control characters but whitespace.
function looksLikeText(bytes) {
  const sample = bytes.subarray(0, 4096);
  try { new TextDecoder("utf-8", { fatal: true }).decode(sample.length < bytes.length ? trimPartial(sample) : sample); } catch { return false; }
  for (const b of sample) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return false;
  return true;
}

// A sample may end inside a UTF-8 sequence; drop up to three trailing bytes of one.
function trimPartial(sample) {
  let end = sample.length;
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = sample[end - back];
    if ((b & 0xc0) === 0xc0) return sample.subarray(0, end - back);
    if ((b & 0xc0) !== 0x80) break;
  }
  return sample;
}

export function hexDump(bytes, start = 0, end = bytes.length) {
  const lines = [];
  for (let offset = start; offset < end; offset += 16) {
    const chunk = bytes.subarray(offset, Math.min(offset + 16, end));
    let hex = "", ascii = "";
    for (let i = 0; i < 16; i++) {
      if (i < chunk.length) {
        hex += chunk[i].toString(16).padStart(2, "0") + (i === 7 ? "  " : " ");
        ascii += chunk[i] >= 0x20 && chunk[i] < 0x7f ? String.fromCharCode(chunk[i]) : ".";
      } else hex += i === 7 ? "    " : "   ";
    }
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex} ${ascii}`);
  }
  return lines.join("\n");
}

function hexView(bytes) {
  const box = element("div", "body-hex");
  const pre = element("pre", "hex", hexDump(bytes, 0, Math.min(bytes.length, hexShown)));
  box.append(pre);
  if (bytes.length > hexShown) {
    const more = element("button", "more", `Show all ${formatBytes(bytes.length)}`);
    more.type = "button";
    more.addEventListener("click", () => { pre.textContent = hexDump(bytes); more.remove(); });
    box.append(more);
  }
  return box;
}

function textView(text, className = "text") {
  const box = element("div", "body-text");
  const pre = element("pre", className, text.length > textShown ? text.slice(0, textShown) : text);
  box.append(pre);
  if (text.length > textShown) {
    const more = element("button", "more", `Show all ${text.length.toLocaleString()} characters`);
    more.type = "button";
    more.addEventListener("click", () => { pre.textContent = text; more.remove(); });
    box.append(more);
  }
  return box;
}

// Image types a browser draws without running anything, with the type their blob is made with: never the
// captured Content-Type string itself.
const rasterTypes = new Map([
  ["image/png", "image/png"], ["image/apng", "image/apng"], ["image/jpeg", "image/jpeg"], ["image/jpg", "image/jpeg"],
  ["image/pjpeg", "image/jpeg"], ["image/gif", "image/gif"], ["image/webp", "image/webp"], ["image/avif", "image/avif"],
  ["image/bmp", "image/bmp"], ["image/x-icon", "image/x-icon"], ["image/vnd.microsoft.icon", "image/x-icon"],
]);

// Markup that can hold script: rendered only on request, in the sandboxed frame.
const activeTypes = new Set(["image/svg+xml"]);

function imageView(bytes, mime) {
  const box = element("div", "body-image");
  const image = element("img", "preview");
  image.alt = `${mime} body`;
  const facts = element("p", "facts", `${mime}, ${formatBytes(bytes.length)}`);
  image.addEventListener("load", () => { facts.textContent = `${mime}, ${image.naturalWidth} × ${image.naturalHeight}, ${formatBytes(bytes.length)}`; });
  image.addEventListener("error", () => { facts.textContent = `${mime}, ${formatBytes(bytes.length)}: the browser cannot draw it; hex below`; box.append(hexView(bytes)); });
  image.src = blobURL(bytes, rasterTypes.get(mime));
  box.append(image, facts);
  return box;
}

// Source by default; "Render" puts it in a frame with the sandbox attribute and no allow-scripts, so nothing in
// it runs, and with an opaque origin, so it cannot reach this page or its token. The frame's document is its
// srcdoc, not a blob URL: a blob URL is of this page's origin, and opened in a tab of its own it would run.
function markupView(text, label) {
  const box = element("div", "body-html");
  const renderLabel = `Render ${label} (sandboxed, scripts off)`;
  const toggle = element("button", "render", renderLabel);
  toggle.type = "button";
  const source = textView(text, "text html-source");
  let frame = null;
  toggle.addEventListener("click", () => {
    if (frame) { frame.remove(); frame = null; source.hidden = false; toggle.textContent = renderLabel; return; }
    frame = element("iframe", "html-frame");
    frame.setAttribute("sandbox", "");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.srcdoc = text;
    source.hidden = true;
    toggle.textContent = "Show source";
    box.append(frame);
  });
  box.append(toggle, source);
  return box;
}

// Returns an element showing `bytes`, chosen by the Content-Type's type (or the bytes when there is none).
export function renderBody(bytes, mime, charset) {
  if (bytes.length === 0) return element("p", "absent", "empty body");
  const type = typeOf(mime);
  if (rasterTypes.has(mime)) return imageView(bytes, mime);
  const active = activeTypes.has(mime);
  const textual = active || type === "json" || type === "html" || type === "js" || type === "css" || type === "xml" || type === "text";
  if (!textual && (type != null || !looksLikeText(bytes))) return hexView(bytes);
  const text = decode(bytes, charset);
  if (type === "html") return markupView(text, "HTML");
  if (active) return markupView(text, "SVG");
  if (type === "json" || type == null) {
    try {
      return renderJSONTree(parseJSON(text));
    } catch (error) {
      if (type === "json") {
        const box = element("div");
        box.append(element("p", "note", `Not valid JSON (${error.message}); shown as text.`), textView(text));
        return box;
      }
    }
  }
  return textView(text);
}
