// The evaluation bar beside the board and the graph of the evaluation over
// every move of the shown line. Both show the first side's view (sente's,
// Black's in othello; White's in chess, whose page turns the colours): its
// share grows from its side of the board. opts are the game module's
// numbers: formatScore, barText, tickText, winScale, graphTicks.

import { winChance, formatScore } from './notation.js';
import { t } from './i18n.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export class EvalBar {
  constructor(el, opts = {}) {
    this.el = el;
    this.opts = opts;
    el.classList.add('eval-bar');
    el.innerHTML = '<div class="eval-fill"></div><div class="eval-mid"></div><span class="eval-label"></span>';
    this.fill = el.querySelector('.eval-fill');
    this.label = el.querySelector('.eval-label');
    this.set(null);
  }

  // set shows a Black's-view score ({cp} | {mate}) or nothing (null): the
  // fill, and the number at the end of the side ahead.
  set(score) {
    const o = this.opts;
    const v = score ? winChance(score, o.winScale) : 0;
    this.fill.style.height = `${((1 + v) / 2) * 100}%`;
    this.el.classList.toggle('empty', !score);
    this.label.textContent = score ? (o.barText || barText)(score) : '';
    this.label.dataset.lead = score ? leader(score) : '';
    this.el.dataset.value = score ? (o.formatScore || formatScore)(score) : '';
  }

  setFlipped(flipped) { this.el.classList.toggle('flipped', flipped); }
}

// barText is a score short enough for the bar's width: "+350", "−1.2k",
// "#5" (Black mates in 5), "#-3".
export function barText(s) {
  if (s.mate !== undefined) return formatScore(s);
  const a = Math.abs(s.cp);
  if (a === 0) return '0';
  const n = a < 1000 ? String(a) : a < 10000 ? `${(a / 1000).toFixed(1)}k` : `${Math.round(a / 1000)}k`;
  return (s.cp > 0 ? '+' : '−') + n;
}

// leader is the side a score favours ('b' on equal), whose end of the bar
// shows the number.
function leader(s) {
  if (s.mate !== undefined) return s.winner;
  return s.cp >= 0 ? 'b' : 'w';
}

// segments splits points sorted by ply into runs of consecutive plies: the
// curve joins only positions next to each other, never across positions
// not analysed (yet).
export function segments(points) {
  const out = [];
  for (const p of points) {
    const run = out.at(-1);
    if (run && p.ply === run.at(-1).ply + 1) run.push(p);
    else out.push([p]);
  }
  return out;
}

// MARKED are the judgements the graph marks: the errors a player looks
// for; inaccuracies stay in the move list, so that the curve stays visible.
export const MARKED = ['mistake', 'blunder'];

// The y axis is labelled at these Black's-view centipawns (the curve is the
// win chance, so equal steps in cp are not equal steps on screen).
const Y_TICKS = [3000, 1000, 0, -1000, -3000];

// xStep is the move-number step of the x axis' labels for a line of n moves.
export function xStep(n) {
  if (n <= 12) return 2;
  if (n <= 30) return 5;
  if (n <= 80) return 10;
  if (n <= 200) return 20;
  if (n <= 500) return 50;
  return 100;
}

export class EvalGraph {
  // onPick(ply) is called when the graph is clicked.
  constructor(el, onPick, opts = {}) {
    this.el = el;
    this.opts = opts;
    this.ticks = opts.graphTicks || Y_TICKS;
    this.W = 600;
    this.H = 120;
    el.classList.add('eval-graph');
    el.innerHTML = '<div class="g-yaxis" aria-hidden="true"></div><div class="g-plot"></div><div class="g-xaxis" aria-hidden="true"></div>';
    this.plot = el.querySelector('.g-plot');
    this.plot.dataset.empty = t('graph.empty');
    this.yaxis = el.querySelector('.g-yaxis');
    this.xaxis = el.querySelector('.g-xaxis');
    const svg = document.createElementNS(SVG_NS, 'svg');
    svg.setAttribute('viewBox', `0 0 ${this.W} ${this.H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', t('graph.title'));
    this.plot.append(svg);
    this.svg = svg;
    this.plot.addEventListener('click', (e) => {
      const r = this.plot.getBoundingClientRect();
      const f = (e.clientX - r.left) / r.width;
      const pad = this.pad / this.W;
      if (this.total > 0) onPick(Math.max(0, Math.min(this.total, Math.round(((f - pad) / (1 - 2 * pad)) * this.total))));
    });
    this.total = 0;
    this.pad = 8; // keeps the first and last dots inside the frame
    const tick = opts.tickText || ((cp) => (cp === 0 ? '0' : `${cp > 0 ? '+' : '−'}${Math.abs(cp) / 1000}k`));
    this.yaxis.innerHTML = this.ticks.map((cp) => `<span>${tick(cp)}</span>`).join('');
    // CSP allows no inline style attributes: positions are set through CSSOM.
    this.yaxis.querySelectorAll('span').forEach((s, i) => { s.style.top = `${(this.y({ cp: this.ticks[i] }) / this.H) * 100}%`; });
    this.draw({ points: [], cursor: 0, total: 0 });
  }

  x(ply) { return this.pad + (ply / Math.max(this.total, 1)) * (this.W - 2 * this.pad); }
  y(s) { return this.H / 2 - winChance(s, this.opts.winScale) * (this.H / 2 - 4); }

  // draw takes points [{ply, score}] (Black's view), the cursor, the
  // number of moves in the line, marks [{ply, judgement, score?}] (judged
  // moves, drawn at the position after them) and the number of the first
  // move (1 unless the record starts later).
  draw({ points, cursor, total, marks = [] }) {
    const { W, H } = this;
    this.total = total;
    const x = (p) => this.x(p);
    const y = (s) => this.y(s);
    const pts = points.filter((p) => p.ply <= total).sort((a, b) => a.ply - b.ply);
    this.el.dataset.points = String(pts.length);
    this.el.dataset.total = String(total);
    // The area between the curve and the 0 line is filled, the first
    // side's colour above it and the second's below (clipped halves), so a
    // game's swings show as they are.
    let html = `<defs><clipPath id="g-clip-up"><rect x="0" y="0" width="${W}" height="${H / 2}"/></clipPath>` +
      `<clipPath id="g-clip-down"><rect x="0" y="${H / 2}" width="${W}" height="${H / 2}"/></clipPath></defs>` +
      `<rect class="g-bg" x="0" y="0" width="${W}" height="${H}"/>`;
    const step = xStep(total);
    for (let p = step; p < total; p += step) {
      html += `<line class="g-grid" x1="${x(p)}" y1="0" x2="${x(p)}" y2="${H}" vector-effect="non-scaling-stroke"/>`;
    }
    for (const cp of this.ticks) {
      if (cp) html += `<line class="g-grid" x1="0" y1="${y({ cp })}" x2="${W}" y2="${y({ cp })}" vector-effect="non-scaling-stroke"/>`;
    }
    // One filled run per stretch of analysed positions; a lone position is
    // a short bar (a dot would be squashed by the aspect).
    const runs = segments(pts);
    this.el.dataset.segments = String(runs.length);
    for (const run of runs) {
      const xs = run.map((p) => x(p.ply));
      if (run.length === 1) xs.push(xs[0]), xs[0] -= 1.5, xs[1] += 1.5;
      const ys = run.map((p) => y(p.score));
      if (run.length === 1) ys.push(ys[0]);
      const line = xs.map((px, i) => `${px.toFixed(1)},${ys[i].toFixed(1)}`);
      const area = `${xs[0].toFixed(1)},${H / 2} ${line.join(' ')} ${xs.at(-1).toFixed(1)},${H / 2}`;
      html += `<polygon class="g-sente" clip-path="url(#g-clip-up)" points="${area}"/>`;
      html += `<polygon class="g-gote" clip-path="url(#g-clip-down)" points="${area}"/>`;
      html += `<polyline class="g-line" points="${line.join(' ')}" vector-effect="non-scaling-stroke"/>`;
    }
    html += `<line class="g-mid" x1="0" y1="${H / 2}" x2="${W}" y2="${H / 2}" vector-effect="non-scaling-stroke"/>`;
    if (total > 0) {
      html += `<line class="g-cursor" x1="${x(cursor)}" y1="0" x2="${x(cursor)}" y2="${H}" vector-effect="non-scaling-stroke"/>`;
    }
    this.svg.innerHTML = html;

    // Dots, marks and labels are HTML so they stay round and readable
    // whatever the graph's aspect.
    this.plot.querySelectorAll('.g-dot, .g-mark').forEach((d) => d.remove());
    const place = (d, ply, score) => {
      d.style.left = `${(x(ply) / W) * 100}%`;
      d.style.top = `${(y(score) / H) * 100}%`;
      this.plot.append(d);
    };
    // Only the shown position gets a dot, and only mistakes and blunders a
    // mark, both small: the curve stays readable under them.
    const byPly = new Map(pts.map((p) => [p.ply, p.score]));
    const here = byPly.get(cursor);
    if (here) {
      const d = document.createElement('span');
      d.className = 'g-dot current';
      d.title = `${cursor}: ${(this.opts.formatScore || formatScore)(here)}`;
      place(d, cursor, here);
    }
    for (const m of marks) {
      if (m.ply > total || !MARKED.includes(m.judgement) || !byPly.has(m.ply)) continue;
      const d = document.createElement('span');
      d.className = `g-mark ${m.judgement}`;
      d.dataset.testid = 'graph-mark';
      d.dataset.ply = String(m.ply);
      d.dataset.judgement = m.judgement;
      d.title = `${m.ply}: ${t(`judge.${m.judgement}`)}`;
      place(d, m.ply, byPly.get(m.ply));
    }
    let labels = '';
    if (total > 0) for (let p = 0; p <= total; p += step) labels += `<span data-ply="${p}">${p}</span>`;
    this.xaxis.innerHTML = labels;
    this.xaxis.querySelectorAll('span').forEach((s) => { s.style.left = `${(x(Number(s.dataset.ply)) / W) * 100}%`; });
    this.el.classList.toggle('empty', pts.length === 0);
  }
}
