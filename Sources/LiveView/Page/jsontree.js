// JSON bodies as a collapsible tree. The body is parsed here rather than with JSON.parse, because JSON.parse
// reorders integer-like keys, drops duplicate keys and rounds big numbers: the tree shows what was sent, in the
// order sent, numbers as written.

import { element } from "./format.js";

const maxDepth = 512;

class Parser {
  constructor(text) { this.text = text; this.at = 0; }

  fail(what) { throw new SyntaxError(`${what} at character ${this.at}`); }

  space() { while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at])) this.at++; }

  document() {
    this.space();
    const value = this.value(0);
    this.space();
    if (this.at !== this.text.length) this.fail("text after the JSON value");
    return value;
  }

  value(depth) {
    if (depth > maxDepth) this.fail(`nesting deeper than ${maxDepth}`);
    const c = this.text[this.at];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === "\"") return { kind: "string", value: this.string() };
    const literal = /^(?:true|false|null)/.exec(this.text.slice(this.at, this.at + 5));
    if (literal) { this.at += literal[0].length; return { kind: "literal", raw: literal[0] }; }
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = this.at;
    const match = number.exec(this.text);
    if (match && match[0] !== "" && match[0] !== "-") { this.at += match[0].length; return { kind: "number", raw: match[0] }; }
    this.fail("no JSON value");
  }

  object(depth) {
    this.at++;
    const entries = [];
    this.space();
    if (this.text[this.at] === "}") { this.at++; return { kind: "object", entries }; }
    for (;;) {
      this.space();
      if (this.text[this.at] !== "\"") this.fail("no key");
      const key = this.string();
      this.space();
      if (this.text[this.at] !== ":") this.fail("no colon");
      this.at++;
      this.space();
      entries.push([key, this.value(depth + 1)]);
      this.space();
      const c = this.text[this.at++];
      if (c === "}") return { kind: "object", entries };
      if (c !== ",") this.fail("no comma or closing brace");
    }
  }

  array(depth) {
    this.at++;
    const items = [];
    this.space();
    if (this.text[this.at] === "]") { this.at++; return { kind: "array", items }; }
    for (;;) {
      this.space();
      items.push(this.value(depth + 1));
      this.space();
      const c = this.text[this.at++];
      if (c === "]") return { kind: "array", items };
      if (c !== ",") this.fail("no comma or closing bracket");
    }
  }

  string() {
    const string = /"((?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)"/y;
    string.lastIndex = this.at;
    const match = string.exec(this.text);
    if (!match) this.fail("bad string");
    this.at += match[0].length;
    return JSON.parse(match[0]);  // one string's escapes; order and numbers are not at stake here
  }
}

export function parseJSON(text) { return new Parser(text).document(); }

function summary(node) {
  if (node.kind === "object") return `{…} ${node.entries.length} ${node.entries.length === 1 ? "key" : "keys"}`;
  return `[…] ${node.items.length} ${node.items.length === 1 ? "item" : "items"}`;
}

function leaf(node) {
  if (node.kind === "string") return element("span", "json-string", JSON.stringify(node.value));
  return element("span", node.kind === "number" ? "json-number" : "json-literal", node.raw);
}

// Children are made when a node is first opened, so a large document costs only what is looked at.
function renderNode(key, node, depth, openDepth) {
  const line = element("div", "json-node");
  const label = key == null ? null : element("span", "json-key", typeof key === "number" ? String(key) : JSON.stringify(key));
  if (node.kind !== "object" && node.kind !== "array") {
    if (label) line.append(label, element("span", "json-colon", ": "));
    line.append(leaf(node));
    return line;
  }
  const details = element("details", "json-branch");
  const head = element("summary");
  if (label) head.append(label, element("span", "json-colon", ": "));
  head.append(element("span", "json-summary", summary(node)));
  details.append(head);
  const children = element("div", "json-children");
  details.append(children);
  const fill = () => {
    if (children.childElementCount > 0) return;
    if (node.kind === "object") for (const [k, v] of node.entries) children.append(renderNode(k, v, depth + 1, openDepth));
    else node.items.forEach((v, i) => children.append(renderNode(i, v, depth + 1, openDepth)));
  };
  details.addEventListener("toggle", () => { if (details.open) fill(); });
  if (depth < openDepth) { details.open = true; fill(); }
  line.append(details);
  return line;
}

export function renderJSONTree(node) {
  const tree = element("div", "json-tree");
  tree.append(renderNode(null, node, 0, 2));
  return tree;
}
