/* attention.js: the attention view of transduce (plain ES2020, no dependencies).
   Defines one global, TransduceAttention, whose render(container, attention) draws one
   sentence's attention weights as lines between two rows of tokens, in the manner of
   Figures 3-5 of "Attention Is All You Need": the queries ("attending from") on top, the
   keys ("attended to") below, one colour per head, opacity and width = weight.
   Indices in data-* attributes and option values are 0-based; labels count from 1. */
var TransduceAttention = (() => {   // var: a property of window, like any script global
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#ad494a", "#637939",
    "#d6616b", "#3182bd", "#843c39"];
  const KINDS = {
    encoder_self: { label: "Encoder self-attention", top: "source_tokens", bottom: "source_tokens",
      caption: "Top: source tokens (attending from). Bottom: source tokens (attended to)." },
    decoder_self: { label: "Decoder self-attention", top: "target_tokens", bottom: "target_input_tokens",
      caption: "Top: output token i (attending from). Bottom: decoder input tokens (attended to); position i sees positions ≤ i." },
    cross: { label: "Encoder-decoder attention", top: "target_tokens", bottom: "source_tokens",
      caption: "Top: output tokens (attending from). Bottom: source tokens (attended to)." },
  };
  const MIN_WEIGHT = 0.01;          // lighter lines are not drawn
  const FONT_SIZE = 14, FONT_FAMILY = "system-ui, sans-serif";
  const PAD = 14, MIN_SLOT = 26, MARGIN = 12;

  const headColour = (h) => PALETTE[h % PALETTE.length];

  function html(tag, attrs = {}, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs = {}) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  }

  let measureCtx = null;
  function textWidth(s) {
    if (!measureCtx) {
      measureCtx = document.createElement("canvas").getContext("2d");
      if (measureCtx) measureCtx.font = `${FONT_SIZE}px ${FONT_FAMILY}`;
    }
    return measureCtx ? measureCtx.measureText(s).width : s.length * FONT_SIZE * 0.6;
  }

  // A SentencePiece piece as an SVG <text>: the word-start marker "▁" stays, but greyed.
  function tokenText(piece, attrs) {
    const t = svg("text", attrs);
    const s = String(piece);
    if (s.startsWith("▁")) {
      const mark = svg("tspan", { class: "attention-ws" });
      mark.textContent = "▁";
      t.append(mark, s.slice(1));
    } else {
      t.textContent = s;
    }
    return t;
  }

  // Horizontal centres of each token of a row, given the slot widths.
  function centres(slots, offset) {
    const xs = [];
    let x = offset;
    for (const w of slots) { xs.push(x + w / 2); x += w; }
    return xs;
  }

  function isMatrixStack(a) {
    return Array.isArray(a) && a.length > 0 && Array.isArray(a[0]) && a[0].length > 0;
  }

  function render(container, attention) {
    container.replaceChildren();
    container.classList.add("attention");
    if (!attention || typeof attention !== "object") {
      container.append(html("p", { class: "attention-empty" },
        "No attention to show for this sentence (an empty source has none)."));
      return;
    }
    const kinds = Object.keys(KINDS).filter((k) => isMatrixStack(attention[k]) &&
      (attention[KINDS[k].top] || []).length > 0 && (attention[KINDS[k].bottom] || []).length > 0);
    if (kinds.length === 0) {
      container.append(html("p", { class: "attention-empty" }, "This attention object holds no weights."));
      return;
    }
    // Settings survive a re-render into the same container (e.g. another sentence) when they fit.
    const prev = container.transduceAttentionState || {};
    const state = { ...prev, kind: kinds.includes(prev.kind) ? prev.kind : kinds[kinds.length - 1], focus: null };
    container.transduceAttentionState = state;

    const controls = html("div", { class: "attention-controls" });
    const kindSelect = html("select", { class: "attention-kind", "aria-label": "Attention" });
    for (const k of kinds) kindSelect.append(html("option", { value: k }, KINDS[k].label));
    kindSelect.value = state.kind;
    const layerSelect = html("select", { class: "attention-layer", "aria-label": "Layer" });
    const headBox = html("span", { class: "attention-heads" });
    const allButton = html("button", { type: "button", class: "attention-heads-all" }, "all");
    const noneButton = html("button", { type: "button", class: "attention-heads-none" }, "none");
    const headGroup = html("span", { class: "attention-headgroup" });
    headGroup.append(html("span", { class: "attention-label" }, "Heads:"), headBox, allButton, noneButton);
    controls.append(kindSelect, layerSelect, headGroup);
    const caption = html("p", { class: "attention-caption" });
    const scroller = html("div", { class: "attention-scroll" });
    container.append(controls, caption, scroller);

    let view = null;   // the svg root, its lines group, token x positions and rows

    function setupKind() {
      const stack = attention[state.kind];
      const layers = stack.length, heads = stack[0].length;
      // The last layer and all heads stay so; another layer or choice of heads is kept if it fits.
      if (!(state.layer < layers) || state.layer === state.layerCount - 1) state.layer = layers - 1;
      const all = !state.heads || state.heads.size === state.headCount;
      state.heads = new Set(all ? [] : [...state.heads].filter((h) => h < heads));
      if (!state.heads.size) for (let h = 0; h < heads; h++) state.heads.add(h);
      Object.assign(state, { layerCount: layers, headCount: heads });
      layerSelect.replaceChildren();
      for (let l = 0; l < layers; l++) layerSelect.append(html("option", { value: l }, `Layer ${l + 1}`));
      layerSelect.value = state.layer;
      headBox.replaceChildren();
      for (let h = 0; h < heads; h++) {
        const b = html("button", { type: "button", class: "attention-head", "data-head": h,
          title: `head ${h + 1}`, style: `--head-colour: ${headColour(h)}` }, String(h + 1));
        headBox.append(b);
      }
      state.focus = null;
      caption.textContent = KINDS[state.kind].caption + " Click a token to isolate its attention.";
      buildSvg();
      update();
    }

    function buildSvg() {
      const top = attention[KINDS[state.kind].top], bottom = attention[KINDS[state.kind].bottom];
      const slot = (p) => Math.max(MIN_SLOT, textWidth(String(p)) + PAD);
      let topSlots = top.map(slot), bottomSlots = bottom.map(slot);
      if (top.length === bottom.length) {   // same length: keep position i above position i
        topSlots = topSlots.map((w, i) => Math.max(w, bottomSlots[i]));
        bottomSlots = topSlots;
      }
      const sum = (a) => a.reduce((s, w) => s + w, 0);
      const inner = Math.max(sum(topSlots), sum(bottomSlots));
      const width = inner + 2 * MARGIN;
      const gap = Math.round(Math.min(320, Math.max(150, inner / 4)));
      const yTop = FONT_SIZE + 8, yBottom = yTop + gap + FONT_SIZE;
      const root = svg("svg", { class: "attention-view", width, height: yBottom + 10,
        viewBox: `0 0 ${width} ${yBottom + 10}`, "font-size": FONT_SIZE, "font-family": FONT_FAMILY });
      const xTop = centres(topSlots, MARGIN + (inner - sum(topSlots)) / 2);
      const xBottom = centres(bottomSlots, MARGIN + (inner - sum(bottomSlots)) / 2);
      const lines = svg("g", { class: "attention-lines" });
      root.append(lines);
      const row = (tokens, xs, slots, y, role) => tokens.map((p, i) => {
        const g = svg("g", { class: `attention-token ${role}`, "data-index": i });
        g.append(svg("rect", { x: xs[i] - slots[i] / 2 + 1, y: y - FONT_SIZE - 2, width: slots[i] - 2,
          height: FONT_SIZE + 8, rx: 3 }), tokenText(p, { x: xs[i], y, "text-anchor": "middle" }));
        const title = svg("title");
        title.textContent = `${role === "query" ? "from" : "to"} ${i + 1}: ${p}`;
        g.append(title);
        root.append(g);
        return g;
      });
      view = { root, lines, xTop, xBottom, y1: yTop + 6, y2: yBottom - FONT_SIZE - 3, top, bottom,
        topTokens: row(top, xTop, topSlots, yTop, "query"),
        bottomTokens: row(bottom, xBottom, bottomSlots, yBottom, "key") };
      root.addEventListener("click", (ev) => {
        const tok = ev.target.closest(".attention-token");
        const focus = tok && { role: tok.classList.contains("query") ? "query" : "key",
          index: Number(tok.dataset.index) };
        const same = focus && state.focus && focus.role === state.focus.role && focus.index === state.focus.index;
        state.focus = same ? null : focus;
        update();
      });
      scroller.replaceChildren(root);
    }

    // Redraws the lines for the current layer, heads and focus.
    function update() {
      const weights = attention[state.kind][state.layer];
      for (const b of headBox.children) b.setAttribute("aria-pressed", state.heads.has(Number(b.dataset.head)));
      const { lines, xTop, xBottom, y1, y2, top, bottom } = view;
      const f = state.focus;
      const frag = document.createDocumentFragment();
      const step = Math.min(2.5, (MIN_SLOT - 6) / state.headCount);   // heads side by side
      for (const h of [...state.heads].sort((a, b) => a - b)) {
        const m = weights[h], colour = headColour(h), dx = (h - (state.headCount - 1) / 2) * step;
        for (let i = 0; i < top.length; i++) {
          if (f && f.role === "query" && f.index !== i) continue;
          for (let j = 0; j < bottom.length; j++) {
            if (f && f.role === "key" && f.index !== j) continue;
            const w = m[i] && m[i][j];
            if (!(w >= MIN_WEIGHT)) continue;
            const line = svg("line", { class: "attention-line", "data-head": h, "data-query": i, "data-key": j,
              x1: xTop[i] + dx, y1, x2: xBottom[j] + dx, y2, stroke: colour,
              "stroke-opacity": Math.min(1, w).toFixed(3), "stroke-width": (1 + 3 * w).toFixed(2) });
            const title = svg("title");
            title.textContent = `head ${h + 1}: ${top[i]} → ${bottom[j]}  ${w.toFixed(3)}`;
            line.append(title);
            frag.append(line);
          }
        }
      }
      lines.replaceChildren(frag);
      const mark = (tokens, role) => tokens.forEach((g, i) =>
        g.classList.toggle("selected", !!f && f.role === role && f.index === i));
      mark(view.topTokens, "query");
      mark(view.bottomTokens, "key");
      view.root.classList.toggle("focused", !!f);
    }

    kindSelect.addEventListener("change", () => { state.kind = kindSelect.value; setupKind(); });
    layerSelect.addEventListener("change", () => { state.layer = Number(layerSelect.value); update(); });
    headBox.addEventListener("click", (ev) => {
      const b = ev.target.closest(".attention-head");
      if (!b) return;
      const h = Number(b.dataset.head);
      if (state.heads.has(h)) state.heads.delete(h); else state.heads.add(h);
      update();
    });
    allButton.addEventListener("click", () => {
      for (const b of headBox.children) state.heads.add(Number(b.dataset.head));
      update();
    });
    noneButton.addEventListener("click", () => { state.heads.clear(); update(); });
    setupKind();
  }

  return { render, palette: PALETTE };
})();
