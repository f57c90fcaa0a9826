// Move notation and engine numbers as players read them. usid writes the
// KIF text (▲７六歩(77), △同　角成(88), ▲５五角打); here it is only split for
// display, or replaced by Western notation (western.js) when the player chose
// it; scores are turned to Black's (sente's) point of view.

import { notation, t } from './i18n.js';
import { westernMove } from './western.js';

export const KANJI = {
  P: '歩', L: '香', N: '桂', S: '銀', G: '金', B: '角', R: '飛', K: '玉',
  '+P': 'と', '+L': '杏', '+N': '圭', '+S': '全', '+B': '馬', '+R': '龍',
};

// sideKeys are the catalogue keys of the sides' names, by color: 下手 and
// 上手 in a handicap game, else 先手 and 後手 (capital: to start a label).
export function sideKeys(handicap, capital = false) {
  if (handicap) return capital ? { b: 'side.Shitate', w: 'side.Uwate' } : { b: 'side.shitate', w: 'side.uwate' };
  return capital ? { b: 'side.Sente', w: 'side.Gote' } : { b: 'side.sente', w: 'side.gote' };
}

// Gote's king is written 王, sente's 玉, as on most sets and boards.
export function pieceKanji(kind, color) {
  return kind === 'K' && color === 'w' ? '王' : KANJI[kind];
}

export const FILE_DIGITS = ['', '１', '２', '３', '４', '５', '６', '７', '８', '９'];
export const RANK_KANJI = ['', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
// The board's coordinates in the chosen notation: Western names squares 7f.
export const fileLabel = (f, style = notation) => (style === 'western' ? String(f) : FILE_DIGITS[f]);
export const rankLabel = (r, style = notation) => (style === 'western' ? 'abcdefghi'[r - 1] : RANK_KANJI[r]);

// splitKif turns "▲７六歩(77)" into {side: 'b', text: '７六歩', origin: '77'}.
export function splitKif(kif) {
  if (!kif) return { side: '', text: '', origin: '' };
  let side = '';
  let rest = kif;
  if (rest[0] === '▲' || rest[0] === '☗') { side = 'b'; rest = rest.slice(1); }
  else if (rest[0] === '△' || rest[0] === '☖') { side = 'w'; rest = rest.slice(1); }
  const m = /\((\d\d)\)$/.exec(rest);
  let text = m ? rest.slice(0, m.index) : rest;
  // KIF pads 同 with an ideographic space to keep columns; inline it reads better without.
  text = text.replace('同　', '同');
  return { side, text, origin: m ? m[1] : '' };
}

export const MARK = { b: '☗', w: '☖' };

// moveText is what a move shows as, {side, text, origin}, in the chosen
// notation: kif is usid's KIF of the move (may be empty), usi the move,
// before the position it is played in (may be null: then KIF or USI).
export function moveText(kif, usi, before, style = notation) {
  if (style === 'western' && before && usi) {
    try { return { side: before.turn, text: westernMove(usi, before), origin: '' }; } catch { /* fall back */ }
  }
  if (kif) return splitKif(kif);
  return { side: before ? before.turn : '', text: usi || '', origin: '' };
}

// blackScore turns an engine score (side to move's view, as USI sends it)
// into Black's view: {cp} or {mate}, with mate 0 meaning "is mated".
export function blackScore(score, sideToMove) {
  if (!score) return null;
  const sign = sideToMove === 'w' ? -1 : 1;
  if (typeof score.mate === 'number') {
    if (score.mate === 0) return { mate: 0, winner: sideToMove === 'b' ? 'w' : 'b' };
    const m = score.mate * sign;
    return { mate: m, winner: m > 0 ? 'b' : 'w' };
  }
  if (typeof score.cp === 'number') return { cp: score.cp * sign };
  return null;
}

// formatScore writes a Black's-view score: "+35", "-120", "#5" (Black mates
// in 5), "#-3" (White mates in 3).
export function formatScore(s) {
  if (!s) return '–';
  if (s.mate !== undefined) {
    const n = Math.abs(s.mate);
    // Mate 0: the side to move is mated; say so rather than "#0".
    if (n === 0) return t('analysis.mated');
    return s.winner === 'b' ? `#${n}` : `#-${n}`;
  }
  if (s.cp === 0) return '0';
  return (s.cp > 0 ? '+' : '−') + Math.abs(s.cp);
}

// winChance maps a Black's-view score to -1..1 for the bar and the graph,
// flattening big scores the way players perceive them.
// k is the game's scale (shogi's centipawns are ten times chess's).
export function winChance(s, k = 0.0007) {
  if (!s) return 0;
  if (s.mate !== undefined) return s.winner === 'b' ? 1 : -1;
  return 2 / (1 + Math.exp(-k * s.cp)) - 1;
}

export function formatCount(n) {
  if (n === undefined || n === null) return '–';
  if (n < 1e4) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e5 ? 1 : 0)}k`;
  if (n < 1e9) return `${(n / 1e6).toFixed(n < 1e8 ? 1 : 0)}M`;
  return `${(n / 1e9).toFixed(1)}G`;
}

export function formatSeconds(ms) {
  if (ms === undefined || ms === null) return '–';
  // In the page's units: "0.1 秒" on a Japanese page.
  return t('time.seconds', { s: ms < 10000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000) });
}

// startTimeText is a start time as KIF's 開始日時 writes it: 2026/11/27 21:05:09.
export function startTimeText(d) {
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
