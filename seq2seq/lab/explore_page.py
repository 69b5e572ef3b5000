# ruff: noqa: E501  (the page's HTML and JavaScript keep their own line lengths)
"""The explorer's one page (seq2seq/lab/explore.py serves it): plain HTML and
JavaScript, no library and nothing fetched from elsewhere, so it works with
no network. A heatmap is an SVG grid: one row per output subword (and the
end of sentence), one column per source subword; pointing at an output token
outlines its row and lists its weights over the source."""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>seq2seq explore</title>
<style>
body { font-family: sans-serif; margin: 1.5em; max-width: 70em; }
textarea { width: 100%; font-size: 1.1em; }
.run { border: 1px solid #ccc; border-radius: 6px; padding: 0.8em; margin: 1em 0; }
.tok { padding: 0 2px; cursor: pointer; border-radius: 3px; }
.tok:hover, .tok.on { background: #ffd54f; }
#error { color: #b00020; }
.note { color: #555; font-style: italic; }
.weights { font-family: monospace; white-space: pre-wrap; color: #333; }
</style>
</head>
<body>
<h1>What does attention read?</h1>
<p>Type an English sentence: every run translates it; point at an output
word to see where the decoder looked for it.</p>
<textarea id="text" rows="2">The man reads a book because the dog sleeps.</textarea>
<p>
<label>search <select id="beam">
<option value="1">greedy</option><option value="3">beam 3</option>
<option value="5">beam 5</option><option value="10">beam 10</option>
</select></label>
<button id="go">Translate</button>
</p>
<p id="error"></p>
<div id="runs"></div>
<script>
const $ = (id) => document.getElementById(id);
const esc = (s) => s.replace(/[&<>]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]));
function heatmap(run) {
  const src = [...run.source_tokens, "</s>"];
  const tgt = [...run.tokens, "</s>"].slice(0, run.weights.length);  // EOS row if written
  const cell = 22, left = 110, top = 90;
  const w = left + cell * src.length, h = top + cell * tgt.length;
  let svg = `<svg class="heatmap" width="${w}" height="${h}">`;
  src.forEach((s, j) => {
    const x = left + j * cell + cell / 2;
    svg += `<text x="${x}" y="${top - 6}" font-size="11" transform="rotate(-60 ${x} ${top - 6})">${esc(s)}</text>`;
  });
  tgt.forEach((t, i) => {
    svg += `<text x="${left - 6}" y="${top + i * cell + 15}" font-size="11" text-anchor="end">${esc(t)}</text>`;
    run.weights[i].forEach((v, j) => {
      const shade = Math.round(255 * (1 - v));
      svg += `<rect class="cell" data-row="${i}" x="${left + j * cell}" y="${top + i * cell}" width="${cell - 1}" height="${cell - 1}" fill="rgb(${shade},${shade},255)"><title>${v.toFixed(3)}</title></rect>`;
    });
  });
  return svg + `<rect id="row-mark" x="${left}" y="0" width="${cell * src.length}" height="${cell}" fill="none" stroke="#e65100" stroke-width="2" visibility="hidden"/></svg>`;
}
function point(card, run, i) {
  const src = [...run.source_tokens, "</s>"];
  const mark = card.querySelector("#row-mark");
  mark.setAttribute("y", 90 + i * 22);
  mark.setAttribute("visibility", "visible");
  card.querySelectorAll(".tok").forEach((el) => el.classList.toggle("on", Number(el.dataset.i) === i));
  const pairs = run.weights[i].map((v, j) => [v, src[j]]).sort((a, b) => b[0] - a[0]);
  card.querySelector(".weights").textContent =
    `${run.tokens[i] || "</s>"} read: ` + pairs.slice(0, 5).map(([v, s]) => `${s} ${v.toFixed(2)}`).join(", ");
}
function show(answer) {
  $("runs").innerHTML = "";
  answer.runs.forEach((run) => {
    const card = document.createElement("div");
    card.className = "run";
    card.dataset.run = run.run;
    const toks = run.tokens.map((t, i) => `<span class="tok" data-i="${i}">${esc(t)}</span>`).join(" ");
    let body = `<h2>${esc(run.run)} <small>(${esc(run.mode)})</small></h2>`;
    body += `<p class="hypothesis">${esc(run.hypothesis)}</p><p>${toks}</p>`;
    if (run.unknown) body += `<p class="note">${run.unknown} source subwords are unknown to this model (another script?)</p>`;
    body += run.weights ? heatmap(run) + `<p class="weights"></p>` : `<p class="note">${esc(run.note)}</p>`;
    card.innerHTML = body;
    if (run.weights) card.querySelectorAll(".tok").forEach((el) =>
      el.addEventListener("mouseenter", () => point(card, run, Number(el.dataset.i))));
    $("runs").appendChild(card);
  });
}
$("go").addEventListener("click", async () => {
  $("error").textContent = "";
  $("runs").innerHTML = "<p>translating...</p>";
  const body = JSON.stringify({text: $("text").value, beam: Number($("beam").value)});
  const reply = await fetch("/api/translate", {method: "POST", body});
  const answer = await reply.json();
  if (!reply.ok) { $("runs").innerHTML = ""; $("error").textContent = answer.error; return; }
  show(answer);
});
</script>
</body>
</html>
"""
