// Positions for display only: parse an SFEN, apply a USI move, write an SFEN.
// No rules live here: which moves are legal, and whether a position is legal
// at all, is always usid's answer (/v1/validate). Applying a move locally only
// lets navigation through a line be instant.

export const STARTPOS = 'lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1';

// HANDICAPS are the handicap starts the editor offers; in a handicap game
// the giver (上手, gote) moves first.
export const HANDICAPS = {
  lance: 'lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  bishop: 'lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  rook: 'lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  rooklance: 'lnsgkgsn1/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  two: 'lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  four: '1nsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  six: '2sgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  eight: '3gkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
};
// The rarer handicaps records also name (右香落ち, 三枚落ち, 五枚落ち,
// 左五枚落ち, 七枚落ち, 十枚落ち): a game from any of them has 下手 and 上手.
const HANDICAP_STARTS = new Set([...Object.values(HANDICAPS),
  '1nsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  'lnsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  '2sgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  '1nsgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  '2sgkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  '3gkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1',
  '4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1']);

// isHandicap tells whether a game from root (an SFEN, or 'startpos') is a
// handicap game, whose players are 下手 (sente) and 上手 (gote).
export function isHandicap(root) {
  return HANDICAP_STARTS.has(String(root || '').replace(/ \d+$/, ' 1'));
}

// Hand pieces in the order SFEN and players list them.
export const HAND_KINDS = ['R', 'B', 'G', 'S', 'N', 'L', 'P'];
const PROMOTABLE = new Set(['P', 'L', 'N', 'S', 'B', 'R']);

export const FILES = [9, 8, 7, 6, 5, 4, 3, 2, 1]; // left to right from Black's side
export const RANKS = 'abcdefghi';

// Square index in SFEN reading order: 9a = 0, 1a = 8, 9i = 72, 1i = 80.
export function squareIndex(name) {
  const file = name.charCodeAt(0) - 48;
  const rank = RANKS.indexOf(name[1]);
  if (!(file >= 1 && file <= 9) || rank < 0 || name.length !== 2) return -1;
  return rank * 9 + (9 - file);
}

export function squareName(index) {
  return `${9 - (index % 9)}${RANKS[Math.floor(index / 9)]}`;
}

function emptyHands() {
  const h = {};
  for (const k of HAND_KINDS) h[k] = 0;
  return h;
}

// parseSfen returns {board: Array(81) of null | {color: 'b'|'w', kind: 'P'|'+P'|...},
// hands: {b: {R: n, ...}, w: {...}}, turn: 'b'|'w', moveNumber}. It throws on
// text it cannot read at all; a position it reads may still break the rules.
export function parseSfen(sfen) {
  if (sfen === 'startpos') sfen = STARTPOS;
  const fields = sfen.trim().split(/\s+/);
  if (fields.length < 3) throw new Error('an SFEN needs board, side to move and hands');
  const [boardText, turn, handText, num] = fields;
  const ranks = boardText.split('/');
  if (ranks.length !== 9) throw new Error('the board must have 9 ranks');
  const board = new Array(81).fill(null);
  ranks.forEach((row, r) => {
    let f = 0;
    for (let i = 0; i < row.length; i++) {
      const c = row[i];
      if (c >= '1' && c <= '9') { f += Number(c); continue; }
      let promoted = false;
      let ch = c;
      if (c === '+') { promoted = true; ch = row[++i]; }
      if (!ch || !/[plnsgbrk]/i.test(ch)) throw new Error(`unknown piece "${ch ?? '+'}"`);
      if (f >= 9) throw new Error(`rank ${r + 1} is too long`);
      const upper = ch.toUpperCase();
      board[r * 9 + f] = { color: ch === upper ? 'b' : 'w', kind: (promoted ? '+' : '') + upper };
      f++;
    }
    if (f !== 9) throw new Error(`rank ${r + 1} does not have 9 squares`);
  });
  if (turn !== 'b' && turn !== 'w') throw new Error('side to move must be b or w');
  const hands = { b: emptyHands(), w: emptyHands() };
  if (handText !== '-') {
    const re = /(\d*)([RBGSNLPrbgsnlp])/g;
    let m, seen = 0;
    while ((m = re.exec(handText))) {
      const up = m[2].toUpperCase();
      hands[m[2] === up ? 'b' : 'w'][up] += m[1] ? Number(m[1]) : 1;
      seen += m[0].length;
    }
    if (seen !== handText.length) throw new Error('malformed hands');
  }
  return { board, hands, turn, moveNumber: Number(num) || 1 };
}

export function toSfen(pos) {
  const rows = [];
  for (let r = 0; r < 9; r++) {
    let row = '', empty = 0;
    for (let f = 0; f < 9; f++) {
      const p = pos.board[r * 9 + f];
      if (!p) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      const letter = p.kind.replace('+', '');
      row += (p.kind[0] === '+' ? '+' : '') + (p.color === 'b' ? letter : letter.toLowerCase());
    }
    if (empty) row += empty;
    rows.push(row);
  }
  let hands = '';
  for (const color of ['b', 'w']) {
    for (const k of HAND_KINDS) {
      const n = pos.hands[color][k];
      if (!n) continue;
      hands += (n > 1 ? n : '') + (color === 'b' ? k : k.toLowerCase());
    }
  }
  return `${rows.join('/')} ${pos.turn} ${hands || '-'} ${pos.moveNumber}`;
}

// parseMove splits a USI move: {drop: 'P', to: 40} or {from, to, promote}.
export function parseMove(usi) {
  if (/^[RBGSNLP]\*[1-9][a-i]$/.test(usi)) {
    return { drop: usi[0], to: squareIndex(usi.slice(2, 4)) };
  }
  if (/^[1-9][a-i][1-9][a-i]\+?$/.test(usi)) {
    return { from: squareIndex(usi.slice(0, 2)), to: squareIndex(usi.slice(2, 4)), promote: usi.length === 5 };
  }
  return null;
}

// applyMove returns the position after usi, without checking legality.
export function applyMove(pos, usi) {
  const m = parseMove(usi);
  if (!m) throw new Error(`not a USI move: ${usi}`);
  const next = {
    board: pos.board.slice(),
    hands: { b: { ...pos.hands.b }, w: { ...pos.hands.w } },
    turn: pos.turn === 'b' ? 'w' : 'b',
    moveNumber: pos.moveNumber + 1,
  };
  const me = pos.turn;
  if (m.drop) {
    next.hands[me][m.drop] = Math.max(0, next.hands[me][m.drop] - 1);
    next.board[m.to] = { color: me, kind: m.drop };
    return next;
  }
  const piece = pos.board[m.from];
  if (!piece) throw new Error(`no piece on ${usi.slice(0, 2)}`);
  const captured = pos.board[m.to];
  if (captured) {
    const base = captured.kind.replace('+', '');
    if (base !== 'K') next.hands[me][base]++;
  }
  next.board[m.from] = null;
  next.board[m.to] = {
    color: piece.color,
    kind: m.promote && PROMOTABLE.has(piece.kind) ? '+' + piece.kind : piece.kind,
  };
  return next;
}

// parsePositionText reads what a user pastes: a bare SFEN, "sfen <SFEN>",
// "startpos", each optionally followed by "moves ...", optionally preceded by
// "position". It returns {sfen, moves}; usid validates the result.
export function parsePositionText(text) {
  let t = text.trim().replace(/\s+/g, ' ');
  if (!t) throw new Error('paste an SFEN or a USI position');
  t = t.replace(/^position /, '');
  let head = t, moves = [];
  const at = t.indexOf(' moves');
  if (at >= 0 || t.startsWith('moves')) {
    const i = at >= 0 ? at : 0;
    head = t.slice(0, i).trim();
    moves = t.slice(i).trim().replace(/^moves/, '').trim().split(' ').filter(Boolean);
  }
  if (head === '' || head === 'startpos') return { sfen: 'startpos', moves };
  head = head.replace(/^sfen /, '');
  return { sfen: head, moves };
}

// usiPosition writes {sfen, moves} as a USI position string.
export function usiPosition(sfen, moves) {
  const head = sfen === 'startpos' || sfen === STARTPOS ? 'startpos' : `sfen ${sfen}`;
  return moves.length ? `${head} moves ${moves.join(' ')}` : head;
}
