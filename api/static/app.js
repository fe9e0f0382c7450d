// ovreduce web page: upload an IR, see its reductions, run one on NumPy and OpenVINO.
// Plain JavaScript, no build step, no CDN: everything is served by the app itself.
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { modelId: null, check: null, reductions: [] };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function shapeText(shape) {
  if (shape === null || shape === undefined) return "[...]";
  return "[" + shape.map((d) => (d === -1 ? "?" : String(d))).join(",") + "]";
}

function num(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return String(v);
  if (v === 0) return "0";
  return Math.abs(v) >= 1e-3 && Math.abs(v) < 1e4 ? v.toPrecision(4).replace(/\.?0+$/, "") : v.toExponential(2);
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function setStatus(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle("error", isError);
}

async function problemText(response) {
  try {
    const doc = await response.json();
    if (doc && (doc.detail || doc.title)) return `${doc.title || "Error"}: ${doc.detail || ""}`.trim();
  } catch (_) { /* not JSON */ }
  return `HTTP ${response.status}`;
}

// -- upload -------------------------------------------------------------------------------------------------
function filesForm() {
  const form = new FormData();
  form.append("xml", $("#xml").files[0]);
  if ($("#bin").files.length) form.append("bin", $("#bin").files[0]);
  return form;
}

function setupDrop() {
  const drop = $("#drop");
  const stop = (e) => { e.preventDefault(); e.stopPropagation(); };
  ["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => { stop(e); drop.classList.add("over"); }));
  ["dragleave", "drop"].forEach((t) => drop.addEventListener(t, (e) => { stop(e); drop.classList.remove("over"); }));
  drop.addEventListener("drop", (e) => {
    for (const file of e.dataTransfer.files) {
      const target = file.name.toLowerCase().endsWith(".bin") ? $("#bin") : $("#xml");
      const dt = new DataTransfer();
      dt.items.add(file);
      target.files = dt.files;
    }
    if ($("#xml").files.length) $("#upload-form").requestSubmit();
  });
}

async function onUpload(event) {
  event.preventDefault();
  const status = $("#upload-status");
  if (!$("#xml").files.length) { setStatus(status, "Choose an .xml file first.", true); return; }
  $("#check").disabled = true;
  setStatus(status, "Checking…");
  try {
    const [checkResp, modelResp] = await Promise.all([
      fetch("/v1/check", { method: "POST", body: filesForm() }),
      fetch("/v1/models", { method: "POST", body: filesForm() }),
    ]);
    if (!checkResp.ok) { setStatus(status, await problemText(checkResp), true); return; }
    const check = await checkResp.json();
    state.check = check.models[0];
    state.modelId = modelResp.ok ? (await modelResp.json()).id : null;
    renderReport(state.check);
    setStatus(status, state.modelId ? "Checked and stored: pick a layer to run." : "Checked (the model could not be stored, so it cannot be run).");
  } catch (err) {
    setStatus(status, `Request failed: ${err}`, true);
  } finally {
    $("#check").disabled = false;
  }
}

// -- report -------------------------------------------------------------------------------------------------
function findingItem(f) {
  const where = f.port !== null && f.port !== undefined ? ` (port ${f.port})` : "";
  return el("li", {}, el("span", { class: `badge ${f.severity}`, text: f.severity }), ` ${f.code}${where}: ${f.message}`);
}

function renderReport(model) {
  $("#report").hidden = false;
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of model.findings) counts[f.severity] += 1;
  const verdict = model.ok ? el("span", { class: "badge ok", text: "consistent" }) : el("span", { class: "badge error", text: "inconsistent" });
  $("#summary").replaceChildren(
    verdict,
    ` ${model.path} — IR v${model.ir_version}, ${model.layer_count} layers, ${model.reductions.length} reductions; `
      + `${plural(counts.error, "error")}, ${plural(counts.warning, "warning")}, ${plural(counts.info, "note")}`,
  );
  // A layer inside an If/Loop/TensorIterator body is addressed by its path of ids (body_path/layer_id).
  const keyOf = (x) => (x.body_path ? `${x.body_path}/${x.layer_id}` : x.layer_id);
  const layerKeys = new Set(model.reductions.map(keyOf));
  const general = model.findings.filter((f) => !layerKeys.has(keyOf(f)));
  $("#model-findings").replaceChildren(...general.map((f) => {
    const item = findingItem(f);
    if (f.layer_name) item.prepend(`${f.layer_name} (id ${keyOf(f)}): `);
    return item;
  }));
  const body = $("#reductions tbody");
  body.replaceChildren();
  state.reductions = model.reductions;
  for (const r of model.reductions) {
    const mine = model.findings.filter((f) => keyOf(f) === keyOf(r));
    const worst = mine.some((f) => f.severity === "error") ? "error" : mine.some((f) => f.severity === "warning") ? "warning" : null;
    const row = el("tr", { "data-layer-id": keyOf(r), class: worst ? `row-${worst}` : "" });
    const declared = r.declared_has_dims ? shapeText(r.declared_output_shape) : "(no dims)";
    const inferred = r.inferred_output_resolved ? shapeText(r.inferred_output_shape) : "unresolved";
    const declaredCell = el("td", { class: "shape" + (r.status === "mismatch" ? " diff-declared" : ""), text: declared });
    const runButton = el("button", { type: "button", class: "secondary", text: "Run", "aria-label": `Run layer ${r.layer_name}` });
    runButton.addEventListener("click", () => selectLayer(keyOf(r), true));
    runButton.disabled = !state.modelId;
    const cells = [
      el("td", {}, el("span", { text: r.layer_name }), el("br"), el("small", { text: `id ${keyOf(r)}` })),
      el("td", { text: r.type }),
      el("td", { class: "shape", text: r.input_shape_resolved ? shapeText(r.input_shape) : "unresolved" }),
      el("td", { class: "shape", text: r.axes === null ? (r.axes_kind === "runtime" ? "runtime" : "?") : shapeText(r.axes) }),
      el("td", { text: String(r.keep_dims) }),
      declaredCell,
      el("td", { class: "shape", text: inferred }),
      el("td", {}, el("span", { class: `badge ${r.status}`, text: r.status })),
      el("td", {}, el("ul", { class: "findings" }, ...mine.map(findingItem))),
      el("td", {}, runButton),
    ];
    // Labels for the stacked layout of narrow windows (see style.css).
    ["Layer", "Type", "Input", "Axes", "keep_dims", "Declared output", "Inferred output", "Status", "Findings", ""]
      .forEach((label, i) => cells[i].setAttribute("data-label", label));
    row.append(...cells);
    body.append(row);
  }
  const select = $("#run-layer");
  select.replaceChildren(...model.reductions.map((r) => el("option", { value: keyOf(r), text: `${r.layer_name} (${r.type}, id ${keyOf(r)})` })));
  $("#run").hidden = !state.modelId || model.reductions.length === 0;
  $("#run-result").replaceChildren();
}

function selectLayer(layerId, focus) {
  $("#run-layer").value = layerId;
  $("#run").hidden = false;
  if (focus) { $("#run-button").focus(); $("#run").scrollIntoView({ behavior: "smooth", block: "start" }); }
}

// -- run ----------------------------------------------------------------------------------------------------
async function onRun(event) {
  event.preventDefault();
  const status = $("#run-status");
  if (!state.modelId) { setStatus(status, "Upload a model first.", true); return; }
  const layer = $("#run-layer").value;
  const body = {
    seed: Number.parseInt($("#run-seed").value || "0", 10),
    device: $("#run-device").value,
    precision: $("#run-precision").value,
  };
  $("#run-button").disabled = true;
  setStatus(status, "Running…");
  try {
    const resp = await fetch(`/v1/models/${state.modelId}/layers/${encodeURIComponent(layer)}/run`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (!resp.ok) { setStatus(status, await problemText(resp), true); return; }
    const doc = await resp.json();
    renderRun(doc);
    setStatus(status, doc.ok ? "Done: the backends agree." : "Done: the backends disagree or one failed.");
  } catch (err) {
    setStatus(status, `Request failed: ${err}`, true);
  } finally {
    $("#run-button").disabled = false;
  }
}

function renderRun(doc) {
  const out = $("#run-result");
  const layer = doc.layer;
  const parts = [
    el("p", { class: `verdict ${doc.ok ? "ok" : "bad"}`, id: "run-verdict",
      text: doc.ok ? "Agree: every backend ran and matches the reference." : "Disagree: see below." }),
    el("p", { text: `${layer.type} ${layer.layer_name} (id ${layer.layer_id}), axes ${layer.axes === null ? "runtime" : shapeText(layer.axes)}, keep_dims ${layer.keep_dims}; input ${doc.inputs.map((i) => `${shapeText(i.shape)} ${i.datatype}`).join(", ")}` }),
  ];
  const rows = doc.results.map((r) => el("tr", {},
    el("td", { text: r.backend }),
    el("td", {}, el("span", { class: `badge ${r.ok ? "ok" : "error"}`, text: r.ok ? "ok" : "failed" })),
    el("td", { class: "shape", text: r.shape ? shapeText(r.shape) : "–" }),
    el("td", { text: r.datatype || "–" }),
    el("td", { text: r.precision ? `${r.precision}${r.effective_precision && r.effective_precision !== r.precision ? ` (runs in ${r.effective_precision})` : ""}` : "–" }),
    el("td", { text: r.error || "" }),
  ));
  parts.push(el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ...["Backend", "Status", "Shape", "Type", "Precision", "Error"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, ...rows))));
  for (const c of doc.comparisons) {
    parts.push(el("h3", { text: `${c.reference} vs ${c.candidate}: ${c.ok ? "agree" : "disagree"}` }));
    if (c.error) { parts.push(el("p", { class: "status error", text: c.error })); continue; }
    const metric = (label, value) => el("div", { class: "metric" }, el("b", { text: label }), num(value));
    parts.push(el("div", { class: "metrics" },
      metric("max abs error", c.max_abs_error), metric("max rel error", c.max_rel_error),
      metric("mismatched", `${c.mismatched} / ${c.total}`),
      metric("tolerance", c.exact ? "exact" : `atol ${num(c.atol)}, rtol ${num(c.rtol)}`),
      metric("would pass with atol", c.required_atol), metric("would pass with rtol", c.required_rtol)));
    if (c.first_mismatch) {
      parts.push(el("p", { text: `First mismatch at [${c.first_mismatch.index.join(", ")}]: ${c.reference} = ${c.first_mismatch.reference}, ${c.candidate} = ${c.first_mismatch.candidate}` }));
    }
    const ref = (doc.outputs || []).find((o) => o.name === c.reference);
    const cand = (doc.outputs || []).find((o) => o.name === c.candidate);
    if (ref && cand) parts.push(...errorPictures(ref, cand, c));
  }
  out.replaceChildren(...parts);
}

// -- pictures of where the outputs differ --------------------------------------------------------------------
function toNumber(v) {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v === "NaN") return NaN;
  if (v === "Infinity") return Infinity;
  if (v === "-Infinity") return -Infinity;
  return Number(v);
}

function errorPictures(ref, cand, c) {
  const a = ref.data.map(toNumber);
  const b = cand.data.map(toNumber);
  const n = Math.min(a.length, b.length);
  const errors = new Array(n);
  const allowed = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const same = (Number.isNaN(a[i]) && Number.isNaN(b[i])) || a[i] === b[i];
    errors[i] = same ? 0 : Math.abs(a[i] - b[i]);
    if (Number.isNaN(errors[i])) errors[i] = Infinity;
    allowed[i] = c.exact ? 0 : c.atol + c.rtol * Math.abs(a[i]);
  }
  return [stripFigure(errors, allowed), histogramFigure(errors)];
}

function stripFigure(errors, allowed) {
  const ns = "http://www.w3.org/2000/svg";
  const cells = Math.min(errors.length, 512);
  const per = errors.length / Math.max(cells, 1);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "strip");
  svg.setAttribute("viewBox", `0 0 ${Math.max(cells, 1)} 10`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  let bad = 0;
  for (let i = 0; i < cells; i += 1) {
    let worst = 0;
    for (let j = Math.floor(i * per); j < Math.max(Math.floor((i + 1) * per), Math.floor(i * per) + 1) && j < errors.length; j += 1) {
      const ratio = allowed[j] > 0 ? errors[j] / allowed[j] : (errors[j] > 0 ? Infinity : 0);
      worst = Math.max(worst, ratio);
    }
    if (worst > 1) bad += 1;
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", String(i));
    rect.setAttribute("y", "0");
    rect.setAttribute("width", "1");
    rect.setAttribute("height", "10");
    rect.setAttribute("fill", worst > 1 ? "#b42318" : worst > 0 ? `rgba(11, 92, 173, ${0.15 + 0.85 * Math.min(worst, 1)})` : "#e6f4ea");
    svg.append(rect);
  }
  const label = `Error per output element, in flat order (${errors.length} elements${per > 1 ? `, ${per.toFixed(1)} per cell` : ""}): `
    + `green exact, blue within tolerance (darker is closer to the limit), red outside tolerance; ${bad} red cells.`;
  svg.setAttribute("aria-label", label);
  return el("figure", { id: "error-strip" }, svg, el("figcaption", { text: label }));
}

function histogramFigure(errors) {
  const ns = "http://www.w3.org/2000/svg";
  const bins = new Map();
  let exact = 0;
  for (const e of errors) {
    if (e === 0) { exact += 1; continue; }
    const k = Number.isFinite(e) ? Math.floor(Math.log10(e)) : 99;
    bins.set(k, (bins.get(k) || 0) + 1);
  }
  const keys = [...bins.keys()].sort((x, y) => x - y);
  const labels = ["exact", ...keys.map((k) => (k === 99 ? "inf/NaN" : `1e${k}`))];
  const counts = [exact, ...keys.map((k) => bins.get(k))];
  const max = Math.max(...counts, 1);
  const w = 520; const h = 140; const barW = w / labels.length;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "hist");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("role", "img");
  labels.forEach((label, i) => {
    const bh = (counts[i] / max) * (h - 30);
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", String(i * barW + 2));
    rect.setAttribute("y", String(h - 18 - bh));
    rect.setAttribute("width", String(Math.max(barW - 4, 1)));
    rect.setAttribute("height", String(bh));
    rect.setAttribute("fill", i === 0 ? "#1a7f37" : "#0b5cad");
    const text = document.createElementNS(ns, "text");
    text.setAttribute("x", String(i * barW + barW / 2));
    text.setAttribute("y", String(h - 4));
    text.setAttribute("text-anchor", "middle");
    text.setAttribute("font-size", "11");
    text.textContent = label;
    const count = document.createElementNS(ns, "text");
    count.setAttribute("x", String(i * barW + barW / 2));
    count.setAttribute("y", String(h - 22 - bh));
    count.setAttribute("text-anchor", "middle");
    count.setAttribute("font-size", "11");
    count.textContent = String(counts[i]);
    svg.append(rect, text, count);
  });
  const label = `Histogram of absolute errors by decade: ${labels.map((l, i) => `${l}: ${counts[i]}`).join(", ")}.`;
  svg.setAttribute("aria-label", label);
  return el("figure", { id: "error-histogram" }, svg, el("figcaption", { text: label }));
}

async function loadDevices() {
  try {
    const resp = await fetch("/v1/devices");
    if (!resp.ok) return;
    const doc = await resp.json();
    const devices = (doc.devices || []).map((d) => d.device);
    if (devices.length) $("#run-device").replaceChildren(...devices.map((d) => el("option", { value: d, text: d })));
  } catch (_) { /* keep CPU */ }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#upload-form").addEventListener("submit", onUpload);
  $("#run-form").addEventListener("submit", onRun);
  setupDrop();
  loadDevices();
});
