// The evaluation bar beside the board and the graph of the evaluation over
// the moves analysed so far. Both show Black's (sente's) view: sente's share
// is dark and grows from sente's side of the board.

import { winChance, formatScore } from './notation.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export class EvalBar {
  constructor(el) {
    this.el = el;
    el.classList.add('eval-bar');
    el.innerHTML = '<div class="eval-fill"></div><div class="eval-mid"></div><span class="eval-label"></span>';
    this.fill = el.querySelector('.eval-fill');
    this.label = el.querySelector('.eval-label');
    this.set(null);
  }

  // set shows a Black's-view score ({cp} | {mate}) or nothing (null).
  set(score) {
    const v = score ? winChance(score) : 0;
    this.fill.style.height = `${((1 + v) / 2) * 100}%`;
    this.el.classList.toggle('empty', !score);
    this.label.textContent = score ? formatScore(score) : '';
    this.el.dataset.value = score ? formatScore(score) : '';
  }

  setFlipped(flipped) { this.el.classList.toggle('flipped', flipped); }
}

export class EvalGraph {
  // onPick(ply) is called when the graph is clicked.
  constructor(el, onPick) {
    this.el = el;
    this.W = 600;
    this.H = 120;
    el.classList.add('eval-graph');
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', `0 0 ${this.W} ${this.H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'evaluation graph');
    el.append(svg);
    this.svg = svg;
    svg.addEventListener('click', (e) => {
      const r = svg.getBoundingClientRect();
      if (this.total > 0) onPick(Math.round(((e.clientX - r.left) / r.width) * this.total));
    });
    this.total = 0;
    this.draw([], 0, 0);
  }

  // draw takes points [{ply, score}] (Black's view), the cursor and the
  // number of moves in the line.
  draw(points, cursor, total) {
    const { W, H } = this;
    this.total = total;
    const n = Math.max(total, 1);
    const pad = 8; // keeps the first and last dots inside the frame
    const x = (ply) => pad + (ply / n) * (W - 2 * pad);
    const y = (s) => H / 2 - winChance(s) * (H / 2 - 4);
    const pts = points.filter((p) => p.ply <= total).sort((a, b) => a.ply - b.ply);
    this.el.dataset.points = String(pts.length);
    let html = `<rect class="g-gote" x="0" y="0" width="${W}" height="${H}"/>`;
    if (pts.length) {
      const line = pts.map((p) => `${x(p.ply).toFixed(1)},${y(p.score).toFixed(1)}`);
      const first = x(pts[0].ply).toFixed(1), last = x(pts.at(-1).ply).toFixed(1);
      html += `<polygon class="g-sente" points="${first},${H} ${line.join(' ')} ${last},${H}"/>`;
      html += `<polyline class="g-line" points="${line.join(' ')}" vector-effect="non-scaling-stroke"/>`;
    }
    html += `<line class="g-mid" x1="0" y1="${H / 2}" x2="${W}" y2="${H / 2}" vector-effect="non-scaling-stroke"/>`;
    if (total > 0) {
      html += `<line class="g-cursor" x1="${x(cursor)}" y1="0" x2="${x(cursor)}" y2="${H}" vector-effect="non-scaling-stroke"/>`;
    }
    this.svg.innerHTML = html;
    // Dots are HTML so they stay round whatever the graph's aspect.
    this.el.querySelectorAll('.g-dot').forEach((d) => d.remove());
    for (const p of pts) {
      const d = document.createElement('span');
      d.className = 'g-dot' + (p.ply === cursor ? ' current' : '');
      d.style.left = `${(x(p.ply) / W) * 100}%`;
      d.style.top = `${(y(p.score) / H) * 100}%`;
      d.title = `${p.ply}: ${formatScore(p.score)}`;
      this.el.append(d);
    }
    this.el.classList.toggle('empty', pts.length === 0);
  }
}
