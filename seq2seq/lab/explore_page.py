# ruff: noqa: E501  (the page's HTML and JavaScript keep their own line lengths)
"""The explorer's one page (explore_http.py serves it): plain HTML and
JavaScript, no library and nothing fetched from elsewhere, so it works with
no network. Three panels share one search setting and one results area:

- translate a typed sentence or a test line (then scored, and the reference's
  forced heatmap drawn with the gold links and the sentence's AER);
- grow it: test pairs joined to a chosen length, "longer" adds five words;
- the curve: BLEU by source length per run, with a progress bar.

A model with several maps a sentence (a Transformer's kinds, layers and
heads) gets pickers under its translation's heatmap: the kind, the layer,
and one head or the heads averaged, over its translation fed back in.

A heatmap is an SVG grid: one row per output subword (and the end of
sentence), one column per source subword. Pointing at an output token, or at
a row's label, outlines that row and lists its weights over the source."""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>seq2seq explore</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
#runs { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
textarea { width: 100%; font-size: 1.1em; }
fieldset { border: 1px solid #ccc; border-radius: 6px; margin: 0.5em 0; }
.panels { display: flex; flex-wrap: wrap; gap: 1em; }
.panels fieldset { flex: 1 1 30em; }
.run { border: 1px solid #ccc; border-radius: 6px; padding: 0.8em; flex: 3 1 36em; overflow-x: auto; }
.run.plain { flex: 1 1 20em; }
.tok, .rowlabel { cursor: pointer; }
.tok { padding: 0 2px; border-radius: 3px; }
.tok:hover, .tok.on { background: #ffd54f; }
#error { color: #b00020; }
.note { color: #555; font-style: italic; }
.weights { font-family: monospace; white-space: pre-wrap; color: #333; }
.score { font-weight: bold; }
table.curve td, table.curve th { padding: 0 0.8em; text-align: right; }
</style>
</head>
<body>
<h1>What does attention read?</h1>
<p>Every run loaded translates the same sentence side by side. Point at an
output word to see where that decoder looked for it. A run without attention
reads the whole source through one vector: grow the sentence and watch it fail.</p>
<p><label>search <select id="beam">
<option value="1">greedy</option><option value="3">beam 3</option>
<option value="5">beam 5</option><option value="10">beam 10</option>
</select></label></p>
<fieldset><legend>Translate</legend>
<textarea id="text" rows="2">The man reads a book because the dog sleeps.</textarea>
<p><button id="go">Translate</button>
<span class="needs-test">or test line <input id="line" type="number" min="1" value="1" style="width:6em">
<button id="pick">Translate this line</button> <button id="random">A random line</button></span></p>
</fieldset>
<div class="panels">
<fieldset class="needs-test"><legend>Grow it</legend>
<p>A source of about <input id="words" type="number" min="1" value="10" style="width:5em"> words,
made of consecutive test lines:
<button id="grow">Translate</button> <button id="longer">Longer (+5)</button>
<button id="another">Another of this length</button></p>
</fieldset>
<fieldset class="needs-test"><legend>The curve</legend>
<p>BLEU by source length over the test split, for every run.
<button id="curve">Draw the curve</button> <progress id="progress" hidden></progress>
<span id="curve-state"></span></p>
<div id="chart"></div>
</fieldset>
</div>
<p id="test-note" class="note"></p>
<p id="error"></p>
<div id="source"></div>
<div id="runs"></div>
<script>
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
const CELL = 18, LEFT = 110, TOP = 90;
let info = {}, variant = 0;
function heatmap(src, tgt, weights, gold) {
  // the EOS row when it was written
  return grid([...src, "</s>"], [...tgt, "</s>"].slice(0, weights.length), weights, gold);
}
function grid(src, tgt, weights, gold) {
  const w = LEFT + CELL * src.length, h = TOP + CELL * tgt.length;
  let svg = `<svg class="heatmap" width="${w}" height="${h}">`;
  src.forEach((s, j) => {
    const x = LEFT + j * CELL + CELL / 2;
    svg += `<text x="${x}" y="${TOP - 6}" font-size="11" transform="rotate(-60 ${x} ${TOP - 6})">${esc(s)}</text>`;
  });
  tgt.forEach((t, i) => {
    svg += `<text class="rowlabel" data-i="${i}" x="${LEFT - 6}" y="${TOP + i * CELL + 13}" font-size="11" text-anchor="end">${esc(t)}</text>`;
    weights[i].forEach((v, j) => {
      const shade = Math.round(255 * (1 - v));
      svg += `<rect class="cell" x="${LEFT + j * CELL}" y="${TOP + i * CELL}" width="${CELL - 1}" height="${CELL - 1}" fill="rgb(${shade},${shade},255)"><title>${v.toFixed(3)}</title></rect>`;
    });
  });
  (gold || []).forEach(([i, j]) => {
    svg += `<rect class="gold" x="${LEFT + j * CELL + 2}" y="${TOP + i * CELL + 2}" width="${CELL - 5}" height="${CELL - 5}" fill="none" stroke="#2e7d32" stroke-width="2"/>`;
  });
  return svg + `<rect class="row-mark" x="${LEFT}" y="0" width="${CELL * src.length}" height="${CELL}" fill="none" stroke="#e65100" stroke-width="2" visibility="hidden"/></svg>`;
}
function point(map, src, tgt, weights, i) {
  src = [...src, "</s>"];
  const mark = map.querySelector(".row-mark");
  mark.setAttribute("y", TOP + i * CELL);
  mark.setAttribute("visibility", "visible");
  map.querySelectorAll(".tok").forEach((el) => el.classList.toggle("on", Number(el.dataset.i) === i));
  const pairs = weights[i].map((v, j) => [v, src[j]]).sort((a, b) => b[0] - a[0]);
  const line = map.querySelector(".weights");
  line.dataset.row = i;
  line.textContent = `${tgt[i] || "</s>"} read: ` + pairs.slice(0, 5).map(([v, s]) => `${s} ${v.toFixed(2)}`).join(", ");
}
function drawn(src, tgt, weights, gold, heading) {
  const map = document.createElement("div");
  map.className = "map";
  const toks = tgt.map((t, i) => `<span class="tok" data-i="${i}">${esc(t)}</span>`).join(" ");
  map.innerHTML = `${heading}<p class="tokens">${toks}</p>${heatmap(src, tgt, weights, gold)}<p class="weights"></p>`;
  map.querySelectorAll(".tok, .rowlabel").forEach((el) =>
    el.addEventListener("mouseenter", () => point(map, src, tgt, weights, Number(el.dataset.i))));
  return map;
}
const mean = (heads) => heads[0].map((row, i) => row.map((_, j) => heads.reduce((s, h) => s + h[i][j], 0) / heads.length));
function layers(maps) {  // a model with several maps: pick the kind, the layer, the head
  const box = document.createElement("div");
  box.className = "layers";
  const kinds = Object.keys(maps), first = maps[kinds[0]].weights;
  const options = (n, name) => Array.from({length: n}, (_, i) => `<option value="${i}">${name} ${i + 1}</option>`).join("");
  box.innerHTML = `<h3>every attention, its translation fed back in</h3><p>
<select class="kind">${kinds.map((k) => `<option>${esc(k)}</option>`).join("")}</select>
<select class="layer">${options(first.length, "layer")}</select>
<select class="head"><option value="mean">heads averaged</option>${options(first[0].length, "head")}</select></p><div class="grid"></div>`;
  box.querySelector(".layer").value = String(first.length - 1);  // the last, as drawn above
  const draw = () => {
    const m = maps[box.querySelector(".kind").value];
    const layer = m.weights[Number(box.querySelector(".layer").value)];
    const head = box.querySelector(".head").value;
    box.querySelector(".grid").innerHTML = grid(m.cols, m.rows, head === "mean" ? mean(layer) : layer[Number(head)], null);
  };
  box.querySelectorAll("select").forEach((s) => s.addEventListener("change", draw));
  draw();
  return box;
}
function card(run, k) {
  const div = document.createElement("div");
  div.className = "run";
  div.dataset.run = run.run;
  const about = info.runs?.[k] || {};  // answers list the runs as /api/runs does
  const step = about.step != null ? ", step " + about.step : "";
  let head = `<h2>${esc(run.run)} <small>(${esc(about.label || run.mode)}${step})</small></h2><p class="hypothesis">${esc(run.hypothesis)}</p>`;
  if (run.bleu !== undefined) head += `<p class="score">sentence BLEU ${run.bleu.toFixed(1)}, chrF ${run.chrf.toFixed(1)}</p>`;
  if (run.unknown) head += `<p class="note">${run.unknown} source subwords are unknown to this model (another script?)</p>`;
  div.innerHTML = head;
  if (!run.weights) {
    div.classList.add("plain");
    div.insertAdjacentHTML("beforeend", `<p class="tokens">${run.tokens.map(esc).join(" ")}</p><p class="note">${esc(run.note)}</p>`);
    return div;
  }
  div.appendChild(drawn(run.source_tokens, run.tokens, run.weights, null, "<h3>its translation</h3>"));
  if (run.maps) div.appendChild(layers(run.maps));
  const f = run.forced;
  if (f) {
    let words = "<h3>the reference (forced decoding)</h3><p class=\\"note\\">";
    words += f.gold ? `green outlines: the gold word links; this sentence's AER of the attention's strongest link per row: <span class="aer">${f.aer.toFixed(3)}</span>` : "the corpus has no gold word links to draw";
    const map = drawn(f.source_tokens, f.tokens, f.weights, f.gold, words + "</p>");
    map.classList.add("forced");
    div.appendChild(map);
  }
  return div;
}
function show(answer) {
  $("runs").innerHTML = "";
  let src = `<p><b>source</b> (${answer.source.split(/\\s+/).length} words${answer.lines ? ", test lines " + answer.lines.join(", ") : ""}): ${esc(answer.source)}</p>`;
  if (answer.reference !== undefined) src += `<p><b>reference</b>: ${esc(answer.reference)}</p>`;
  $("source").innerHTML = src;
  answer.runs.forEach((run, k) => $("runs").appendChild(card(run, k)));
}
async function ask(path, body) {
  $("error").textContent = "";
  const headers = {"Content-Type": "application/json"};  // the server takes JSON only
  const reply = await fetch(path, {method: "POST", headers, body: JSON.stringify(body)});
  const answer = await reply.json();
  if (!reply.ok) { $("error").textContent = answer.error; return null; }
  return answer;
}
let asked = 0;  // the latest translation asked for: an older answer is dropped
async function translate(path, body) {
  const mine = ++asked;
  $("runs").innerHTML = "<p>translating...</p>";
  const answer = await ask(path, {...body, beam: Number($("beam").value)});
  if (mine !== asked) return null;
  if (answer) show(answer); else $("runs").innerHTML = "";
  return answer;
}
$("go").addEventListener("click", () => translate("/api/translate", {text: $("text").value}));
$("pick").addEventListener("click", () => translate("/api/example", {line: Number($("line").value)}));
$("random").addEventListener("click", () => {
  $("line").value = 1 + Math.floor(Math.random() * info.test.lines);
  translate("/api/example", {line: Number($("line").value)});
});
const grow = () => translate("/api/grow", {words: Number($("words").value), variant});
$("grow").addEventListener("click", () => { variant = 0; grow(); });
$("longer").addEventListener("click", () => {
  $("words").value = Math.min(info.max_words, Number($("words").value) + 5); variant = 0; grow();
});
$("another").addEventListener("click", () => { variant += 1; grow(); });
const labelOf = (r) => (info.runs || []).find((x) => x.run === r.run)?.label || r.mode;
function chart(runs) {
  const w = 600, h = 280, x0 = 50, y1 = 240, colors = ["#c62828", "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00"];
  const buckets = runs[0].buckets, step = (w - x0 - 20) / Math.max(buckets.length - 1, 1);
  const y = (v) => y1 - (v / 100) * (y1 - 20);
  let svg = `<svg class="curve" width="${w}" height="${h}"><line x1="${x0}" y1="${y1}" x2="${w - 10}" y2="${y1}" stroke="#999"/>`;
  [0, 25, 50, 75, 100].forEach((v) => { svg += `<text x="${x0 - 8}" y="${y(v) + 4}" font-size="11" text-anchor="end">${v}</text>`; });
  buckets.forEach((b, k) => { svg += `<text x="${x0 + k * step}" y="${y1 + 18}" font-size="11" text-anchor="middle">${b.lo}-${b.hi}</text>`; });
  svg += `<text x="${w / 2}" y="${h - 4}" font-size="12" text-anchor="middle">source words</text>`;
  runs.forEach((r, n) => {
    const pts = r.buckets.map((b, k) => b.bleu === null ? null : `${x0 + k * step},${y(b.bleu)}`).filter((p) => p);
    svg += `<polyline fill="none" stroke="${colors[n % 5]}" stroke-width="2" points="${pts.join(" ")}"/>`;
    svg += `<text x="${x0 + 10}" y="${30 + n * 16}" font-size="12" fill="${colors[n % 5]}">${esc(r.run)} (${esc(labelOf(r))})</text>`;
  });
  let table = `<table class="curve"><tr><th>run</th><th>BLEU</th>${buckets.map((b) => `<th>${b.lo}-${b.hi}</th>`).join("")}<th>from</th></tr>`;
  runs.forEach((r) => {
    table += `<tr data-run="${esc(r.run)}"><td>${esc(r.run)}</td><td>${r.bleu.toFixed(1)}</td>`;
    table += r.buckets.map((b) => `<td>${b.bleu === null ? "-" : b.bleu.toFixed(1)}</td>`).join("");
    table += `<td>${esc(r.source)}, ${r.n} lines</td></tr>`;
  });
  $("chart").innerHTML = svg + "</svg>" + table + "<tr><td colspan=9 class=note>sentences a bucket: " + buckets.map((b) => b.n).join(" / ") + "</td></tr></table>";
}
async function curve() {
  const state = await ask("/api/curve", {});
  if (!state) { $("progress").hidden = true; return; }
  $("progress").hidden = state.state !== "running";
  $("progress").max = Math.max(state.total, 1); $("progress").value = state.done;
  $("curve-state").textContent = state.state === "running" ? `decoding ${state.done} / ${state.total} sentences` : state.state === "failed" ? state.error : "done";
  if (state.runs.length) chart(state.runs);
  if (state.state === "running") setTimeout(curve, 500);
}
$("curve").addEventListener("click", curve);
fetch("/api/runs").then((r) => r.json()).then((got) => {
  info = got;
  $("words").max = info.max_words;
  if (!info.test) {
    document.querySelectorAll(".needs-test").forEach((el) => { el.hidden = true; });
    $("test-note").textContent = info.test_note;
  } else $("line").max = info.test.lines;
  $("go").click();  // open on the example sentence, translated and drawn
});
</script>
</body>
</html>
"""
