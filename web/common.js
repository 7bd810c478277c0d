// Shared helpers of the three pages (no framework, no build step).
"use strict";
async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body && body.error ? body.error.message : response.statusText;
    throw new Error(message);
  }
  return body;
}
function postJSON(path, value) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(value) });
}
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}
function fmt(x, digits) { return x == null ? "–" : Number(x).toFixed(digits == null ? 4 : digits); }
function showError(target, err) {
  target.replaceChildren(el("div", { class: "error", text: String(err.message || err) }));
}

// The `--signals` specs typed in a form field (separated by spaces; `none` or nothing: none).
function signalSpecs(text) {
  return text.split(/\s+/).filter((s) => s !== "");
}
