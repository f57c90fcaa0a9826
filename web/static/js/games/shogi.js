// Shogi for the board application: SFEN positions and USI moves (sfen.js),
// the board with both hands (board.js), its own editor (editor.js), KIF
// notation and scores from sente's view.

import { Board } from '../board.js';
import { Editor } from '../editor.js';
import { STARTPOS, parseSfen, toSfen, applyMove, parsePositionText, usiPosition, isHandicap } from '../sfen.js';
import { sideKeys, MARK, formatScore, moveText, startTimeText } from '../notation.js';
import { t } from '../i18n.js';

function barText(s) {
  if (s.mate !== undefined) return formatScore(s);
  const a = Math.abs(s.cp);
  if (a === 0) return '0';
  const n = a < 1000 ? String(a) : a < 10000 ? `${(a / 1000).toFixed(1)}k` : `${Math.round(a / 1000)}k`;
  return (s.cp > 0 ? '+' : '−') + n;
}

export const shogi = {
  name: 'shogi',
  scope: '', // storage keys (settings, the game played, the game analysis) keep their old names
  preferEngine: /fairy/i, // the default engine, where nothing was chosen
  engineRequired: false, // usid's default engine plays shogi
  handicaps: true,
  declare: true, // 入玉宣言
  clockNames: false, // ☗ and ☖ say whose clock it is
  copiedKey: 'toast.sfencopied',
  // recordSides: the header keys of the players in a record written after a game.
  recordSides: (start) => (isHandicap(start) ? ['下手', '上手'] : ['先手', '後手']),
  // recordDate: the header line of a played game's start (KIF's 開始日時).
  recordDate: (d) => ({ key: '開始日時', value: startTimeText(d) }),
  terminalText: (v) => (v.checkmate ? t(v.side_to_move === 'b' ? 'terminal.gotewins' : 'terminal.sentewins') : t('terminal.nomoves')),
  field: 'sfen',
  notation: 'kif',
  notationField: 'moves_kif',
  pvField: 'pv_kif',
  plyField: 'kif',
  startText: STARTPOS,
  protocols: ['usi'], // the engine protocols (profile.protocol) that play it
  firstSide: 'b',
  pov: 'b',
  bottom: 'b',
  sideKeys: (handicap, capital) => sideKeys(handicap, capital),
  mark: MARK,
  recordFormat: 'kif',
  recordExt: 'kif',
  winScale: 0.0007,
  graphTicks: [3000, 1000, 0, -1000, -3000],
  parse: parseSfen,
  toText: toSfen,
  apply: applyMove,
  parseText: (text) => { const p = parsePositionText(text); return { root: p.sfen, moves: p.moves }; },
  positionText: usiPosition,
  isHandicap,
  Board,
  Editor,
  sameHead: (a, b) => a.split(' ').slice(0, 3).join(' ') === b.split(' ').slice(0, 3).join(' '),
  formatScore,
  barText,
  tickText: (cp) => (cp === 0 ? '0' : `${cp > 0 ? '+' : '−'}${Math.abs(cp) / 1000}k`),
  moveNumber: (ply) => String(ply),
  moveText,
  // endText: how a record's end reads in the move list (KIF's ends).
  endText: null,
};
