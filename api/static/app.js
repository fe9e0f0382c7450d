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

// Axes are integers (negative ones count from the end): not a shape, where -1 would mean a dynamic dim.
function axesText(axes) {
  return "[" + axes.map((a) => String(a)).join(",") + "]";
}

// A layer inside an If/Loop/TensorIterator body is addressed by its path of ids (body_path/layer_id).
function keyOf(x) {
  return x.body_path ? `${x.body_path}/${x.layer_id}` : x.layer_id;
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

async function problemOf(response) {
  try {
    const doc = await response.json();
    if (doc && (doc.detail || doc.title)) return { code: doc.code || "", text: `${doc.title || "Error"}: ${doc.detail || ""}`.trim() };
  } catch (_) { /* not JSON */ }
  return { code: "", text: `HTTP ${response.status}` };
}

async function problemText(response) {
  return (await problemOf(response)).text;
}

// The upload's problem in the page's words: an .xml whose Const layers keep their values in a .bin that was
// not chosen is the usual one (the API says which form field it expected; a person chose files, not fields).
function uploadProblem(problem) {
  const xmlName = $("#xml").files[0] ? $("#xml").files[0].name : "model.xml";
  const binName = xmlName.replace(/\.xml$/i, "") + ".bin";
  if (problem.code === "ir.weights" && !$("#bin").files.length) {
    return `${xmlName} has Const layers whose values are stored in its weights file, so it cannot be read alone: `
      + `choose ${binName} as the weights (.bin) as well, then press Check again.`;
  }
  if (problem.code === "ir.weights") {
    return `The weights file does not fit ${xmlName}: a Const layer's values lie outside it. `
      + `Choose the .bin that was saved with this .xml (usually ${binName}).`;
  }
  return problem.text;
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
    if (!checkResp.ok) { setStatus(status, uploadProblem(await problemOf(checkResp)), true); return; }
    const check = await checkResp.json();
    state.check = check.models[0];
    state.modelId = modelResp.ok ? (await modelResp.json()).id : null;
    renderReport(state.check);
    setStatus(status, state.modelId ? "Checked and stored: pick a layer to run." : "Checked (the model could not be stored, so it cannot be run).");
    $("#summary").focus(); // keyboard and screen-reader users land on the result
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
    runButton.addEventListener("click", () => runLayer(keyOf(r)));
    runButton.disabled = !state.modelId;
    const cells = [
      el("td", {}, el("span", { text: r.layer_name }), el("br"), el("small", { text: `id ${keyOf(r)}` })),
      el("td", { text: r.type }),
      el("td", { class: "shape", text: r.input_shape_resolved ? shapeText(r.input_shape) : "unresolved" }),
      el("td", { class: "shape", text: r.axes === null ? (r.axes_kind === "runtime" ? "runtime" : "?") : axesText(r.axes) }),
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
  $("#neighbourhood").replaceChildren();
  if (!$("#run").hidden) showNeighbourhood($("#run-layer").value);
}

// A row's Run button: select that layer and run it at once.
function runLayer(layerId) {
  $("#run-layer").value = layerId;
  $("#run").hidden = false;
  $("#run").scrollIntoView({ block: "start" });
  return runSelected();
}

// -- run ----------------------------------------------------------------------------------------------------
async function onRun(event) {
  event.preventDefault();
  await runSelected();
}

async function runSelected() {
  const status = $("#run-status");
  if (!state.modelId) { setStatus(status, "Upload a model first.", true); return; }
  const layer = $("#run-layer").value;
  showNeighbourhood(layer);
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
    if (!resp.ok) { setStatus(status, await problemText(resp), true); status.focus(); return; }
    const doc = await resp.json();
    renderRun(doc);
    setStatus(status, doc.ok ? "Done: the backends agree." : "Done: the backends disagree or one failed.");
    $("#run-verdict").focus(); // the result, not the button that asked for it
  } catch (err) {
    setStatus(status, `Request failed: ${err}`, true);
    status.focus();
  } finally {
    $("#run-button").disabled = false;
  }
}

// The requested precision; the compiled model's inference precision where it differs; and what the reduction
// executed in (OpenVINO's execution graph) where that differs from the inference precision, as `ovreduce run` says.
function runPrecision(r) {
  const graph = r.effective_precision || r.precision;
  const executed = r.runtime_precision;
  if (!executed || executed === graph) return graph === r.precision ? r.precision : `${r.precision} (runs in ${graph})`;
  if (graph === r.precision) return `${r.precision} (reduction ran in ${executed})`;
  return `${r.precision} (${graph} graph, reduction ran in ${executed})`;
}

function renderRun(doc) {
  const out = $("#run-result");
  const layer = doc.layer;
  const parts = [
    el("p", { class: `verdict ${doc.ok ? "ok" : "bad"}`, id: "run-verdict", tabindex: "-1",
      text: doc.ok ? "Agree: every backend ran and matches the reference." : "Disagree: see below." }),
    el("p", { text: `${layer.type} ${layer.layer_name} (id ${layer.layer_id}), axes ${layer.axes === null ? "runtime" : axesText(layer.axes)}, keep_dims ${layer.keep_dims}; input ${doc.inputs.map((i) => `${shapeText(i.shape)} ${i.datatype}`).join(", ")}` }),
  ];
  const contradiction = declaredContradiction(doc);
  if (contradiction) parts.push(el("p", { class: "contradiction", id: "run-contradiction", text: contradiction }));
  // what the verdict rests on: dims ovreduce chose, an input that cannot show an error, a tolerance too wide
  if ((doc.notes || []).length) parts.push(el("ul", { id: "run-notes" }, ...doc.notes.map((n) => el("li", { text: n }))));
  const labels = ["Backend", "Status", "Shape", "Type", "Precision", "Error"];
  const rows = doc.results.map((r) => {
    const cells = [
      el("td", { text: r.backend }),
      el("td", {}, el("span", { class: `badge ${r.ok ? "ok" : "error"}`, text: r.ok ? "ok" : "failed" })),
      el("td", { class: "shape", text: r.shape ? shapeText(r.shape) : "–" }),
      el("td", { text: r.datatype || "–" }),
      el("td", { text: r.precision ? runPrecision(r) : "–" }),
      el("td", { text: r.error || "" }),
    ];
    cells.forEach((cell, i) => cell.setAttribute("data-label", labels[i])); // the stacked layout of narrow windows
    return el("tr", {}, ...cells);
  });
  parts.push(el("div", { class: "table-wrap" }, el("table", { id: "run-backends", class: "stack" },
    el("thead", {}, el("tr", {}, ...labels.map((h) => el("th", { scope: "col", text: h })))),
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

// The check's verdict on the layer that ran: its declared output against the inferred one (and what ran).
function declaredContradiction(doc) {
  const r = state.reductions.find((x) => keyOf(x) === keyOf({ ...doc.layer, body_path: doc.body_path }));
  if (!r || r.status !== "mismatch" || !r.declared_has_dims || !r.inferred_output_resolved) return null;
  const computed = doc.results.filter((x) => x.ok && x.shape).map((x) => `${shapeText(x.shape)} (${x.backend})`);
  return `The layer's declared output ${shapeText(r.declared_output_shape)} contradicts the inferred `
    + `${shapeText(r.inferred_output_shape)}`
    + (computed.length ? `; the backends computed ${[...new Set(computed)].join(", ")}.` : ".")
    + " The layers after it were built for the declared shape: see the picture of its neighbourhood.";
}

// -- the neighbourhood: producers -> the layer -> consumers, with the shapes on the edges ---------------------
async function showNeighbourhood(layerId) {
  const figure = $("#neighbourhood");
  if (!state.modelId || !layerId) { figure.replaceChildren(); return; }
  try {
    const resp = await fetch(`/v1/models/${state.modelId}/layers/${encodeURIComponent(layerId)}`);
    if (!resp.ok || $("#run-layer").value !== layerId) return;
    const detail = await resp.json();
    figure.replaceChildren(...neighbourhoodFigure(detail));
  } catch (_) { /* the picture is a help, not the result */ }
}

function svgEl(tag, attrs = {}, text = null) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function neighbourhoodFigure(d) {
  const red = d.reduction;
  const producers = d.inputs.filter((i) => i.producer).map((i) => ({
    name: i.producer.layer_name, type: i.producer.type, shape: i.shape_resolved ? shapeText(i.shape) : "unresolved",
  }));
  const declared = d.outputs.length && d.outputs[0].declared_has_dims ? shapeText(d.outputs[0].declared_shape) : "(no dims)";
  const inferred = red ? (red.inferred_output_resolved ? shapeText(red.inferred_output_shape) : "unresolved")
    : (d.outputs.length && d.outputs[0].shape_resolved ? shapeText(d.outputs[0].shape) : "unresolved");
  const mismatch = red ? red.status === "mismatch" : false;
  const consumers = d.consumers.map((c) => ({
    name: c.layer_name, type: c.type, shape: c.declared_has_dims ? shapeText(c.declared_shape) : "(no dims)",
  }));
  // Wide: producers | layer | consumers from left to right. Narrow (a phone): the same from top to bottom,
  // so that the text keeps a readable size instead of shrinking with the picture.
  const wide = ($("#neighbourhood").clientWidth || 800) >= 640;
  const svg = svgEl("svg", { class: `neighbourhood ${wide ? "wide" : "tall"}`, role: "img" });
  const box = (x, y, bw, item, cls) => {
    const g = svgEl("g", { class: `node ${cls}` });
    g.append(svgEl("title", {}, `${item.name} (${item.type})`));
    g.append(svgEl("rect", { x, y, width: bw, height: 46, rx: 6 }));
    g.append(svgEl("text", { x: x + 8, y: y + 19, class: "name" }, clip(item.name, Math.floor((bw - 12) / 7.2))));
    g.append(svgEl("text", { x: x + 8, y: y + 37, class: "type" }, item.type));
    svg.append(g);
  };
  const edge = (x1, y1, x2, y2, label, bad) => {
    svg.append(svgEl("line", { x1, y1, x2, y2, class: bad ? "edge bad" : "edge" }));
    // Tall: each label beside its own line, a third of the way from the box it leaves, on the outer side,
    // so that the labels of neighbouring lines do not run into each other.
    const tx = x1 + (x2 - x1) / 3; const ty = y1 + (y2 - y1) / 3;
    const at = wide ? { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6, "text-anchor": "middle" }
      : { x: tx + (x1 < x2 - 1 ? -6 : 6), y: ty + 4, "text-anchor": x1 < x2 - 1 ? "end" : "start" };
    svg.append(svgEl("text", { ...at, class: bad ? "shape bad" : "shape" }, label));
  };
  const out = mismatch ? `${declared} ≠ ${inferred}` : declared;
  if (wide) {
    const boxW = 190; const gap = 130; const rowH = 60;
    const h = Math.max(producers.length, consumers.length, 1) * rowH + 30;
    const w = 3 * boxW + 2 * gap; const midY = h / 2;
    const slotY = (i, n) => (h - n * rowH) / 2 + i * rowH + 7;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    producers.forEach((p, i) => {
      const y = slotY(i, producers.length);
      edge(boxW, y + 23, boxW + gap, midY, p.shape, false);
      box(0, y, boxW, p, "producer");
    });
    box(boxW + gap, midY - 23, boxW, { name: d.layer_name, type: d.type }, mismatch ? "layer bad" : "layer");
    consumers.forEach((c, i) => {
      const y = slotY(i, consumers.length);
      edge(2 * boxW + gap, midY, 2 * boxW + 2 * gap, y + 23, out, mismatch);
      box(2 * boxW + 2 * gap, y, boxW, c, "consumer");
    });
  } else {
    const w = 340; const gapX = 8; const gapY = 90;
    const rowOf = (n) => ({ bw: (w - (Math.max(n, 1) - 1) * gapX) / Math.max(n, 1), n });
    const top = rowOf(producers.length); const bottom = rowOf(consumers.length);
    const h = 46 * 3 + 2 * gapY;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    const layerX = w / 2 - 95; const layerY = 46 + gapY;
    producers.forEach((p, i) => {
      const x = i * (top.bw + gapX);
      edge(x + top.bw / 2, 46, w / 2, layerY, p.shape, false);
      box(x, 0, top.bw, p, "producer");
    });
    box(layerX, layerY, 190, { name: d.layer_name, type: d.type }, mismatch ? "layer bad" : "layer");
    consumers.forEach((c, i) => {
      const x = i * (bottom.bw + gapX);
      edge(w / 2, layerY + 46, x + bottom.bw / 2, layerY + 46 + gapY, out, mismatch);
      box(x, layerY + 46 + gapY, bottom.bw, c, "consumer");
    });
  }
  const fed = producers.map((p) => `${p.name} (${p.type}, ${p.shape})`).join(", ") || "nothing";
  const feeds = consumers.map((c) => `${c.name} (${c.type}, declares ${c.shape})`).join(", ") || "nothing";
  const says = mismatch ? `declares its output ${declared} but ${inferred} is inferred` : `outputs ${inferred}`;
  const label = `Neighbourhood of ${d.layer_name} (${d.type}): fed by ${fed}; it ${says}; it feeds ${feeds}.`;
  svg.setAttribute("aria-label", label);
  return [el("h3", { text: "Where the layer sits" }), svg, el("figcaption", { text: label })];
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
  $("#run-layer").addEventListener("change", () => showNeighbourhood($("#run-layer").value));
  $("#run-form").addEventListener("submit", onRun);
  setupDrop();
  loadDevices();
});
