// The chess board: an 8×8 grid, pieces as SVG drawn for usid (simple
// silhouettes, no third-party artwork), click-to-move over the legal moves
// usid names (a promotion asks for the piece), and arrows for the engine's
// lines. It has the shogi Board's interface (setPosition, setLegal,
// setArrows, setFlipped, setCheck, editing), so the analysis page drives
// either. It knows no rules: legality comes from /v1/validate.

import { t } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';
const FILES = 'abcdefgh';

// PIECES are the silhouettes on a 45x45 canvas, one path each (filled with
// the side's colour and outlined).
const PIECES = {
  p: 'M22.5 9a4 4 0 0 0-3.2 6.4A6 6 0 0 0 17 25c-3 1.2-6 5-6 11h23c0-6-3-9.8-6-11a6 6 0 0 0-2.3-9.6A4 4 0 0 0 22.5 9z',
  r: 'M11 36h23v-4H11zM13 32l2-14h15l2 14zM12 18h21v-8h-4v3h-4v-3h-5v3h-4v-3h-4z',
  n: 'M13 36h21c0-9-2-17-6-22l1-5-4 3c-6-1-11 4-14 11l3 3 4-3c1 3-3 7-5 13z',
  b: 'M12 36h21v-3H12zM15 33h15c1-5 0-9-3-12l-5 5-1-1 5-5a9 9 0 0 0-4-4 9 9 0 0 0-7 17zM22.5 6a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5z',
  q: 'M11 36h23v-4H11zM12 32l-3-17 6 9 3-13 4.5 12L27 11l3 13 6-9-3 17z',
  k: 'M11 36h23v-4H11zM12 32c-4-8 0-14 6-13l4.5 4 4.5-4c6-1 10 5 6 13zM21 6h3v4h3v3h-3v6h-3v-6h-3v-3h3z',
};

export function pieceSVG(letter) {
  const white = letter === letter.toUpperCase();
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 45 45');
  svg.classList.add('chess-piece', white ? 'white' : 'black');
  svg.dataset.piece = letter;
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', PIECES[letter.toLowerCase()]);
  svg.append(path);
  return svg;
}

const nameOf = (i) => `${FILES[i % 8]}${8 - Math.floor(i / 8)}`;

export class ChessBoard {
  // onMove(uciMove) is called when the player makes a legal move.
  constructor(root, { onMove = null } = {}) {
    this.root = root;
    this.onMove = onMove;
    this.flipped = false;
    this.editing = false;
    this.pos = null;
    this.legal = null;
    this.selected = null;
    this.lastMove = null;
    this.check = false;
    this.arrows = [];
    root.classList.add('board-area', 'chess-area');
    root.dataset.illegal = t('board.illegal');
    this.grid = document.createElement('div');
    this.grid.className = 'chess-board';
    this.grid.dataset.testid = 'board';
    this.grid.setAttribute('role', 'group'); // squares, not a keyboard grid
    this.grid.setAttribute('aria-label', t('aria.chessboard'));
    this.squares = [];
    for (let i = 0; i < 64; i++) {
      const cell = document.createElement('div');
      const f = i % 8, r = 7 - Math.floor(i / 8);
      cell.className = `chess-sq ${(f + r) % 2 ? 'light' : 'dark'}`;
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
    root.replaceChildren(this.grid, this.arrowLayer);
    this.grid.addEventListener('click', (e) => {
      const sq = e.target.closest('[data-square]');
      if (this.promotion) { this.cancelPromotion(); return; }
      if (sq && !this.editing) this.click(sq.dataset.square);
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
      // Coordinates along the bottom rank and the left file as shown.
      if (col === 0) cell.dataset.rank = String(8 - Math.floor(i / 8)); else delete cell.dataset.rank;
      if (row === 7) cell.dataset.file = FILES[i % 8]; else delete cell.dataset.file;
    });
  }

  setFlipped(f) {
    if (this.flipped === f) return;
    this.flipped = f;
    this.layout();
    this.drawArrows();
  }

  setPosition(pos, { lastMove = null, check = false } = {}) {
    this.cancelPromotion();
    this.pos = pos;
    this.lastMove = lastMove;
    this.check = check;
    this.legal = null;
    this.selected = null;
    this.root.dataset.turn = pos.turn;
    this.squares.forEach((cell, i) => {
      const p = pos.board[i];
      const key = p ? p.color + p.kind : '';
      if (cell.dataset.key === key) return;
      cell.dataset.key = key;
      cell.replaceChildren(...(p ? [pieceSVG(p.color === 'w' ? p.kind : p.kind.toLowerCase())] : []));
    });
    this.renderMarks();
    this.drawArrows();
  }

  setLegal(moves) {
    this.legal = moves ? moves.slice() : null;
    this.root.dataset.ready = moves ? 'true' : 'false';
    if (this.selected) this.renderMarks();
  }

  setCheck(check) { this.check = check; this.renderMarks(); }

  renderMarks() {
    const last = this.lastMove;
    this.squares.forEach((cell, i) => {
      const n = nameOf(i);
      cell.classList.toggle('last', !!last && (last.slice(0, 2) === n || last.slice(2, 4) === n));
      cell.classList.toggle('selected', this.selected === n);
      cell.classList.toggle('target', !!this.selected && this.targets(this.selected).length > 0 && this.targets(this.selected).some((m) => m.slice(2, 4) === n));
      const p = this.pos?.board[i];
      cell.classList.toggle('check', !!this.check && !!p && p.kind === 'K' && p.color === this.pos.turn);
    });
  }

  targets(from) { return (this.legal || []).filter((m) => m.startsWith(from)); }

  click(sq) {
    if (!this.legal) return;
    if (this.selected) {
      const moves = this.targets(this.selected).filter((m) => m.slice(2, 4) === sq);
      if (moves.length) {
        this.selected = null;
        this.renderMarks();
        // A promotion offers four moves: the player picks the piece.
        if (moves.length > 1) this.askPromotion(sq, moves);
        else this.onMove?.(moves[0]);
        return;
      }
    }
    this.selected = this.selected !== sq && this.targets(sq).length ? sq : null;
    this.renderMarks();
  }

  // askPromotion shows the four pieces over the target square; a click on
  // one plays that move, anywhere else cancels.
  askPromotion(sq, moves) {
    this.cancelPromotion();
    const color = this.pos.turn;
    const box = document.createElement('div');
    box.className = 'chess-promotion';
    box.dataset.testid = 'promotion-dialog';
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', t('chess.promote'));
    for (const k of ['q', 'r', 'b', 'n']) {
      const m = moves.find((x) => x[4] === k);
      if (!m) continue;
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.dataset.promote = k;
      btn.append(pieceSVG(color === 'w' ? k.toUpperCase() : k));
      btn.addEventListener('click', (e) => { e.stopPropagation(); this.cancelPromotion(); this.onMove?.(m); });
      box.append(btn);
    }
    const [x, y] = this.coords(sq);
    box.style.left = `${(x / 8) * 100}%`;
    box.style.top = `${(Math.min(y, 4) / 8) * 100}%`;
    this.promotion = box;
    this.root.append(box);
  }

  cancelPromotion() {
    this.promotion?.remove();
    this.promotion = null;
  }

  coords(sq) {
    const f = sq.charCodeAt(0) - 97, r = Number(sq[1]) - 1;
    return this.flipped ? [7 - f, r] : [f, 7 - r];
  }

  // setArrows draws an arrow per line's first move ({move, rank}; rank 0 the best).
  setArrows(arrows) { this.arrows = arrows || []; this.drawArrows(); }

  drawArrows() {
    const parts = [];
    const list = [...this.arrows].sort((a, b) => (b.rank || 0) - (a.rank || 0));
    for (const a of list) {
      const m = a.move;
      if (!m || !/^[a-h][1-8][a-h][1-8]/.test(m)) continue;
      const [x1, y1] = this.coords(m.slice(0, 2));
      const [x2, y2] = this.coords(m.slice(2, 4));
      const g = document.createElementNS(SVG, 'g');
      g.setAttribute('class', `${a.rank ? `arrow alt alt${Math.min(a.rank, 4)}` : 'arrow best'}${a.engine === 2 ? ' second' : ''}`);
      g.dataset.engine = String(a.engine || 1); // the second engine's in its own colour
      g.dataset.move = m;
      const ax = x2 + 0.5, ay = y2 + 0.5, bx = x1 + 0.5, by = y1 + 0.5;
      const len = Math.hypot(ax - bx, ay - by) || 1;
      const ux = (ax - bx) / len, uy = (ay - by) / len;
      const line = document.createElementNS(SVG, 'line');
      line.setAttribute('x1', bx); line.setAttribute('y1', by);
      line.setAttribute('x2', ax - ux * 0.3); line.setAttribute('y2', ay - uy * 0.3);
      line.setAttribute('stroke-width', a.rank ? 0.11 : 0.16);
      const head = document.createElementNS(SVG, 'polygon');
      const px = -uy * 0.2, py = ux * 0.2;
      head.setAttribute('points', `${ax},${ay} ${ax - ux * 0.38 + px},${ay - uy * 0.38 + py} ${ax - ux * 0.38 - px},${ay - uy * 0.38 - py}`);
      g.append(line, head);
      parts.push(g);
    }
    this.arrowLayer.replaceChildren(...parts);
  }
}

ChessBoard.pieceSVG = pieceSVG;
