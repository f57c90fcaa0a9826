// usid's errors in the page's words. usid answers with a stable code and an
// English message that carries the details (counts, squares, pieces, sides);
// a player reads neither codes nor, on a Japanese page, English. errorText
// picks the catalogue's sentence for the code (per game where the games'
// codes differ: err.code.chess.too_many_pieces before err.code.too_many_pieces) and
// fills it with the details read from the message. An English page shows
// usid's own message, which already says it in words.

import { t, lang, CATALOGUES } from './i18n.js';

const SHOGI_PIECES = {
  'promoted lance': '成香', 'promoted knight': '成桂', 'promoted silver': '成銀', tokin: 'と', horse: '馬', dragon: '龍',
  pawn: '歩', lance: '香', knight: '桂', silver: '銀', gold: '金', bishop: '角', rook: '飛', king: '玉',
};
const CHESS_PIECES = { pawn: 'ポーン', knight: 'ナイト', bishop: 'ビショップ', rook: 'ルーク', queen: 'クイーン', king: 'キング' };
const GAMES = { shogi: '将棋', chess: 'チェス', othello: 'オセロ' };
const FULL = '０１２３４５６７８９';
const RANKS = '一二三四五六七八九';

const game = () => globalThis.document?.body?.dataset.game || 'shogi';

// details reads the message's numbers, squares, piece and sides, in the
// order it names them, in the page's words.
export function details(message, g = game()) {
  const m = String(message || '');
  const nums = (m.match(/(?<![\w.])\d+(?![\w.])/g) || []);
  const sqRe = g === 'shogi' ? /(?<![\w])([1-9])([a-i])(?![\w])/g : /(?<![\w])([a-h][1-8])(?![\w])/g;
  // Squares from the first clause: what follows a ';' explains the rule
  // ("the four centre squares d4 e4 d5 e5 are occupied ...").
  const sqs = [...m.split(';')[0].matchAll(sqRe)].map((x) => (g === 'shogi' && lang === 'ja' ? FULL[x[1]] + RANKS[x[2].charCodeAt(0) - 97] : x[0]));
  const names = g === 'shogi' ? SHOGI_PIECES : CHESS_PIECES;
  let piece = '';
  for (const [en, ja] of Object.entries(names)) {
    if (new RegExp(`\\b${en}s?\\b`, 'i').test(m)) { piece = lang === 'ja' ? ja : en; break; }
  }
  const sideName = (w) => {
    const white = /^white$/i.test(w);
    if (g === 'shogi') return t(white ? 'side.gote' : 'side.sente');
    return t(white ? 'side.white' : 'side.black');
  };
  const sides = (m.match(/\b(Black|White)\b/gi) || []).map(sideName);
  // The games a refusal names (game_mismatch: "engine stockfish plays
  // chess; the request has a shogi position") and the engine it names.
  const games = (m.match(/\b(shogi|chess|othello)\b/g) || []).map((x) => (lang === 'ja' ? GAMES[x] : x));
  const engine = m.match(/\bengine (\S+)/)?.[1] || '';
  const p = { piece, side: sides[0] || '', side2: sides[1] || '', sq: sqs[0] || '', sq2: sqs[1] || '', sqs: sqs.join(' '),
    game1: games[0] || '', game2: games[1] || '', engine };
  nums.forEach((n, i) => { p[`n${i + 1}`] = n; });
  p.nlast = nums[nums.length - 1] || '';
  return p;
}

// errorKey is the catalogue key's end (err.code.<it>) of the code's
// sentence, or null.
export function errorKey(code, g = game()) {
  for (const k of [`${g}.${code}`, code]) if (CATALOGUES.ja[`err.code.${k}`] !== undefined) return k;
  return null;
}

// capitalised begins a sentence with a capital, unless its first word is
// a square or a move ("d4 e4 d5 e5 are empty", "e2e4 is illegal"): those
// are written in lower case.
export function capitalised(msg) {
  if (/^\S*\d/.test(msg)) return msg;
  return msg[0].toUpperCase() + msg.slice(1);
}

// errorText is what the player reads for usid's error {code, message}.
export function errorText(e) {
  const code = e?.code || '';
  if (lang !== 'ja' && e?.message) return capitalised(e.message);
  const key = errorKey(code);
  if (key) return t(`err.code.${key}`, details(e?.message));
  return lang === 'ja' || !e?.message ? t('err.code.unknown') : e.message;
}
