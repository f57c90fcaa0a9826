// Unit tests of the pages' pure modules (no browser, no server):
//   node --test web/e2e/unit.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  STARTPOS, parseSfen, toSfen, applyMove, parsePositionText, usiPosition, squareIndex, squareName,
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
