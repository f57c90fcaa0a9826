// The games the board application plays, each a module that says how to
// draw its board, read and write its positions and moves, name its sides
// and show its scores (games/shogi.js, games/chess.js, games/othello.js).
// A page names its game in <body data-game="...">; shogi by default.

import { shogi } from './shogi.js';
import { chess } from './chess.js';
import { othello } from './othello.js';

export const GAMES = { shogi, chess, othello };

export function pageGame(doc = globalThis.document) {
  return GAMES[doc?.body?.dataset.game] || shogi;
}

// povSide turns a real side into the page's score side: scores are kept as
// the first-moving side's ("b") view, which in chess is White's.
export function povSide(mod, side) {
  if (mod.pov === 'b') return side;
  return side === 'b' ? 'w' : 'b';
}
