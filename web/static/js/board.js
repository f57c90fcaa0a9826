// The board: a 9×9 grid with both hands, pieces drawn as SVG pentagons with
// their kanji, moves by click or drag (pointer events, so mouse, pen and
// touch alike), a promotion choice, and an SVG layer for arrows.
//
// The board knows no rules. It is given the legal moves in USI form (from
// usid's /v1/validate) and accepts exactly those; a move is reported through
// onMove(usi) and shown only when the page sets the next position.

import { HAND_KINDS, squareIndex, squareName } from './sfen.js';
import { pieceKanji, sideKeys, fileLabel, rankLabel } from './notation.js';
import { t } from './i18n.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const DRAG_THRESHOLD = 5; // px before a press becomes a drag rather than a click

// pieceSvg draws one piece pointing up; CSS turns the other side's pieces.
export function pieceSvg(kind, color) {
  const promoted = kind[0] === '+';
  const k = pieceKanji(kind, color);
  return `<svg viewBox="0 0 100 100" aria-hidden="true" focusable="false">` +
    `<path class="piece-body" d="M50 4 L79 15.5 L91 96 L9 96 L21 15.5 Z"/>` +
    `<text class="piece-text${promoted ? ' promoted' : ''}" x="50" y="58" ` +
    `text-anchor="middle" dominant-baseline="central">${k}</text></svg>`;
}

// The gradient the pieces are filled with lives once in the document.
function ensureDefs() {
  if (document.getElementById('usid-piece-defs')) return;
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.id = 'usid-piece-defs';
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('width', '0');
  svg.setAttribute('height', '0');
  svg.style.position = 'absolute';
  svg.innerHTML = '<defs><linearGradient id="usid-wood" x1="0" y1="0" x2="0.35" y2="1">' +
    '<stop offset="0" stop-color="#fbe8bd"/><stop offset="0.55" stop-color="#f0cf8c"/>' +
    '<stop offset="1" stop-color="#dfb46a"/></linearGradient></defs>';
  document.body.prepend(svg);
}

function el(tag, cls, attrs = {}) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

export class Board {
  constructor(root, { interactive = true, onMove = null } = {}) {
    ensureDefs();
    this.root = root;
    root.dataset.illegal = t('board.illegal');
    this.interactive = interactive;
    this.onMove = onMove;
    this.flipped = false;
    this.handicap = false; // the hands are 下手's and 上手's, not 先手's and 後手's
    this.pos = null;
    this.lastMove = null;
    this.check = false;
    this.legal = null; // Map source ('7g' | 'P*') -> Map target index -> [usi...]
    this.arrows = [];
    this.selected = null; // {square: index} | {drop: 'P'}
    this.press = null; // pointer press that may become a drag
    this.promotion = null;
    this.build();
  }

  build() {
    const r = this.root;
    r.classList.add('board-area');
    r.innerHTML = '';
    this.handTop = el('div', 'hand hand-top');
    this.handBottom = el('div', 'hand hand-bottom');
    const frame = el('div', 'board-frame');
    this.filesEl = el('div', 'coords coords-files', { 'aria-hidden': 'true' });
    this.ranksEl = el('div', 'coords coords-ranks', { 'aria-hidden': 'true' });
    this.boardEl = el('div', 'board', { 'data-testid': 'board', role: 'group', 'aria-label': t('aria.shogiboard') });
    // Grid lines and the four star points, drawn once at the board's aspect.
    const lines = document.createElementNS(SVG_NS, 'svg');
    lines.setAttribute('class', 'lines');
    lines.setAttribute('viewBox', '0 0 90 98');
    lines.setAttribute('preserveAspectRatio', 'none');
    let d = '';
    for (let i = 1; i < 9; i++) d += `M${i * 10} 0V98M0 ${(i * 98) / 9}H90`;
    const stars = [[30, 3], [60, 3], [30, 6], [60, 6]]
      .map(([x, r]) => `<circle cx="${x}" cy="${(r * 98) / 9}" r="0.9"/>`).join('');
    lines.innerHTML = `<path d="${d}"/>${stars}`;
    this.boardEl.append(lines);
    this.squares = [];
    for (let i = 0; i < 81; i++) {
      const sq = el('div', 'sq', { 'data-square': squareName(i) });
      this.squares.push(sq);
      this.boardEl.append(sq);
    }
    frame.append(this.filesEl, this.boardEl, this.ranksEl);
    this.arrowLayer = document.createElementNS(SVG_NS, 'svg');
    this.arrowLayer.setAttribute('class', 'arrows');
    this.arrowLayer.setAttribute('data-testid', 'arrows');
    this.arrowLayer.setAttribute('aria-hidden', 'true');
    r.append(this.handTop, frame, this.handBottom, this.arrowLayer);
    this.layout();

    if (this.interactive) {
      r.addEventListener('pointerdown', (e) => this.onPointerDown(e));
      r.addEventListener('pointermove', (e) => this.onPointerMove(e));
      r.addEventListener('pointerup', (e) => this.onPointerUp(e));
      r.addEventListener('pointercancel', () => this.endPress());
      r.addEventListener('contextmenu', (e) => { if (this.press) e.preventDefault(); });
      document.addEventListener('keydown', (e) => {
        if (e.key === 'Escape' && (this.promotion || this.selected)) { this.cancelPromotion(); this.select(null); }
      });
    }
    new ResizeObserver(() => this.drawArrows()).observe(r);
  }

  // layout places squares and coordinates for the current orientation.
  layout() {
    this.boardEl.classList.toggle('flipped', this.flipped);
    this.root.classList.toggle('flipped', this.flipped);
    for (let i = 0; i < 81; i++) {
      let col = i % 9, row = Math.floor(i / 9);
      if (this.flipped) { col = 8 - col; row = 8 - row; }
      this.squares[i].style.gridColumn = String(col + 1);
      this.squares[i].style.gridRow = String(row + 1);
    }
    const files = this.flipped ? [1, 2, 3, 4, 5, 6, 7, 8, 9] : [9, 8, 7, 6, 5, 4, 3, 2, 1];
    const ranks = this.flipped ? [9, 8, 7, 6, 5, 4, 3, 2, 1] : [1, 2, 3, 4, 5, 6, 7, 8, 9];
    this.filesEl.innerHTML = files.map((f) => `<span>${fileLabel(f)}</span>`).join('');
    this.ranksEl.innerHTML = ranks.map((r) => `<span>${rankLabel(r)}</span>`).join('');
  }

  setFlipped(flipped) {
    if (this.flipped === flipped) return;
    this.flipped = flipped;
    this.cancelPromotion();
    this.layout();
    this.render();
  }

  // setPosition shows pos; lastMove (USI) is highlighted, check marks the
  // king of the side to move; handicap: a position of a handicap game (its
  // hands are named 下手 and 上手). Legal moves come separately (setLegal).
  setPosition(pos, { lastMove = null, check = false, handicap = false } = {}) {
    this.pos = pos;
    this.handicap = handicap;
    this.lastMove = lastMove;
    this.check = check;
    this.legal = null;
    this.cancelPromotion();
    this.select(null, false);
    this.render();
  }

  // setLegal takes usid's legal_moves for the shown position (or null while
  // they are not known: nothing can be moved then).
  setLegal(moves) {
    if (!moves) { this.legal = null; this.root.dataset.ready = 'false'; return; }
    const legal = new Map();
    for (const usi of moves) {
      const src = usi.slice(0, 2); // a square ('7g') or a drop ('P*')
      const to = squareIndex(usi.slice(2, 4));
      if (!legal.has(src)) legal.set(src, new Map());
      const byTo = legal.get(src);
      if (!byTo.has(to)) byTo.set(to, []);
      byTo.get(to).push(usi);
    }
    this.legal = legal;
    this.root.dataset.ready = 'true';
    if (this.selected) this.renderMarks();
  }

  // setCheck marks (or unmarks) the king of the side to move as in check.
  setCheck(check) {
    this.check = check;
    this.renderMarks();
  }

  setArrows(arrows) {
    this.arrows = arrows || [];
    this.drawArrows();
  }

  render() {
    const pos = this.pos;
    if (!pos) return;
    for (let i = 0; i < 81; i++) {
      const sq = this.squares[i];
      const p = pos.board[i];
      const key = p ? p.color + p.kind : '';
      if (sq.dataset.key !== key) {
        sq.dataset.key = key;
        sq.innerHTML = p ? `<div class="piece ${p.color}" data-piece="${p.kind}" data-color="${p.color}">${pieceSvg(p.kind, p.color)}</div>` : '';
      }
    }
    // Gote's hand is across the board from whoever sits at the bottom.
    const top = this.flipped ? 'b' : 'w';
    this.renderHand(this.handTop, top);
    this.renderHand(this.handBottom, top === 'b' ? 'w' : 'b');
    this.root.dataset.turn = pos.turn;
    this.renderMarks();
    this.drawArrows();
  }

  renderHand(box, color) {
    const pos = this.pos;
    box.setAttribute('data-testid', `hand-${color}`);
    box.dataset.color = color;
    box.classList.toggle('to-move', pos.turn === color);
    let html = `<div class="hand-label"><span class="mark">${color === 'b' ? '☗' : '☖'}</span>` +
      `<span class="who">${t(sideKeys(this.handicap, true)[color])}</span></div><div class="hand-pieces">`;
    let any = false;
    for (const k of HAND_KINDS) {
      const n = pos.hands[color][k];
      if (!n) continue;
      any = true;
      html += `<div class="hand-piece ${color}" data-hand-piece="${k}" data-color="${color}" data-count="${n}">` +
        `<div class="piece ${color}" data-piece="${k}">${pieceSvg(k, color)}</div>` +
        (n > 1 ? `<span class="count">${n}</span>` : '') + '</div>';
    }
    if (!any) html += `<span class="hand-empty">${t('board.hand.empty')}</span>`;
    box.innerHTML = html + '</div>';
  }

  // renderMarks redraws highlights: last move, selection, targets, check.
  renderMarks() {
    const pos = this.pos;
    for (const sq of this.squares) sq.classList.remove('last', 'selected', 'dest', 'capture', 'check');
    this.root.querySelectorAll('.hand-piece.selected').forEach((h) => h.classList.remove('selected'));
    if (!pos) return;
    if (this.lastMove) {
      const m = this.lastMove;
      if (m[1] !== '*') this.squares[squareIndex(m.slice(0, 2))]?.classList.add('last');
      this.squares[squareIndex(m.slice(2, 4))]?.classList.add('last');
    }
    if (this.check) {
      const k = pos.board.findIndex((p) => p && p.kind === 'K' && p.color === pos.turn);
      if (k >= 0) this.squares[k].classList.add('check');
    }
    const sel = this.selected;
    if (!sel) return;
    if (sel.square !== undefined) this.squares[sel.square].classList.add('selected');
    else this.root.querySelector(`.hand-piece[data-color="${pos.turn}"][data-hand-piece="${sel.drop}"]`)?.classList.add('selected');
    for (const to of this.targets(sel).keys()) {
      this.squares[to].classList.add('dest');
      if (pos.board[to]) this.squares[to].classList.add('capture');
    }
  }

  targets(sel) {
    if (!this.legal || !sel) return new Map();
    const src = sel.square !== undefined ? squareName(sel.square) : `${sel.drop}*`;
    return this.legal.get(src) || new Map();
  }

  select(sel, redraw = true) {
    this.selected = sel;
    if (redraw) this.renderMarks();
  }

  // --- input -------------------------------------------------------------

  // sourceAt names what a press landed on: a board square or a hand piece.
  sourceAt(target) {
    const sq = target.closest('[data-square]');
    if (sq && this.boardEl.contains(sq)) return { square: squareIndex(sq.dataset.square) };
    const hp = target.closest('.hand-piece');
    if (hp) return { drop: hp.dataset.handPiece, color: hp.dataset.color };
    return null;
  }

  ownPiece(src) {
    const pos = this.pos;
    if (!pos || !src) return false;
    if (src.drop) return src.color === pos.turn;
    const p = pos.board[src.square];
    return !!p && p.color === pos.turn;
  }

  onPointerDown(e) {
    if (e.button !== 0 || !this.pos || this.editing) return; // the editor handles presses then
    if (this.promotion) {
      // Only a press that starts on the dialog may pick (see askPromotion).
      if (e.target.closest('.promotion')) this.promotion.dataset.armed = 'true';
      else this.cancelPromotion();
      return;
    }
    const src = this.sourceAt(e.target);
    // A press on a target of the selected piece completes a click-click move.
    if (src && src.square !== undefined && this.selected && this.targets(this.selected).has(src.square)) {
      e.preventDefault();
      this.tryMove(this.selected, src.square);
      return;
    }
    if (!this.ownPiece(src)) { this.select(null); return; }
    e.preventDefault();
    const same = this.selected && (src.drop ? this.selected.drop === src.drop : this.selected.square === src.square);
    this.select(src.drop ? { drop: src.drop } : { square: src.square });
    this.press = { id: e.pointerId, src: this.selected, x: e.clientX, y: e.clientY, wasSelected: same, ghost: null };
    this.root.setPointerCapture(e.pointerId);
  }

  onPointerMove(e) {
    const pr = this.press;
    if (!pr || pr.id !== e.pointerId) return;
    if (!pr.ghost) {
      if (Math.hypot(e.clientX - pr.x, e.clientY - pr.y) < DRAG_THRESHOLD) return;
      this.startDrag(pr);
    }
    pr.ghost.style.transform = `translate(${e.clientX - pr.size / 2}px, ${e.clientY - (pr.size * 1.09) / 2}px)`;
    const to = this.squareAtPoint(e.clientX, e.clientY);
    this.squares.forEach((s, i) => s.classList.toggle('hover', i === to && this.targets(pr.src).has(i)));
  }

  startDrag(pr) {
    const from = pr.src.square !== undefined
      ? this.squares[pr.src.square].querySelector('.piece')
      : this.root.querySelector(`.hand-piece[data-color="${this.pos.turn}"][data-hand-piece="${pr.src.drop}"] .piece`);
    const size = this.squares[0].getBoundingClientRect().width;
    pr.size = size;
    pr.ghost = from.cloneNode(true);
    pr.ghost.classList.add('ghost');
    pr.ghost.style.width = `${size}px`;
    pr.ghost.style.height = `${size * 1.09}px`;
    // The ghost lives outside the board, where the CSS that turns the top
    // side's pieces around does not reach: copy the turn.
    const turn = getComputedStyle(from.querySelector('svg')).transform;
    if (turn && turn !== 'none') pr.ghost.querySelector('svg').style.transform = turn;
    document.body.append(pr.ghost);
    pr.origin = from;
    from.classList.add('dragging');
  }

  onPointerUp(e) {
    const pr = this.press;
    if (!pr || pr.id !== e.pointerId) return;
    if (pr.ghost) {
      const to = this.squareAtPoint(e.clientX, e.clientY);
      this.endPress();
      if (to >= 0 && this.targets(pr.src).has(to)) this.tryMove(pr.src, to);
      else if (to !== pr.src.square) this.select(null);
      return;
    }
    this.endPress();
    if (pr.wasSelected) this.select(null); // a second click on a piece lets go of it
  }

  endPress() {
    const pr = this.press;
    if (!pr) return;
    this.press = null;
    if (pr.ghost) { pr.ghost.remove(); pr.origin.classList.remove('dragging'); }
    this.squares.forEach((s) => s.classList.remove('hover'));
    try { this.root.releasePointerCapture(pr.id); } catch { /* already released */ }
  }

  squareAtPoint(x, y) {
    const r = this.boardEl.getBoundingClientRect();
    let col = Math.floor(((x - r.left) / r.width) * 9);
    let row = Math.floor(((y - r.top) / r.height) * 9);
    if (col < 0 || col > 8 || row < 0 || row > 8) return -1;
    if (this.flipped) { col = 8 - col; row = 8 - row; }
    return row * 9 + col;
  }

  tryMove(src, to) {
    const moves = this.targets(src).get(to) || [];
    if (moves.length === 0) return;
    if (moves.length > 1) { this.askPromotion(src, to, moves); return; }
    this.commit(moves[0]);
  }

  commit(usi) {
    this.select(null);
    this.legal = null; // nothing moves until the page shows the next position
    this.onMove?.(usi);
  }

  // askPromotion shows the two choices over the target square, promoted first.
  askPromotion(src, to, moves) {
    const piece = this.pos.board[src.square];
    const promoted = moves.find((m) => m.endsWith('+'));
    const plain = moves.find((m) => !m.endsWith('+'));
    const dlg = el('div', 'promotion', { 'data-testid': 'promotion-dialog', role: 'dialog', 'aria-label': t('board.promote') });
    // On a touch screen the tap that opened the dialog ends over it, and its
    // click would pick whichever choice lies under the finger: a choice
    // counts only after a press that started on the dialog (armed), or from
    // the keyboard (a click with detail 0).
    dlg.dataset.armed = 'false';
    const choice = (usi, kind, label, title, testid) => {
      const b = el('button', 'promo-choice', { type: 'button', 'data-testid': testid, 'data-move': usi, title });
      b.innerHTML = `<div class="piece ${piece.color}" data-piece="${kind}">${pieceSvg(kind, piece.color)}</div><span>${label}</span>`;
      b.addEventListener('click', (e) => {
        if (e.detail !== 0 && dlg.dataset.armed !== 'true') return;
        this.cancelPromotion();
        this.commit(usi);
      });
      return b;
    };
    dlg.append(choice(promoted, '+' + piece.kind, '成', t('board.promoteyes'), 'promote'),
      choice(plain, piece.kind, '不成', t('board.promoteno'), 'unpromote'));
    const sq = this.squares[to].getBoundingClientRect();
    const rr = this.root.getBoundingClientRect();
    const downward = (sq.top - rr.top) < rr.height / 2;
    dlg.style.left = `${sq.left - rr.left}px`;
    dlg.style.width = `${sq.width}px`;
    if (downward) dlg.style.top = `${sq.top - rr.top}px`;
    else dlg.style.top = `${sq.bottom - rr.top - 2 * sq.height * 1.25}px`;
    this.root.append(dlg);
    this.promotion = dlg;
    dlg.querySelector('button').focus({ preventScroll: true });
  }

  cancelPromotion() {
    if (!this.promotion) return;
    this.promotion.remove();
    this.promotion = null;
  }

  // --- arrows ------------------------------------------------------------

  // centerOf gives a square's (or, for a drop, the hand piece's) center in
  // the board area's coordinates.
  centerOf(rootRect, index, dropKind) {
    let e;
    if (dropKind) {
      e = this.root.querySelector(`.hand-piece[data-color="${this.pos.turn}"][data-hand-piece="${dropKind}"]`);
    } else {
      e = this.squares[index];
    }
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return { x: r.left - rootRect.left + r.width / 2, y: r.top - rootRect.top + r.height / 2 };
  }

  drawArrows() {
    const layer = this.arrowLayer;
    if (!layer) return;
    const rr = this.root.getBoundingClientRect();
    layer.setAttribute('viewBox', `0 0 ${rr.width} ${rr.height}`);
    layer.setAttribute('width', rr.width);
    layer.setAttribute('height', rr.height);
    if (!this.pos || rr.width === 0) { layer.innerHTML = ''; return; }
    const sqw = this.squares[0].getBoundingClientRect().width;
    let html = '';
    // Draw the weaker lines first so the best move's arrow stays on top.
    const list = [...this.arrows].sort((a, b) => (b.rank || 0) - (a.rank || 0));
    for (const a of list) {
      const m = a.move;
      if (!m || m.length < 4) continue;
      const drop = m[1] === '*' ? m[0] : null;
      const from = this.centerOf(rr, drop ? -1 : squareIndex(m.slice(0, 2)), drop);
      const to = this.centerOf(rr, squareIndex(m.slice(2, 4)));
      if (!from || !to) continue;
      const dx = to.x - from.x, dy = to.y - from.y;
      const len = Math.hypot(dx, dy);
      if (len < 1) continue;
      const ux = dx / len, uy = dy / len;
      const w = sqw * (a.rank ? 0.13 : 0.18);
      const head = w * 2.3;
      const ex = to.x - ux * head, ey = to.y - uy * head;
      const px = -uy, py = ux;
      const cls = `${a.rank ? `arrow alt alt${Math.min(a.rank, 4)}` : 'arrow best'}${a.engine === 2 ? ' second' : ''}`;
      html += `<g class="${cls}" data-move="${m}" data-engine="${a.engine || 1}">` +
        `<line x1="${from.x.toFixed(1)}" y1="${from.y.toFixed(1)}" x2="${ex.toFixed(1)}" y2="${ey.toFixed(1)}" stroke-width="${w.toFixed(1)}"/>` +
        `<polygon points="${to.x.toFixed(1)},${to.y.toFixed(1)} ${(ex + px * head * 0.8).toFixed(1)},${(ey + py * head * 0.8).toFixed(1)} ` +
        `${(ex - px * head * 0.8).toFixed(1)},${(ey - py * head * 0.8).toFixed(1)}"/></g>`;
    }
    layer.innerHTML = html;
  }
}
