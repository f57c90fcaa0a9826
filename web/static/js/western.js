// Western move notation (Hodges, as lishogi's "Western" shows it): piece
// letter, the origin only when another piece of the same kind could also
// go there, '-' a move, 'x' a capture, '*' a drop, the square as in USI
// (7f), then '+' promotes or '=' declines a promotion: P-7f, Bx2b+, G*5b,
// S6h-7g. Only the board geometry is looked at (no pins): usid decides
// what is legal; this is display.

import { squareIndex } from './sfen.js';

const GOLD = [[-1, -1], [0, -1], [1, -1], [-1, 0], [1, 0], [0, 1]];
const KING = [[-1, -1], [0, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [0, 1], [1, 1]];
const DIAG = [[-1, -1], [1, -1], [-1, 1], [1, 1]];
const ORTH = [[0, -1], [-1, 0], [1, 0], [0, 1]];

// STEPS are one-square moves, SLIDES lines, both for sente (forward = -y).
const STEPS = {
  P: [[0, -1]], N: [[-1, -2], [1, -2]], S: [[-1, -1], [0, -1], [1, -1], [-1, 1], [1, 1]],
  G: GOLD, '+P': GOLD, '+L': GOLD, '+N': GOLD, '+S': GOLD, K: KING, '+B': ORTH, '+R': DIAG,
};
const SLIDES = { L: [[0, -1]], B: DIAG, R: ORTH, '+B': DIAG, '+R': ORTH };
const PROMOTABLE = new Set(['P', 'L', 'N', 'S', 'B', 'R']);

// reaches tells whether a piece on from could move to to on board.
function reaches(board, from, to, piece) {
  const sign = piece.color === 'b' ? 1 : -1;
  const fx = from % 9, fy = Math.floor(from / 9), tx = to % 9, ty = Math.floor(to / 9);
  for (const [dx, dy] of STEPS[piece.kind] || []) if (fx + dx === tx && fy + dy * sign === ty) return true;
  for (const [dx, dy] of SLIDES[piece.kind] || []) {
    for (let x = fx + dx, y = fy + dy * sign; x >= 0 && x < 9 && y >= 0 && y < 9; x += dx, y += dy * sign) {
      if (x === tx && y === ty) return true;
      if (board[y * 9 + x]) break;
    }
  }
  return false;
}

const inZone = (index, color) => (color === 'b' ? index < 27 : index >= 54);

// westernMove writes usi, played in pos ({board, turn}), in Western notation.
export function westernMove(usi, pos) {
  if (usi[1] === '*') return `${usi[0]}*${usi.slice(2, 4)}`;
  const from = squareIndex(usi.slice(0, 2));
  const to = squareIndex(usi.slice(2, 4));
  const piece = pos.board[from];
  if (!piece) return usi;
  const ambiguous = pos.board.some((p, i) => i !== from && p && p.color === piece.color && p.kind === piece.kind &&
    reaches(pos.board, i, to, p));
  let out = piece.kind + (ambiguous ? usi.slice(0, 2) : '') + (pos.board[to] ? 'x' : '-') + usi.slice(2, 4);
  if (usi.endsWith('+')) out += '+';
  else if (PROMOTABLE.has(piece.kind) && (inZone(from, piece.color) || inZone(to, piece.color))) out += '=';
  return out;
}
