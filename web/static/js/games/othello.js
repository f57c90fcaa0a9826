// Othello for the board application, in USI-X's notation: a square is a
// file letter a–h and a rank digit 1–8 with a1 at the top left; a position
// is one token of 64 cells (a1 b1 … h1 a2 … h8; X black, O white, - empty),
// then B or W, then an optional move number; "pass" is a move only when the
// side to move has no square. Black moves first. Positions are applied here
// for display and for reading a transcript (where passes are left out);
// usid's /v1/validate decides what is legal.

import { OthelloBoard } from '../othelloboard.js';
import { t } from '../i18n.js';

export const STARTPOS = '---------------------------OX------XO---------------------------B1';
const FILES = 'abcdefgh';
const DIRS = [[1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [1, -1], [-1, 1], [-1, -1]];

export const squareIndex = (n) => (/^[a-h][1-8]$/.test(n) ? (Number(n[1]) - 1) * 8 + FILES.indexOf(n[0]) : -1);
export const squareName = (i) => `${FILES[i % 8]}${Math.floor(i / 8) + 1}`;

export function parseToken(text) {
  const t = text === 'startpos' ? STARTPOS : text.trim();
  const m = /^([XO-]{64})([BW])(\d*)$/.exec(t);
  if (!m) throw new Error('an othello position is 64 cells of X, O and -, then B or W');
  const board = [...m[1]].map((c) => (c === 'X' ? { color: 'b' } : c === 'O' ? { color: 'w' } : null));
  return { board, turn: m[2] === 'B' ? 'b' : 'w', moveNumber: Number(m[3]) || 1 };
}

export function toToken(pos) {
  return pos.board.map((p) => (!p ? '-' : p.color === 'b' ? 'X' : 'O')).join('') + (pos.turn === 'b' ? 'B' : 'W') + (pos.moveNumber || 1);
}

// flips lists the discs a disc of color on square i turns over.
function flips(board, i, color) {
  if (board[i]) return [];
  const out = [];
  const x0 = i % 8, y0 = Math.floor(i / 8);
  for (const [dx, dy] of DIRS) {
    const run = [];
    let x = x0 + dx, y = y0 + dy;
    while (x >= 0 && x < 8 && y >= 0 && y < 8 && board[y * 8 + x] && board[y * 8 + x].color !== color) {
      run.push(y * 8 + x);
      x += dx; y += dy;
    }
    if (run.length && x >= 0 && x < 8 && y >= 0 && y < 8 && board[y * 8 + x]?.color === color) out.push(...run);
  }
  return out;
}

export function squaresFor(pos, color = pos.turn) {
  const out = [];
  for (let i = 0; i < 64; i++) if (flips(pos.board, i, color).length) out.push(squareName(i));
  return out;
}

export function applyMove(pos, move) {
  const next = { board: pos.board.slice(), turn: pos.turn === 'b' ? 'w' : 'b', moveNumber: (pos.moveNumber || 1) + 1 };
  if (move === 'pass') return next;
  const i = squareIndex(move);
  if (i < 0) throw new Error(`not an othello move: ${move}`);
  next.board[i] = { color: pos.turn };
  for (const j of flips(pos.board, i, pos.turn)) next.board[j] = { color: pos.turn };
  return next;
}

// readTranscript reads a move transcript ("f5d6c3d3c4…", spaces and case
// free, passes written or not) into moves from the start, with the passes
// the rules need put in.
export function readTranscript(text) {
  const t = text.replace(/\s+/g, '').toLowerCase();
  if (!/^([a-h][1-8]|pass|pa|ps)+$/.test(t)) return null;
  const tokens = t.match(/[a-h][1-8]|pass|pa|ps/g);
  const moves = [];
  let pos = parseToken(STARTPOS);
  for (const tok of tokens) {
    if (tok !== 'pass' && tok !== 'pa' && tok !== 'ps') {
      if (!squaresFor(pos).length && squaresFor(pos, pos.turn === 'b' ? 'w' : 'b').length) {
        moves.push('pass');
        pos = applyMove(pos, 'pass');
      }
      moves.push(tok);
      pos = applyMove(pos, tok);
    } else {
      moves.push('pass');
      pos = applyMove(pos, 'pass');
    }
  }
  return moves;
}

export function parseText(text) {
  let t = text.trim().replace(/\s+/g, ' ').replace(/^position /, '');
  if (!t) throw new Error('paste an othello position or a transcript');
  let moves = [];
  const at = t.indexOf(' moves');
  if (at >= 0 || t.startsWith('moves')) {
    const i = at >= 0 ? at : 0;
    moves = t.slice(i).trim().replace(/^moves/, '').trim().split(' ').filter(Boolean);
    t = t.slice(0, i).trim();
  }
  t = t.replace(/^sfen /, '');
  if (t === '' || t === 'startpos' || t === STARTPOS) return { root: 'startpos', moves };
  return { root: t, moves };
}

export function positionText(root, moves) {
  const head = root === 'startpos' || root === STARTPOS ? 'startpos' : `sfen ${root}`;
  return moves.length ? `${head} moves ${moves.join(' ')}` : head;
}

export const editorSpec = {
  brushes: [{ brush: 'b:D', color: 'b', kind: 'D' }, { brush: 'w:D', color: 'w', kind: 'D' }],
  starts: { standard: STARTPOS, empty: `${'-'.repeat(64)}B1` },
  place(pos, i, brush) {
    if (brush === 'erase') { pos.board[i] = null; return; }
    const color = brush[0];
    pos.board[i] = pos.board[i]?.color === color ? null : { color };
  },
  text: (pos) => toToken({ ...pos, moveNumber: 1 }),
};

export const othello = {
  name: 'othello',
  scope: 'othello',
  preferEngine: null,
  engineRequired: true,
  handicaps: false,
  declare: false,
  clockNames: true,
  copiedKey: 'toast.positioncopied',
  recordSides: () => null, // a transcript has no header
  // terminalText: the game is over, with the score usid gives: the discs
  // with the empty squares to the winner (the World Othello Federation's
  // count, as the move list and the transcript say it), the discs on the
  // board beside it where squares are left empty.
  terminalText(v) {
    const r = v.result || {};
    if (!Number.isInteger(r.black)) return t('othello.over');
    const raw = r.black !== r.black_discs || r.white !== r.white_discs
      ? t('result.discs.raw', { b: r.black_discs, w: r.white_discs }) : '';
    return `${t('othello.over')} — ${othello.endText(`${r.black}-${r.white}`)}${raw}`;
  },
  field: 'othello',
  notation: null, // moves are their own notation
  notationField: null,
  pvField: null,
  plyField: null,
  startText: STARTPOS,
  protocols: ['usix', 'uoi'], // the engine protocols (profile.protocol) that play it
  firstSide: 'b',
  pov: 'b',
  bottom: 'b',
  sideKeys: () => ({ b: 'side.black', w: 'side.white' }),
  mark: { b: '●', w: '○' },
  recordFormat: 'transcript',
  recordExt: 'txt',
  recordAccept: '.txt,.ggf,.tra',
  winScale: 0.004,
  graphTicks: [1000, 400, 0, -400, -1000],
  parse: parseToken,
  toText: toToken,
  apply: applyMove,
  parseText,
  positionText,
  looksLikePosition: (text) => /^(position |startpos|sfen )/.test(text.trim()) || /^[XO-]{64}[BW]\d*$/.test(text.trim()),
  readTranscript,
  // writeTranscript is the record out: the moves, passes left out.
  writeTranscript: (moves) => moves.filter((m) => m !== 'pass').join(''),
  Board: OthelloBoard,
  editorSpec,
  editorHint: 'othello.editor.hint',
  pieceHtml: (color) => `<span class="disc ${color}"></span>`,
  sameHead: (a, b) => a.slice(0, 65) === b.slice(0, 65),
  // Scores are in discs (an engine's stone score, in hundredths as usid
  // passes scores on): "+4.0".
  formatScore(s) {
    if (!s) return '–';
    if (s.mate !== undefined) return s.winner === 'b' ? `#${Math.abs(s.mate)}` : `#-${Math.abs(s.mate)}`;
    if (s.cp === 0) return '0';
    return (s.cp > 0 ? '+' : '−') + (Math.abs(s.cp) / 100).toFixed(1);
  },
  barText: (s) => othello.formatScore(s),
  tickText: (cp) => (cp === 0 ? '0' : `${cp > 0 ? '+' : '−'}${Math.abs(cp) / 100}`),
  moveNumber: (ply) => String(ply),
  // moveText is what a move shows as: its notation from usid, else itself.
  // A pass is said in the page's language.
  moveText: (text, move, before) => ({ side: before ? before.turn : '', text: move === 'pass' ? t('othello.pass') : text || move || '', origin: '' }),

  // recordEnd: a transcript read on the page ends as usid's records do,
  // with the final score of a finished game ("64-0").
  recordEnd: (v) => (v.game_over && Number.isInteger(v.result?.black) ? `${v.result.black}-${v.result.white}` : ''),
  // endText: the final disc count ("36-28", Black's first) or the
  // winner of a game ended otherwise, as othello records write it.
  endText(end) {
    const m = /^(\d+)-(\d+)$/.exec(end);
    if (m) {
      const [b, w] = [Number(m[1]), Number(m[2])];
      const who = b > w ? t('result.blackwins') : b < w ? t('result.whitewins') : t('result.draw');
      return `${t('result.discs', { b, w })} — ${who}`;
    }
    return ({ 'B+': t('result.blackwins'), 'W+': t('result.whitewins'), draw: t('result.draw'), '*': t('result.abort') })[end] || end;
  },
};
