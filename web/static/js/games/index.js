// The games the board application plays, each a module that says how to
// draw its board, read and write its positions and moves, name its sides
// and show its scores (games/shogi.js, games/chess.js, games/othello.js).
// A page names its game in <body data-game="...">; shogi by default.
//
// What a module gives (see games/chess.js for one with every field):
//   name, scope (storage keys), field (the JSON position field), startText,
//   firstSide, pov (the side scores are shown from), bottom (the side at the
//   bottom of an unflipped board), protocols (engines' profile.protocol);
//   notation, notationField, pvField, plyField (usid's notation of moves in
//   validate, events and records; null when a move is its own notation);
//   parse, toText, apply, parseText, positionText, sameHead (positions for
//   display: no rules), moveText, moveNumber, sideKeys, mark, endText,
//   terminalText, recordSides, recordFormat, recordExt, commentsInList (a
//   record's comments shown in the move list beside their move); optionally
//   recordEnd (a transcript read on the page: the end of a finished game);
//   formatScore, barText, tickText, winScale, graphTicks (scores);
//   Board (the board class), Editor or editorSpec, editorHint, pieceHtml;
//   preferEngine, engineRequired, handicaps, declare, clockNames,
//   copiedKey (what differs in the panels; the clocks a game offers are in its page).

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
