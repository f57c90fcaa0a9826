// Chess for the board application: FEN positions and UCI moves for display
// (no rules: legality, legal moves and SAN come from usid's /v1/validate),
// the 8×8 board with SVG pieces drawn for usid, and the editor's pieces.

import { ChessBoard } from '../chessboard.js';
import { t } from '../i18n.js';
import { startTimeText } from '../notation.js';

export const STARTPOS = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const FILES = 'abcdefgh';

export function squareIndex(name) {
  const f = FILES.indexOf(name[0]);
  const r = Number(name[1]);
  if (f < 0 || !(r >= 1 && r <= 8) || name.length !== 2) return -1;
  return (8 - r) * 8 + f;
}

export function squareName(i) { return `${FILES[i % 8]}${8 - Math.floor(i / 8)}`; }

// parseFen returns {board: Array(64) of null | {color, kind}, turn,
// castling, ep, halfmove, moveNumber}; colors are 'w' and 'b', kinds the
// upper-case letters. It throws on text it cannot read at all.
export function parseFen(fen) {
  if (fen === 'startpos') fen = STARTPOS;
  const f = fen.trim().split(/\s+/);
  const rows = (f[0] || '').split('/');
  if (rows.length !== 8) throw new Error('a FEN board has 8 ranks');
  const board = new Array(64).fill(null);
  rows.forEach((row, r) => {
    let c = 0;
    for (const ch of row) {
      if (ch >= '1' && ch <= '8') { c += Number(ch); continue; }
      if (!/[pnbrqk]/i.test(ch) || c > 7) throw new Error(`rank ${8 - r}: unreadable`);
      board[r * 8 + c] = { color: ch === ch.toUpperCase() ? 'w' : 'b', kind: ch.toUpperCase() };
      c++;
    }
    if (c !== 8) throw new Error(`rank ${8 - r} does not have 8 squares`);
  });
  const turn = f[1] || 'w';
  if (turn !== 'w' && turn !== 'b') throw new Error('side to move must be w or b');
  return { board, turn, castling: f[2] || '-', ep: f[3] || '-', halfmove: Number(f[4]) || 0, moveNumber: Number(f[5]) || 1 };
}

export function toFen(pos) {
  const rows = [];
  for (let r = 0; r < 8; r++) {
    let row = '', empty = 0;
    for (let c = 0; c < 8; c++) {
      const p = pos.board[r * 8 + c];
      if (!p) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      row += p.color === 'w' ? p.kind : p.kind.toLowerCase();
    }
    rows.push(row + (empty || ''));
  }
  return `${rows.join('/')} ${pos.turn} ${pos.castling || '-'} ${pos.ep || '-'} ${pos.halfmove || 0} ${pos.moveNumber || 1}`;
}

// applyMove plays a UCI move for display: castling moves the rook too, en
// passant takes the pawn passed, a promotion letter makes the new piece.
export function applyMove(pos, uci) {
  if (!/^[a-h][1-8][a-h][1-8][qrbn]?$/.test(uci)) throw new Error(`not a UCI move: ${uci}`);
  const from = squareIndex(uci.slice(0, 2)), to = squareIndex(uci.slice(2, 4));
  const piece = pos.board[from];
  if (!piece) throw new Error(`no piece on ${uci.slice(0, 2)}`);
  const board = pos.board.slice();
  const captured = board[to];
  board[from] = null;
  board[to] = uci[4] ? { color: piece.color, kind: uci[4].toUpperCase() } : piece;
  const df = (to % 8) - (from % 8);
  if (piece.kind === 'K' && Math.abs(df) === 2) {
    const rank = Math.floor(from / 8) * 8;
    const [rf, rt] = df > 0 ? [rank + 7, rank + 5] : [rank, rank + 3];
    board[rt] = board[rf];
    board[rf] = null;
  }
  if (piece.kind === 'P' && df !== 0 && !captured) board[to + (piece.color === 'w' ? 8 : -8)] = null;
  let castling = pos.castling || '-';
  const drop = (chars) => { castling = castling.replace(new RegExp(`[${chars}]`, 'g'), '') || '-'; };
  if (piece.kind === 'K') drop(piece.color === 'w' ? 'KQ' : 'kq');
  for (const [sq, ch] of [[63, 'K'], [56, 'Q'], [7, 'k'], [0, 'q']]) if (from === sq || to === sq) drop(ch);
  const ep = piece.kind === 'P' && Math.abs(to - from) === 16 ? squareName((to + from) / 2) : '-';
  return {
    board, turn: pos.turn === 'w' ? 'b' : 'w', castling, ep,
    halfmove: piece.kind === 'P' || captured ? 0 : (pos.halfmove || 0) + 1,
    moveNumber: (pos.moveNumber || 1) + (pos.turn === 'b' ? 1 : 0),
  };
}

// parseText reads what a user gives the page as a position: "startpos", a
// FEN, "fen <FEN>", each optionally followed by "moves ...", optionally
// preceded by "position".
export function parseText(text) {
  let t = text.trim().replace(/\s+/g, ' ').replace(/^position /, '');
  if (!t) throw new Error('paste a FEN or a UCI position');
  let moves = [];
  const at = t.indexOf(' moves');
  if (at >= 0 || t.startsWith('moves')) {
    const i = at >= 0 ? at : 0;
    moves = t.slice(i).trim().replace(/^moves/, '').trim().split(' ').filter(Boolean);
    t = t.slice(0, i).trim();
  }
  if (t === '' || t === 'startpos') return { root: 'startpos', moves };
  return { root: t.replace(/^fen /, ''), moves };
}

export function positionText(root, moves) {
  const head = root === 'startpos' || root === STARTPOS ? 'startpos' : `fen ${root}`;
  return moves.length ? `${head} moves ${moves.join(' ')}` : head;
}

// looksLikePosition: a FEN or a UCI position rather than a PGN record.
export function looksLikePosition(text) {
  const t = text.trim();
  return /^(position |startpos|fen )/.test(t) || /^([1-8pnbrqk]+\/){7}[1-8pnbrqk]+(\s|$)/i.test(t);
}

// The editor: every piece of both sides, the side to move, the starts.
const KINDS = ['K', 'Q', 'R', 'B', 'N', 'P'];
export const editorSpec = {
  brushes: ['w', 'b'].flatMap((color) => KINDS.map((kind) => ({ brush: `${color}:${kind}`, color, kind }))),
  starts: { standard: STARTPOS, empty: '4k3/8/8/8/8/8/8/4K3 w - - 0 1' },
  // place puts a piece on square i (again: takes it away); one king a side.
  place(pos, i, brush) {
    if (brush === 'erase') { pos.board[i] = null; return; }
    const [color, kind] = brush.split(':');
    const cur = pos.board[i];
    if (cur && cur.color === color && cur.kind === kind) { pos.board[i] = null; return; }
    if (kind === 'K') pos.board.forEach((p, j) => { if (p && p.kind === 'K' && p.color === color) pos.board[j] = null; });
    pos.board[i] = { color, kind };
  },
  // text is the FEN of an edited position: castling rights where king and
  // rook still stand on their squares, no en passant.
  text(pos) {
    const at = (sq, color, kind) => { const p = pos.board[squareIndex(sq)]; return p && p.color === color && p.kind === kind; };
    let c = '';
    if (at('e1', 'w', 'K')) { if (at('h1', 'w', 'R')) c += 'K'; if (at('a1', 'w', 'R')) c += 'Q'; }
    if (at('e8', 'b', 'K')) { if (at('h8', 'b', 'R')) c += 'k'; if (at('a8', 'b', 'R')) c += 'q'; }
    return toFen({ ...pos, castling: c || '-', ep: '-', halfmove: 0, moveNumber: 1 });
  },
};

export function pieceHtml(color, kind) {
  const svg = ChessBoard.pieceSVG(color === 'w' ? kind : kind.toLowerCase());
  return svg.outerHTML;
}

export const chess = {
  name: 'chess',
  scope: 'chess', // settings and the games in progress are the page's own
  preferEngine: null,
  engineRequired: true, // usid's default engine plays shogi
  handicaps: false,
  declare: false,
  clockNames: true, // the clocks say White and Black
  copiedKey: 'toast.positioncopied',
  recordSides: () => ['Black', 'White'], // PGN's tags
  // recordDate: PGN's Date tag of a played game (YYYY.MM.DD).
  recordDate: (d) => ({ key: 'Date', value: startTimeText(d).slice(0, 10).replaceAll('/', '.') }),
  terminalText: (v) => (v.checkmate ? t('chess.checkmate') : v.stalemate ? t('chess.stalemate') : t('terminal.nomoves')),
  field: 'fen', // the JSON field of a position
  notation: 'san', // what /v1/validate and the WebSocket write moves in
  notationField: 'moves_san',
  pvField: 'pv_san',
  plyField: 'san', // a record's ply's notation (/v1/records/parse)
  commentsInList: true, // a PGN's comments beside their move, as lichess shows them
  startText: STARTPOS,
  protocols: ['uci'], // the engine protocols (profile.protocol) that play it
  firstSide: 'w',
  // pov is the side scores are shown from: the page keeps them as "b"
  // (the first side's view, sente's in shogi) and chess reads White's.
  pov: 'w',
  bottom: 'w', // the side at the bottom of an unflipped board
  sideKeys: () => ({ b: 'side.black', w: 'side.white' }),
  mark: { b: '', w: '' },
  recordFormat: 'pgn',
  recordExt: 'pgn',
  recordAccept: '.pgn,.fen,.txt',
  winScale: 0.0037, // the win chance of a centipawn score, as chess engines measure it
  graphTicks: [800, 300, 0, -300, -800],
  parse: parseFen,
  toText: toFen,
  apply: applyMove,
  parseText,
  positionText,
  looksLikePosition,
  Board: ChessBoard,
  editorSpec,
  editorHint: 'chess.editor.hint',
  pieceHtml,
  // sameHead: two texts of one position (move counters aside).
  sameHead: (a, b) => a.split(' ').slice(0, 4).join(' ') === b.split(' ').slice(0, 4).join(' '),
  // formatScore writes a White's-view score in pawns: "+0.35", "#5".
  formatScore(s) {
    if (!s) return '–';
    if (s.mate === 0) return t('analysis.mated'); // checkmated: no "#0"
    if (s.mate !== undefined) return s.winner === 'b' ? `#${Math.abs(s.mate)}` : `#-${Math.abs(s.mate)}`;
    if (s.cp === 0) return '0.00';
    return (s.cp > 0 ? '+' : '−') + (Math.abs(s.cp) / 100).toFixed(2);
  },
  barText(s) {
    if (s.mate !== undefined) return chess.formatScore(s);
    const a = Math.abs(s.cp) / 100;
    return (s.cp >= 0 ? '+' : '−') + (a < 10 ? a.toFixed(1) : Math.round(a));
  },
  tickText: (cp) => (cp === 0 ? '0' : `${cp > 0 ? '+' : '−'}${Math.abs(cp) / 100}`),
  moveNumber: (ply, turn0) => {
    // Chess numbers a move pair: 1. e4 e5; a game from Black's move starts "1…".
    const n = turn0 === 'w' ? Math.ceil(ply / 2) : Math.floor(ply / 2) + 1;
    const white = (ply % 2 === 1) === (turn0 === 'w');
    return white ? `${n}.` : '';
  },
  // continuedNumber is Black's move's number where a line starts with it: "4…".
  continuedNumber: (ply, turn0) => `${turn0 === 'w' ? Math.ceil(ply / 2) : Math.floor(ply / 2) + 1}…`,
  // moveText is what a move shows as: its notation from usid, else itself.
  moveText: (text, move, before) => ({ side: before ? before.turn : '', text: text || move || '', origin: '' }),

  // endText: a PGN result as the move list says it.
  endText: (end) => ({ '1-0': t('result.whitewins'), '0-1': t('result.blackwins'), '1/2-1/2': t('result.draw'), '*': t('result.abort') })[end] || end,
};
