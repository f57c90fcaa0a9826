// The othello board: 8×8 green squares with black and white discs, a1 at
// the top left as USI-X names squares (file letter a–h, rank digit 1–8), the
// legal squares marked, a move by clicking its square, a Pass button when
// the side to move has no square, and arrows for the engine's lines. It has
// the shogi Board's interface, so the analysis page drives it. No rules:
// the legal moves come from /v1/validate.

import { t } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';
const FILES = 'abcdefgh';
const nameOf = (i) => `${FILES[i % 8]}${Math.floor(i / 8) + 1}`;

export class OthelloBoard {
  constructor(root, { onMove = null } = {}) {
    this.root = root;
    this.onMove = onMove;
    this.flipped = false;
    this.editing = false;
    this.pos = null;
    this.legal = null;
    this.lastMove = null;
    this.arrows = [];
    root.classList.add('board-area', 'othello-area');
    root.dataset.illegal = t('board.illegal');
    this.grid = document.createElement('div');
    this.grid.className = 'othello-board';
    this.grid.dataset.testid = 'board';
    this.grid.setAttribute('role', 'group'); // squares, not a keyboard grid
    this.grid.setAttribute('aria-label', t('aria.othelloboard'));
    this.squares = [];
    for (let i = 0; i < 64; i++) {
      const cell = document.createElement('div');
      cell.className = 'oth-sq';
      cell.dataset.square = nameOf(i);
      cell.dataset.testid = `sq-${nameOf(i)}`;
      this.squares.push(cell);
      this.grid.append(cell);
    }
    this.arrowLayer = document.createElementNS(SVG, 'svg');
    this.arrowLayer.classList.add('arrows', 'chess-arrows');
    this.arrowLayer.setAttribute('viewBox', '0 0 8 8');
    this.arrowLayer.dataset.testid = 'arrows';
    this.arrowLayer.setAttribute('aria-hidden', 'true');
    this.passBtn = document.createElement('button');
    this.passBtn.type = 'button';
    this.passBtn.className = 'pass primary';
    this.passBtn.dataset.testid = 'pass';
    this.passBtn.textContent = t('othello.pass');
    this.passBtn.hidden = true;
    this.passBtn.addEventListener('click', () => { if (this.legal?.includes('pass')) this.onMove?.('pass'); });
    this.count = document.createElement('div');
    this.count.className = 'disc-count';
    this.count.dataset.testid = 'disc-count';
    // The squares and the marks over them share a square box; the disc
    // count and the Pass button sit under it.
    const wrap = document.createElement('div');
    wrap.className = 'othello-wrap';
    wrap.append(this.grid, this.arrowLayer);
    const foot = document.createElement('div');
    foot.className = 'othello-foot';
    foot.append(this.count, this.passBtn);
    root.replaceChildren(wrap, foot);
    this.grid.addEventListener('click', (e) => {
      const sq = e.target.closest('[data-square]');
      if (!sq || this.editing || !this.legal) return;
      if (this.legal.includes(sq.dataset.square)) this.onMove?.(sq.dataset.square);
      else this.root.dataset.refused = sq.dataset.square; // a click on no legal square plays nothing
    });
    this.layout();
  }

  layout() {
    this.root.classList.toggle('flipped', this.flipped);
    this.squares.forEach((cell, i) => {
      let col = i % 8, row = Math.floor(i / 8);
      if (this.flipped) { col = 7 - col; row = 7 - row; }
      cell.style.gridColumn = String(col + 1);
      cell.style.gridRow = String(row + 1);
      if (col === 0) cell.dataset.rank = String(Math.floor(i / 8) + 1); else delete cell.dataset.rank;
      if (row === 0) cell.dataset.file = FILES[i % 8]; else delete cell.dataset.file;
    });
  }

  setFlipped(f) {
    if (this.flipped === f) return;
    this.flipped = f;
    this.layout();
    this.drawArrows();
  }

  setPosition(pos, { lastMove = null } = {}) {
    this.pos = pos;
    this.lastMove = lastMove;
    this.legal = null;
    this.root.dataset.turn = pos.turn;
    let b = 0, w = 0;
    this.squares.forEach((cell, i) => {
      const p = pos.board[i];
      if (p) { if (p.color === 'b') b++; else w++; }
      const key = p ? p.color : '';
      if (cell.dataset.key === key) return;
      cell.dataset.key = key;
      cell.innerHTML = p ? `<span class="disc ${p.color}" data-disc="${p.color}" data-color="${p.color}"></span>` : '';
    });
    this.count.innerHTML = `<span class="disc b"></span> <b data-testid="count-b">${b}</b> <span class="disc w"></span> <b data-testid="count-w">${w}</b>`;
    this.renderMarks();
    this.drawArrows();
  }

  setLegal(moves) {
    this.legal = moves ? moves.slice() : null;
    this.root.dataset.ready = moves ? 'true' : 'false';
    this.renderMarks();
  }

  setCheck() {}

  renderMarks() {
    const legal = new Set(this.editing ? [] : this.legal || []);
    this.squares.forEach((cell, i) => {
      const n = nameOf(i);
      cell.classList.toggle('last', this.lastMove === n);
      cell.classList.toggle('target', legal.has(n));
    });
    this.passBtn.hidden = !legal.has('pass');
  }

  coords(sq) {
    const f = sq.charCodeAt(0) - 97, r = Number(sq[1]) - 1;
    return this.flipped ? [7 - f, 7 - r] : [f, r];
  }

  // setArrows marks the lines' first moves: a ring on the square (a disc
  // is placed, it does not travel), the best one bolder.
  setArrows(arrows) { this.arrows = arrows || []; this.drawArrows(); }

  drawArrows() {
    const parts = [];
    const list = [...this.arrows].sort((a, b) => (b.rank || 0) - (a.rank || 0));
    for (const a of list) {
      if (!a.move || !/^[a-h][1-8]$/.test(a.move)) continue;
      const [x, y] = this.coords(a.move);
      const g = document.createElementNS(SVG, 'g');
      g.setAttribute('class', `${a.rank ? `arrow alt alt${Math.min(a.rank, 4)}` : 'arrow best'}${a.engine === 2 ? ' second' : ''}`);
      g.dataset.engine = String(a.engine || 1); // the second engine's in its own colour
      g.dataset.move = a.move;
      const c = document.createElementNS(SVG, 'circle');
      c.setAttribute('cx', x + 0.5); c.setAttribute('cy', y + 0.5); c.setAttribute('r', 0.36);
      c.setAttribute('stroke-width', a.rank ? 0.07 : 0.11);
      g.append(c);
      parts.push(g);
    }
    this.arrowLayer.replaceChildren(...parts);
  }
}
