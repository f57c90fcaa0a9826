// Unit tests of the pages' pure modules (no browser, no server):
//   node --test web/e2e/unit.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  STARTPOS, HANDICAPS, parseSfen, toSfen, applyMove, parsePositionText, usiPosition, squareIndex, squareName, isHandicap,
} from '../static/js/sfen.js';
import { splitKif, blackScore, formatScore, winChance, formatCount } from '../static/js/notation.js';

test('squares are numbered in SFEN reading order', () => {
  for (const [name, i] of [['9a', 0], ['1a', 8], ['9i', 72], ['1i', 80], ['7g', 56]]) {
    assert.equal(squareIndex(name), i, name);
    assert.equal(squareName(i), name);
  }
  assert.equal(squareIndex('0a'), -1);
  assert.equal(squareIndex('1j'), -1);
});

test('a game from a handicap start is a handicap game (下手 and 上手), from any other start not', () => {
  for (const sfen of Object.values(HANDICAPS)) assert.ok(isHandicap(sfen), sfen);
  assert.ok(isHandicap('4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1'), '十枚落ち, which records name');
  assert.ok(isHandicap(HANDICAPS.two.replace(/ 1$/, ' 3')), 'the move number aside');
  for (const root of ['startpos', STARTPOS, HANDICAPS.two.replace(' w ', ' b '), '4k4/9/9/9/9/9/9/9/4K4 b - 1', '', undefined]) {
    assert.ok(!isHandicap(root), String(root));
  }
});

test('parseSfen and toSfen round-trip', () => {
  for (const s of [
    STARTPOS,
    '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1',
    'lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LN+BGKGSNL w B 4',
    '4k4/9/9/9/9/9/9/9/4K4 b - 1',
  ]) {
    assert.equal(toSfen(parseSfen(s)), s);
  }
  assert.deepEqual(parseSfen('startpos'), parseSfen(STARTPOS));
  assert.throws(() => parseSfen('lnsgkgsnl/9 b - 1'), /9 ranks/);
  assert.throws(() => parseSfen('9/9/9/9/9/9/9/9/8x b - 1'), /unknown piece/);
});

test('applyMove moves, captures into the hand, promotes and drops', () => {
  let p = parseSfen(STARTPOS);
  for (const m of ['7g7f', '3c3d', '8h2b+']) p = applyMove(p, m);
  assert.equal(toSfen(p), 'lnsgkgsnl/1r5+B1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w B 4');
  p = applyMove(p, '3a2b'); // captures the horse: gote gets a plain bishop
  assert.equal(p.hands.w.B, 1);
  p = applyMove(p, 'B*5e');
  assert.equal(toSfen(p), 'lnsgkg1nl/1r5s1/pppppp1pp/6p2/4B4/2P6/PP1PPPPPP/7R1/LNSGKGSNL w b 6');
  assert.throws(() => applyMove(p, 'x'), /not a USI move/);
});

test('parsePositionText reads what users paste', () => {
  const cases = [
    ['startpos', 'startpos', []],
    ['position startpos moves 7g7f 3c3d', 'startpos', ['7g7f', '3c3d']],
    ['  startpos   moves 7g7f ', 'startpos', ['7g7f']],
    ['sfen 4k4/9/9/9/9/9/9/9/4K4 b G 1 moves G*5b', '4k4/9/9/9/9/9/9/9/4K4 b G 1', ['G*5b']],
    ['4k4/9/9/9/9/9/9/9/4K4 b G 1', '4k4/9/9/9/9/9/9/9/4K4 b G 1', []],
    ['position sfen 4k4/9/9/9/9/9/9/9/4K4 b G 1', '4k4/9/9/9/9/9/9/9/4K4 b G 1', []],
  ];
  for (const [text, sfen, moves] of cases) assert.deepEqual(parsePositionText(text), { sfen, moves }, text);
  assert.throws(() => parsePositionText('  '), /paste/);
  assert.equal(usiPosition('startpos', ['7g7f']), 'startpos moves 7g7f');
  assert.equal(usiPosition(STARTPOS, []), 'startpos');
  assert.equal(usiPosition('4k4/9/9/9/9/9/9/9/4K4 b G 1', []), 'sfen 4k4/9/9/9/9/9/9/9/4K4 b G 1');
});

test('KIF is split for display', () => {
  assert.deepEqual(splitKif('▲７六歩(77)'), { side: 'b', text: '７六歩', origin: '77' });
  assert.deepEqual(splitKif('△同　角成(88)'), { side: 'w', text: '同角成', origin: '88' });
  assert.deepEqual(splitKif('▲５五角打'), { side: 'b', text: '５五角打', origin: '' });
});

test('scores are shown from Black\'s side', () => {
  assert.equal(formatScore(blackScore({ cp: 35 }, 'b')), '+35');
  assert.equal(formatScore(blackScore({ cp: 35 }, 'w')), '−35');
  assert.equal(formatScore(blackScore({ cp: 0 }, 'w')), '0');
  assert.equal(formatScore(blackScore({ mate: 5 }, 'b')), '#5');
  assert.equal(formatScore(blackScore({ mate: 3 }, 'w')), '#-3');
  assert.equal(formatScore(blackScore({ mate: -2 }, 'w')), '#2');
  assert.equal(blackScore({ mate: 0 }, 'w').winner, 'b', 'gote to move and mated');
  assert.equal(winChance(blackScore({ mate: 1 }, 'b')), 1);
  assert.ok(winChance({ cp: 500 }) > 0 && winChance({ cp: 500 }) < 1);
  assert.equal(formatCount(1234567), '1.2M');
});

// --- game analysis (the contract of /v1/games/analysis), the game tree ----

import fs from 'node:fs';
import { normalizeJob, evalScore, summarize, GameJob, isTerminal } from '../static/js/gameanalysis.js';
import { Game } from '../static/js/game.js';
import { xStep, segments, barText, MARKED } from '../static/js/evalgraph.js';

// A recorded answer of usid's POST /v1/games/analysis for
// kifu/testdata/kfw-game-a.kif (38 moves) at depth 8 on fairy-stockfish:
// evaluations from Black's side, each move judged by the drop of the
// mover's winning chances (loss, 0..2).
const RECORDED = JSON.parse(fs.readFileSync(new URL('./testdata/game-analysis.json', import.meta.url)));

test('a game analysis answer is read into Black\'s-view scores, judgements and a summary', () => {
  const j = normalizeJob(RECORDED, 'b');
  assert.equal(j.status, 'done');
  assert.equal(j.positions.length, 39);
  assert.deepEqual([j.done, j.total], [39, 39]);
  assert.deepEqual(j.positions[0].score, { cp: 161 });
  assert.equal(j.positions[23].turn, 'w');
  assert.deepEqual(j.positions[23].score, { cp: -1597 }, 'Black\'s side, as sent');
  assert.equal(j.positions[22].judgement, 'blunder');
  assert.equal(j.positions[22].move, '2h2d');
  assert.equal(j.positions[38].move, null, 'the last position has no move played');
  const s = summarize(j.positions);
  assert.equal(s.b.moves + s.w.moves, 38);
  const count = (side, what) => j.positions.filter((p) => p.turn === side && p.judgement === what).length;
  for (const side of ['b', 'w']) {
    for (const what of ['inaccuracy', 'mistake', 'blunder']) assert.equal(s[side][what], count(side, what), `${side} ${what}`);
  }
  assert.ok(s.b.averageLoss > 0 && s.b.averageLoss <= 100, `average loss ${s.b.averageLoss}% of winning chances`);
  // What the page does not know it leaves alone.
  const odd = normalizeJob({ id: 'x', status: 'running', positions: [{ ply: 2, judgement: 'brilliant', eval: { cp: 5 } }, { ply: -1 }, null] }, 'w');
  assert.equal(odd.positions.length, 1);
  assert.equal(odd.positions[0].judgement, null);
  assert.equal(odd.positions[0].turn, 'w', 'white moves first in a handicap game');
  assert.equal(odd.total, null);
  assert.ok(isTerminal('done') && isTerminal('cancelled') && isTerminal('failed') && !isTerminal('running'));
});

test('mate evaluations from Black\'s side', () => {
  assert.deepEqual(evalScore({ mate: 3 }, 'w'), { mate: 3, winner: 'b' });
  assert.deepEqual(evalScore({ mate: -5 }, 'b'), { mate: -5, winner: 'w' });
  assert.deepEqual(evalScore({ mate: 0 }, 'w'), { mate: 0, winner: 'b' }, 'White to move and mated');
  assert.equal(formatScore(evalScore({ mate: -5 }, 'b')), '#-5');
  assert.equal(evalScore(null, 'b'), null);
});

test('a GameJob posts, polls until done, and reports each answer', async () => {
  const calls = [];
  const answers = [
    { id: 'g1', status: 'queued', progress: { done: 0, total: 39 }, positions: [] },
    { ...RECORDED, status: 'running', progress: { done: 10, total: 39 }, positions: RECORDED.positions.slice(0, 10) },
    { ...RECORDED, status: 'running', progress: { done: 25, total: 39 }, positions: RECORDED.positions.slice(0, 25) },
    RECORDED,
  ];
  const request = async (method, url, body) => { calls.push([method, url, body]); return answers.shift(); };
  const job = new GameJob(request, { interval: 1 });
  const seen = [];
  job.addEventListener('update', (e) => seen.push([e.detail.status, e.detail.done, e.detail.positions.length]));
  await job.start({ position: { sfen: 'startpos', moves: ['7g7f'] }, engine: 'fairy', limits: { depth: 8 } });
  // follow: the job lives while this page polls it (closing the tab ends it).
  assert.deepEqual(calls[0], ['POST', '/v1/games/analysis', { position: { sfen: 'startpos', moves: ['7g7f'] }, engine: 'fairy', limits: { depth: 8 }, follow: true }]);
  assert.deepEqual(calls.slice(1).map((c) => c.slice(0, 2)), [['GET', '/v1/games/analysis/g1'], ['GET', '/v1/games/analysis/g1'], ['GET', '/v1/games/analysis/g1']]);
  assert.deepEqual(seen, [['queued', 0, 0], ['running', 10, 10], ['running', 25, 25], ['done', 39, 39]]);
});

test('a GameJob cancels with DELETE and stops polling; a vanished job is an error', async () => {
  const calls = [];
  let job;
  const request = async (method, url) => {
    calls.push(method);
    if (method === 'GET' && calls.length === 3) job.cancel();
    return method === 'DELETE' ? { id: 'g2', status: 'cancelled', positions: [] } : { id: 'g2', status: 'running', positions: [] };
  };
  job = new GameJob(request, { interval: 1 });
  let last = null;
  job.addEventListener('update', (e) => { last = e.detail.status; });
  await job.start({ position: { sfen: 'startpos', moves: [] }, limits: { depth: 1 } });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(calls, ['POST', 'GET', 'GET', 'DELETE']);
  assert.equal(last, 'cancelled');

  const gone = new GameJob(async (method) => {
    if (method === 'POST') return { id: 'g3', status: 'running' };
    throw Object.assign(new Error('no such job'), { status: 404, code: 'not_found' });
  }, { interval: 1 });
  let err = null;
  gone.addEventListener('error', (e) => { err = e.detail; });
  await gone.start({ position: { sfen: 'startpos', moves: [] }, limits: { depth: 1 } });
  assert.equal(err?.code, 'not_found');
});

test('a GameJob says its id once started, and resume follows a job started before a reload', async () => {
  const calls = [];
  const answers = [
    { ...RECORDED, status: 'running', progress: { done: 10, total: 39 }, positions: RECORDED.positions.slice(0, 10) },
    RECORDED,
  ];
  const job = new GameJob(async (method, url) => { calls.push([method, url]); return answers.shift(); }, { interval: 1 });
  const seen = [];
  job.addEventListener('update', (e) => seen.push([e.detail.status, e.detail.done]));
  await job.resume('g9');
  assert.deepEqual(calls, [['GET', '/v1/games/analysis/g9'], ['GET', '/v1/games/analysis/g9']]);
  assert.deepEqual(seen, [['running', 10], ['done', 39]]);

  const started = [];
  const fresh = new GameJob(async (method) => (method === 'POST' ? { id: 'g10', status: 'queued' } : RECORDED), { interval: 1 });
  fresh.addEventListener('started', (e) => started.push(e.detail));
  await fresh.start({ position: { sfen: 'startpos', moves: [] }, limits: { depth: 1 } });
  assert.deepEqual(started, ['g10']);
});

test('a GameJob polls well inside its job\'s grace (follow_ms), whatever the server\'s is', () => {
  const job = new GameJob(async () => null, { interval: 500 });
  job.update({ id: 'g11', status: 'running', follow_ms: 10000 });
  assert.equal(job.interval, 500, 'the default pace is well inside 10 s');
  job.update({ id: 'g11', status: 'running', follow_ms: 1000 });
  assert.equal(job.interval, 250, 'a quarter of a short grace');
  job.update({ id: 'g11', status: 'running' });
  assert.equal(job.interval, 250, 'an answer without follow_ms changes nothing');
});

// A record as POST /v1/records/parse answers kifu/testdata/variations.kif
// (trimmed): a main line with variations at moves 2 and 5.
const VARIATIONS = {
  format: 'kif',
  position: { sfen: STARTPOS, moves: ['7g7f', '3c3d', '2g2f', '4c4d', '2f2e'] },
  header: { black: '甲', white: '乙', fields: [] },
  end: 'abort',
  plies: [
    { move: '7g7f', kif: '▲７六歩(77)', line: 6, time_ms: 1000 },
    {
      move: '3c3d', kif: '△３四歩(33)', line: 7, comment: '本譜',
      variations: [
        [{ move: '8c8d', kif: '△８四歩(83)', line: 20 }, { move: '2g2f', kif: '▲２六歩(27)', line: 21 }],
        [{ move: '4a3b', kif: '△３二金(41)', line: 30 }],
      ],
    },
    { move: '2g2f', kif: '▲２六歩(27)', line: 9 },
    { move: '4c4d', kif: '△４四歩(43)', line: 10 },
    { move: '2f2e', kif: '▲２五歩(26)', line: 11, variations: [[{ move: '3i4h', kif: '▲４八銀(39)', line: 16 }]] },
  ],
};

test('a loaded record keeps its variations; a move mid-game opens one and the main line stays', () => {
  const g = new Game();
  const changes = [];
  g.addEventListener('change', (e) => changes.push(e.detail.what));
  g.loadRecord(VARIATIONS);
  assert.equal(g.root, 'startpos');
  assert.equal(g.cursor, 0);
  assert.deepEqual(g.moves, VARIATIONS.position.moves);
  assert.equal(g.tree.children[0].children.length, 3, 'move 2 and its two alternatives');
  assert.equal(g.line[1].comment, '本譜');
  assert.equal(g.line[0].timeMs, 1000);
  assert.equal(g.record.end, 'abort');
  assert.ok(g.onMainLine);

  // Choosing a stored variation shows its line.
  const alt = g.tree.children[0].children[1];
  g.select(alt.id);
  assert.deepEqual(g.moves, ['7g7f', '8c8d', '2g2f']);
  assert.equal(g.cursor, 2);
  assert.equal(g.branchPly(), 1);
  assert.ok(!g.onMainLine);
  g.backToMain();
  assert.deepEqual(g.moves, VARIATIONS.position.moves);
  assert.equal(g.cursor, 2, 'at the move the variation replaced');

  // A new move in the middle of the game: a variation, nothing deleted.
  g.goto(3);
  g.refreshKif = async () => {}; // no usid here
  g.play('8c8d');
  assert.deepEqual(g.moves, ['7g7f', '3c3d', '2g2f', '8c8d']);
  assert.equal(g.cursor, 4);
  assert.deepEqual(g.mainLine().map((n) => n.move), VARIATIONS.position.moves, 'the game is intact');
  assert.equal(g.line[2].children.length, 2);
  assert.equal(toSfen(g.position), 'lnsgkgsnl/1r5b1/p1pppp1pp/1p4p2/9/2P4P1/PP1PPPP1P/1B5R1/LNSGKGSNL b - 5');
  // Playing it again only steps into it; the main line's own next move steps along the main line.
  g.goto(3);
  g.play('8c8d');
  assert.equal(g.line[2].children.length, 2);
  g.goto(3);
  g.play('4c4d');
  assert.deepEqual(g.moves, VARIATIONS.position.moves);
  assert.ok(g.onMainLine);
  assert.equal(g.key(2), 'startpos|7g7f 3c3d');
  assert.equal(g.keyBefore(g.line[2]), 'startpos|7g7f 3c3d');
  // At the end of the line a move extends it.
  g.goto(5);
  g.play('3a3b');
  assert.equal(g.mainLine().length, 6);
  assert.ok(changes.includes('load') && changes.includes('line'));
});

// Issue 26: the curve joined positions across ones not analysed yet, and
// the bar showed no number.
test('the graph joins only consecutive analysed positions; the bar\'s number fits it', () => {
  const pts = [0, 1, 2, 5, 6, 9].map((ply) => ({ ply, score: { cp: ply } }));
  assert.deepEqual(segments(pts).map((r) => r.map((p) => p.ply)), [[0, 1, 2], [5, 6], [9]]);
  assert.deepEqual(segments([]), []);
  assert.deepEqual(MARKED, ['mistake', 'blunder']);
  assert.equal(barText({ cp: 35 }), '+35');
  assert.equal(barText({ cp: -120 }), '−120');
  assert.equal(barText({ cp: 0 }), '0');
  assert.equal(barText({ cp: 1234 }), '+1.2k');
  assert.equal(barText({ cp: -31000 }), '−31k');
  assert.equal(barText({ mate: 5, winner: 'b' }), '#5');
});

test('a job\'s estimate of the time left is read from its progress', () => {
  assert.equal(normalizeJob({ status: 'running', progress: { done: 1, total: 101, estimated_left_ms: 133333 } }).left, 133333);
  assert.equal(normalizeJob({ status: 'running', progress: { done: 1, total: 101 } }).left, null);
});

test('the graph\'s move axis has readable steps', () => {
  assert.equal(xStep(8), 2);
  assert.equal(xStep(38), 10);
  assert.equal(xStep(120), 20);
  assert.equal(xStep(400), 50);
});

import { fit } from '../static/js/limits.js';

test('fit keeps the choices within a cap and picks the nearest below the one chosen', () => {
  const times = [3000, 10000, 30000, 60000, 120000];
  const under = (max) => (v) => v <= max;
  assert.deepEqual(fit(times, 10000, under(60000)), { keep: [3000, 10000, 30000, 60000], pick: 10000 });
  assert.deepEqual(fit(times, 120000, under(60000)), { keep: [3000, 10000, 30000, 60000], pick: 60000 });
  assert.deepEqual(fit(times, 30000, under(5000)), { keep: [3000], pick: 3000 });
  assert.deepEqual(fit(times, 3000, under(1000)), { keep: [], pick: undefined });
  assert.deepEqual(fit(times, undefined, under(1e9)), { keep: times, pick: times[0] });
});

// --- words and notation ----------------------------------------------------

test('the Japanese and English catalogues have the same keys and placeholders', async () => {
  const { CATALOGUES } = await import('../static/js/i18n.js');
  const { ja, en } = CATALOGUES;
  const missing = (a, b) => Object.keys(a).filter((k) => !(k in b));
  assert.deepEqual(missing(en, ja), [], 'keys missing in ja.js');
  assert.deepEqual(missing(ja, en), [], 'keys missing in en.js');
  const params = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
  for (const k of Object.keys(en)) {
    assert.ok(typeof ja[k] === 'string' && ja[k].trim(), `ja.js: ${k} is empty`);
    assert.ok(typeof en[k] === 'string' && en[k].trim(), `en.js: ${k} is empty`);
    assert.equal(params(ja[k]), params(en[k]), `${k}: the same {placeholders} in both`);
  }
});

// usedKeys lists the keys the pages and scripts name: data-i18n*="key" in
// HTML and in scripts' markup, t('key') / tr('key') calls, and the families
// built from a prefix (t(`state.${st}`)) with the values they take.
const NAMESPACES = ['title', 'chess', 'aria', 'nav', 'prefs', 'conn', 'foot', 'board', 'engine', 'analysis', 'state', 'stats',
  'terminal', 'err', 'toast', 'game', 'side', 'judge', 'graph', 'moves', 'load', 'time', 'tsume', 'editor', 'try', 'result', 'play', 'othello', 'watch', 'dual', 'match'];

function usedKeys() {
  const root = new URL('../static/', import.meta.url);
  const pages = new URL('../pages/', import.meta.url);
  const files = [
    ...fs.readdirSync(pages).filter((f) => f.endsWith('.html')).map((f) => new URL(f, pages)),
    ...fs.readdirSync(new URL('parts/', pages)).filter((f) => f.endsWith('.html')).map((f) => new URL(`parts/${f}`, pages)),
    ...fs.readdirSync(new URL('js/', root)).filter((f) => f.endsWith('.js') && f !== 'i18n.js').map((f) => new URL(`js/${f}`, root)),
    ...fs.readdirSync(new URL('js/games/', root)).filter((f) => f.endsWith('.js')).map((f) => new URL(`js/games/${f}`, root)),
  ];
  const keys = new Map(); // key -> file
  const families = new Set();
  for (const f of files) {
    let s = fs.readFileSync(f, 'utf8');
    // pages/board.html is a template web.go renders for /, /chess and
    // /othello: its keys are the games' (shogi's own are written out in
    // its $shogi branches; a key made of other template data, the play
    // panel's sides, is skipped).
    if (s.includes('{{.Game}}')) s = ['chess', 'othello'].map((g) => s.replaceAll('{{.Game}}', g)).join('\n');
    for (const m of s.matchAll(/data-(?:i18n(?:-[a-z-]+)?|title-key)="([^"$]+)"/g)) if (!m[1].includes('{{')) keys.set(m[1], f.pathname);
    // Keys are written whole in the scripts ('tsume.matein'), also where a
    // choice picks one (t(mate ? 'a.b' : 'a.c')).
    for (const m of s.matchAll(/(?<!Setting\()'((?:[a-z]+)(?:\.[A-Za-z0-9]+)+)'/g)) if (NAMESPACES.includes(m[1].split('.')[0])) keys.set(m[1], f.pathname);
    for (const m of s.matchAll(/\b(?:t|tr|e)\(\s*`([a-z.]+)\$\{/g)) families.add(m[1]);
  }
  return { keys, families };
}

// The values of each family of keys, as the scripts build them.
const FAMILIES = {
  'state.': ['idle', 'connecting', 'starting', 'queued', 'searching', 'stopping', 'stopped', 'done', 'error', 'terminal'],
  'judge.': ['inaccuracy', 'mistake', 'blunder'],
  'game.status.': ['queued', 'running', 'paused', 'done', 'cancelled', 'failed', 'abandoned'],
  'result.': ['resign', 'time_up', 'repetition', 'impasse', 'abort', 'mate', 'no_mate', 'declare_win', 'illegal_win', 'illegal_loss', 'draw'],
  'play.reason.': ['resign', 'checkmate', 'time', 'repetition', 'perpetual_check', 'declaration', 'illegal_declaration', 'max_moves', 'abandoned', 'aborted',
    'stalemate', 'insufficient_material', 'fifty_moves', 'discs'],
  'match.status.': ['queued', 'running', 'done', 'cancelled', 'failed'],
  'match.game.': ['shogi', 'chess', 'othello'],
  'match.sprt.': ['H0', 'H1'],
  'match.reason.': ['checkmate', 'repetition', 'perpetual_check', 'declaration', 'illegal_declaration', 'stalemate', 'insufficient_material',
    'fifty_moves', 'discs', 'resign', 'illegal_move', 'engine_error', 'time', 'adjudication', 'max_plies'],
  'editor.start.': ['even', 'lance', 'bishop', 'rook', 'rooklance', 'two', 'four', 'six', 'eight', 'tsume'],
};

test('every key a page or script uses is in the catalogues, and every catalogue key is used', async () => {
  const { CATALOGUES } = await import('../static/js/i18n.js');
  // usid's error codes come from the server (errwords.js): each sentence in
  // the catalogue is one the page may show.
  FAMILIES['err.code.'] = Object.keys(CATALOGUES.en).filter((k) => k.startsWith('err.code.')).map((k) => k.slice('err.code.'.length));
  const { keys, families } = usedKeys();
  assert.deepEqual(Object.keys(CATALOGUES.en).filter((k) => !NAMESPACES.includes(k.split('.')[0])), [], 'a new namespace: list it in NAMESPACES');
  assert.ok(keys.size > 100, `found ${keys.size} keys: the scan works`);
  for (const [k, file] of keys) {
    for (const lang of ['ja', 'en']) assert.ok(k in CATALOGUES[lang], `${file} uses ${k}, which ${lang}.js lacks`);
  }
  assert.deepEqual([...families].filter((f) => !FAMILIES[f]), [], 'a new family of keys: list its values in FAMILIES');
  const all = new Set(keys.keys());
  for (const f of families) for (const v of FAMILIES[f]) {
    const k = f + v;
    all.add(k);
    for (const lang of ['ja', 'en']) assert.ok(k in CATALOGUES[lang], `${k} (family ${f}) is missing in ${lang}.js`);
  }
  assert.deepEqual(Object.keys(CATALOGUES.en).filter((k) => !all.has(k)), [], 'catalogue keys no page uses');
});

test('t fills placeholders; the language follows the saved choice, else the browser', async () => {
  const i18n = await import('../static/js/i18n.js');
  assert.equal(i18n.pickLang(null, ['ja-JP', 'en-US']), 'ja');
  assert.equal(i18n.pickLang(null, ['en-GB', 'ja']), 'en');
  assert.equal(i18n.pickLang(null, ['fr-FR', 'de']), 'ja', 'Japanese when no browser language is ours');
  assert.equal(i18n.pickLang('en', ['ja-JP']), 'en', 'the saved choice wins');
  assert.equal(i18n.pickLang('xx', ['en']), 'en');
  i18n.setLang('ja');
  assert.equal(i18n.t('tsume.matein', { n: 5 }), '5手詰');
  i18n.setLang('en');
  assert.equal(i18n.t('tsume.matein', { n: 5 }), 'Mate in 5');
  assert.equal(i18n.t('no.such.key'), 'no.such.key');
});

test('Western notation: piece, origin when ambiguous, capture, drop, promotion', async () => {
  const { westernMove } = await import('../static/js/western.js');
  const { moveText } = await import('../static/js/notation.js');
  let p = parseSfen(STARTPOS);
  assert.equal(westernMove('7g7f', p), 'P-7f');
  assert.equal(westernMove('6i5h', p), 'G6i-5h', 'both golds reach 5h');
  assert.equal(westernMove('3i4h', p), 'S-4h');
  assert.equal(westernMove('2h5h', p), 'R-5h');
  for (const m of ['7g7f', '3c3d']) p = applyMove(p, m);
  assert.equal(westernMove('8h2b+', p), 'Bx2b+');
  assert.equal(westernMove('8h2b', p), 'Bx2b=');
  p = applyMove(p, '8h2b+');
  assert.equal(westernMove('3a2b', p), 'Sx2b', 'only the silver reaches 2b... ');
  p = applyMove(p, '3a2b');
  assert.equal(westernMove('B*4e', p), 'B*4e');
  assert.deepEqual(moveText('▲７六歩(77)', '7g7f', parseSfen(STARTPOS), 'western'), { side: 'b', text: 'P-7f', origin: '' });
  assert.deepEqual(moveText('▲７六歩(77)', '7g7f', parseSfen(STARTPOS), 'kif'), { side: 'b', text: '７六歩', origin: '77' });
  assert.deepEqual(moveText('', '7g7f', null, 'western'), { side: '', text: '7g7f', origin: '' });
});

test('a variation is deleted, or made the main line', () => {
  const g = new Game();
  g.loadRecord(VARIATIONS);
  const main = g.moves.slice();
  const alt = g.tree.children[0].children[1];
  g.select(alt.id);
  const line = g.moves.slice();
  assert.ok(!g.onMainLine);
  g.promoteVariation();
  assert.ok(g.onMainLine, 'the shown line is the main line now');
  assert.deepEqual(g.mainLine().map((n) => n.move), line);
  assert.equal(g.tree.children[0].children[1].move, main[1], 'the old main line is the first variation');
  g.promoteVariation(); // nothing to do on the main line
  assert.deepEqual(g.mainLine().map((n) => n.move), line);

  const n = g.tree.children[0].children.length;
  g.select(g.tree.children[0].children[1].id);
  assert.ok(!g.onMainLine);
  g.deleteVariation();
  assert.ok(g.onMainLine);
  assert.equal(g.cursor, 1, 'shown at the move the variation left');
  assert.equal(g.tree.children[0].children.length, n - 1);
  assert.ok(!g.mainLine().some((x) => x.move === main[1] && x.parent === g.tree.children[0]), 'the old main line is gone');
});

test('every Japanese character of the pages and catalogues is in the embedded text font', () => {
  const glyphs = new Set(fs.readFileSync(new URL('../tools/font-glyphs.txt', import.meta.url), 'utf8').trim());
  const cjk = (c) => { const o = c.codePointAt(0); return (o >= 0x3000 && o <= 0x30ff) || (o >= 0x4e00 && o <= 0x9fff) || (o >= 0xff01 && o <= 0xff5e); };
  const dirs = ['../pages/', '../pages/parts/', '../static/js/', '../static/js/games/', '../static/js/i18n/'].map((d) => new URL(d, import.meta.url));
  const missing = new Set();
  for (const d of dirs) {
    for (const f of fs.readdirSync(d).filter((x) => /\.(html|js)$/.test(x))) {
      for (const c of fs.readFileSync(new URL(f, d), 'utf8')) if (cjk(c) && !glyphs.has(c)) missing.add(`${c} (${f})`);
    }
  }
  assert.deepEqual([...missing], [], 'run web/tools/subset-fonts.sh');
});

test('a GET is revalidated by the browser cache (usid\'s ETag, If-None-Match, 304); other calls bypass nothing (issue 35)', async () => {
  const { request } = await import('../static/js/api.js');
  const seen = [];
  const saved = globalThis.fetch;
  globalThis.fetch = async (url, opts) => {
    seen.push({ url, method: opts.method, inm: opts.headers['If-None-Match'], cache: opts.cache });
    return new Response('{"id":"j","status":"running"}', { status: 200, headers: { ETag: '"v1"', 'Content-Type': 'application/json' } });
  };
  try {
    const a = await request('GET', '/v1/games/analysis/j');
    assert.deepEqual(a, { id: 'j', status: 'running' });
    await request('POST', '/v1/validate', { position: {} });
    assert.equal(seen[0].cache, 'no-cache', 'a GET asks the server again, with the cached ETag');
    assert.equal(seen[0].inm, undefined, 'the browser, not the page, sends If-None-Match');
    assert.equal(seen[1].cache, undefined);
  } finally {
    globalThis.fetch = saved;
  }
});

// The game modules of the board application (games/*.js): positions read,
// written and played for display as usid would have them.
test('chess module: FEN in and out, castling, en passant and promotion played for display', async () => {
  const { chess } = await import('../static/js/games/chess.js');
  const start = chess.parse('startpos');
  assert.equal(chess.toText(start), chess.startText);
  let p = start;
  for (const m of ['e2e4', 'g8f6', 'e4e5', 'd7d5']) p = chess.apply(p, m);
  assert.equal(chess.toText(p), 'rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3');
  p = chess.apply(p, 'e5d6'); // en passant takes the pawn passed
  assert.equal(chess.toText(p).split(' ')[0], 'rnbqkb1r/ppp1pppp/3P1n2/8/8/8/PPPP1PPP/RNBQKBNR');
  const castle = chess.apply(chess.parse('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1'), 'e1g1');
  assert.equal(chess.toText(castle), 'r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1');
  const long = chess.apply(castle, 'e8c8');
  assert.equal(chess.toText(long), '2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2');
  const promo = chess.apply(chess.parse('8/P6k/8/8/8/8/8/K7 w - - 0 1'), 'a7a8n');
  assert.equal(chess.toText(promo).split(' ')[0], 'N7/7k/8/8/8/8/8/K7');
  assert.deepEqual(chess.parseText('position fen 8/8/8/8/8/8/8/K6k w - - 0 1 moves a1a2'), { root: '8/8/8/8/8/8/8/K6k w - - 0 1', moves: ['a1a2'] });
  assert.equal(chess.positionText('startpos', ['e2e4']), 'startpos moves e2e4');
  assert.equal(chess.formatScore({ cp: 35 }), '+0.35');
  assert.equal(chess.formatScore({ mate: -3, winner: 'w' }), '#-3');
  assert.equal(chess.moveNumber(1, 'w'), '1.');
  assert.equal(chess.moveNumber(2, 'w'), '');
  assert.equal(chess.editorSpec.text(chess.parse('startpos')), chess.startText, 'castling rights from where kings and rooks stand');
});

test('othello module: tokens, a1 top left, flips, a transcript with its passes put back', async () => {
  const { othello, squaresFor, readTranscript } = await import('../static/js/games/othello.js');
  const start = othello.parse('startpos');
  assert.equal(othello.toText(start), othello.startText);
  assert.equal(start.board[3 * 8 + 3].color, 'w', 'd4 is white');
  assert.deepEqual(squaresFor(start).sort(), ['c4', 'd3', 'e6', 'f5']);
  const p = othello.apply(start, 'f5');
  assert.equal(othello.toText(p), '---------------------------OX------XXX--------------------------W2', 'as usid plays f5');
  assert.equal(othello.apply(p, 'pass').turn, 'b');
  // White cannot move after this game's last square: the transcript of
  // the game that follows reads the pass back in.
  const game = 'd3c3b3b2b1d2e3e2d1a1f3a3f5g3f4f2f1g5h3c5c4c2g4g1h1c1d6e1b6c6b4e6c7h5g2a7h6e7a2c8e8h7b7b5a4f8g8h2g6h4a6f7d8b8a5f6d7h8g7';
  const moves = readTranscript(game + 'a8');
  assert.equal(moves.length, game.length / 2 + 2);
  assert.deepEqual(moves.slice(-2), ['pass', 'a8']);
  assert.equal(readTranscript('f5 D6 c3'.toLowerCase()).join(' '), 'f5 d6 c3');
  assert.equal(readTranscript('1. e4'), null, 'not a transcript');
  assert.equal(othello.writeTranscript(moves), game + 'a8');
  assert.equal(othello.endText('33-31').includes('33'), true);
});

test('povSide: chess keeps scores as White\'s view, shogi and othello as Black\'s', async () => {
  const { GAMES, povSide } = await import('../static/js/games/index.js');
  assert.equal(povSide(GAMES.chess, 'w'), 'b');
  assert.equal(povSide(GAMES.chess, 'b'), 'w');
  assert.equal(povSide(GAMES.shogi, 'w'), 'w');
  assert.equal(povSide(GAMES.othello, 'b'), 'b');
});

test('usid\'s error codes are told in the page\'s words, with their details (issue 37)', async () => {
  const i18n = await import('../static/js/i18n.js');
  const { errorText, details } = await import('../static/js/errwords.js');
  const { formatScore } = await import('../static/js/notation.js');
  const gold = { code: 'too_many_pieces', message: '5 golds on the board and in hand; a set has 4' };
  i18n.setLang('ja');
  assert.equal(errorText(gold), '金が盤上と持ち駒に5枚あります（一組に4枚です）');
  assert.equal(errorText({ code: 'nifu', message: 'White has 2 unpromoted pawns on file 3 (nifu)' }), '後手の歩が3筋に2枚あります（二歩）');
  assert.equal(errorText({ code: 'dead_piece', message: 'Black pawn on 3a could never move again' }), '３一の先手の歩は二度と動けません（行き所のない駒）');
  assert.equal(details('a disc on e5 turns over no disc', 'othello').sq, 'e5');
  assert.equal(details('d4 e5 empty; the four centre squares d4 e4 d5 e5 are occupied in every position of a game', 'othello').sqs, 'd4 e5');
  assert.equal(errorText({ code: 'no_such_code', message: 'whatever' }), 'usidがこの内容を受け付けませんでした');
  assert.equal(formatScore({ mate: 0, winner: 'w' }), '詰み');
  // A page's engine of another game (issue 44: the tsume page offered stockfish).
  const mismatch = { code: 'game_mismatch', message: 'engine stockfish plays chess; the request has a shogi position (sfen)' };
  assert.equal(errorText(mismatch), 'エンジンstockfishはチェスのエンジンです。この局面は将棋です');
  i18n.setLang('en');
  assert.equal(errorText(mismatch), 'Engine stockfish plays chess; the request has a shogi position (sfen)');
  assert.equal(errorText(gold), gold.message, 'an English page shows usid\'s own words, without the code');
  assert.equal(errorText({ code: 'pawn_back_rank', message: 'a pawn stands on a1, on the first or last rank' }), 'A pawn stands on a1, on the first or last rank');
  // A sentence that begins with a square or a move keeps its lower case (issue 44).
  assert.equal(errorText({ code: 'centre_empty', message: 'd4 e4 d5 e5 are empty; the four centre squares d4 e4 d5 e5 are occupied in every position of a game' }),
    'd4 e4 d5 e5 are empty; the four centre squares d4 e4 d5 e5 are occupied in every position of a game');
  assert.equal(errorText({ code: 'occupied', message: 'f5 already holds a disc' }), 'f5 already holds a disc');
  assert.equal(errorText({ code: 'too_many_requests', message: '' }), 'Too many requests: wait a moment, or close another usid tab');
  assert.equal(formatScore({ mate: 0, winner: 'b' }), 'Mate');
  assert.equal(formatScore({ mate: 3, winner: 'b' }), '#3');
});
