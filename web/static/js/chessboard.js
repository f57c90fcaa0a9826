// The chess board: an 8x8 grid drawn from a FEN, pieces as SVG drawn for
// usid (simple silhouettes, no third-party artwork), click-to-move over the
// legal moves usid names, and arrows for the engine's lines. It knows no
// rules: legality comes from /v1/validate.

const SVG = 'http://www.w3.org/2000/svg';

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

// squares of a FEN's board field: a map from "e4" to the piece letter.
export function parseBoard(fen) {
  const out = {};
  const ranks = fen.split(' ')[0].split('/');
  ranks.forEach((row, i) => {
    let f = 0;
    for (const c of row) {
      if (c >= '1' && c <= '8') f += Number(c);
      else { out[`${'abcdefgh'[f]}${8 - i}`] = c; f++; }
    }
  });
  return out;
}

export class ChessBoard {
  // onMove(uciMove) is called when the player makes a legal move.
  constructor(host, onMove) {
    this.host = host;
    this.onMove = onMove;
    this.flipped = false;
    this.legal = [];
    this.selected = null;
    this.lastMove = null;
    this.grid = document.createElement('div');
    this.grid.className = 'chess-board';
    this.grid.setAttribute('role', 'grid');
    this.arrows = document.createElementNS(SVG, 'svg');
    this.arrows.classList.add('arrows', 'chess-arrows');
    this.arrows.setAttribute('viewBox', '0 0 8 8');
    this.arrows.dataset.testid = 'arrows';
    host.replaceChildren(this.grid, this.arrows);
    this.grid.addEventListener('click', (e) => {
      const sq = e.target.closest('[data-square]');
      if (sq) this.click(sq.dataset.square);
    });
  }

  // set draws fen; legal is the list of legal UCI moves (empty: no moves).
  set(fen, legal, lastMove) {
    this.fen = fen;
    this.legal = legal || [];
    this.lastMove = lastMove || null;
    this.selected = null;
    this.draw();
  }

  setFlipped(f) { this.flipped = f; this.draw(); }

  coords(sq) {
    const f = sq.charCodeAt(0) - 97, r = Number(sq[1]) - 1;
    return this.flipped ? [7 - f, r] : [f, 7 - r];
  }

  draw() {
    const board = parseBoard(this.fen);
    const cells = [];
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++) {
        const f = this.flipped ? 7 - col : col, r = this.flipped ? row : 7 - row;
        const sq = `${'abcdefgh'[f]}${r + 1}`;
        const cell = document.createElement('div');
        cell.className = `chess-sq ${(f + r) % 2 ? 'light' : 'dark'}`;
        cell.dataset.square = sq;
        cell.dataset.testid = `sq-${sq}`;
        if (this.lastMove && (this.lastMove.slice(0, 2) === sq || this.lastMove.slice(2, 4) === sq)) cell.classList.add('last');
        if (this.selected === sq) cell.classList.add('selected');
        if (this.selected && this.legal.some((m) => m.startsWith(this.selected) && m.slice(2, 4) === sq)) cell.classList.add('target');
        if (board[sq]) cell.append(pieceSVG(board[sq]));
        if (col === 0) cell.dataset.rank = r + 1;
        if (row === 7) cell.dataset.file = 'abcdefgh'[f];
        cells.push(cell);
      }
    }
    this.grid.replaceChildren(...cells);
  }

  click(sq) {
    if (this.selected) {
      const moves = this.legal.filter((m) => m.startsWith(this.selected) && m.slice(2, 4) === sq);
      if (moves.length) {
        // A promotion offers four moves: the queen, as players nearly always choose.
        const m = moves.find((x) => x.length === 4 || x[4] === 'q') || moves[0];
        this.selected = null;
        this.onMove(m);
        return;
      }
    }
    this.selected = this.legal.some((m) => m.startsWith(sq)) ? sq : null;
    this.draw();
  }

  // showArrows draws an arrow per line's first move (best first).
  showArrows(moves) {
    const parts = [];
    moves.forEach((m, i) => {
      if (!m || m.length < 4) return;
      const [x1, y1] = this.coords(m.slice(0, 2));
      const [x2, y2] = this.coords(m.slice(2, 4));
      const g = document.createElementNS(SVG, 'g');
      g.classList.add('arrow', i === 0 ? 'best' : 'alt');
      g.dataset.move = m;
      const ax = x2 + 0.5, ay = y2 + 0.5, bx = x1 + 0.5, by = y1 + 0.5;
      const len = Math.hypot(ax - bx, ay - by) || 1;
      const ux = (ax - bx) / len, uy = (ay - by) / len;
      const line = document.createElementNS(SVG, 'line');
      line.setAttribute('x1', bx); line.setAttribute('y1', by);
      line.setAttribute('x2', ax - ux * 0.3); line.setAttribute('y2', ay - uy * 0.3);
      line.setAttribute('stroke-width', i === 0 ? 0.16 : 0.11);
      const head = document.createElementNS(SVG, 'polygon');
      const px = -uy * 0.2, py = ux * 0.2;
      head.setAttribute('points', `${ax},${ay} ${ax - ux * 0.38 + px},${ay - uy * 0.38 + py} ${ax - ux * 0.38 - px},${ay - uy * 0.38 - py}`);
      g.append(line, head);
      parts.push(g);
    });
    this.arrows.replaceChildren(...parts);
  }
}
