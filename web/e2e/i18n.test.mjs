// The pages in Japanese and in English, chosen from the browser's language
// and switchable on the page; move notation Japanese or Western. Real
// chromium, real usid and engines (fairy-stockfish analyses, gps solves).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, clickSquare, screenshot, takeProblems, baseURL, moveTexts, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const ANALYSIS = process.env.USID_ANALYSIS_ENGINE || 'fairy';
const MATE = process.env.USID_MATE_ENGINE || 'gps';
const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';

async function exerciseBoard(page) {
  await clickSquare(page, '7g');
  await clickSquare(page, '7f');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 1);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.selectOption('[data-testid="engine-select"]', ANALYSIS);
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="analysis-stats"]').textContent.length > 0);
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
}

// exerciseRecord loads a short game that ends by resignation, with a
// comment, and analyses it at a depth (the record's header, result and the
// game analysis' words).
async function exerciseRecord(page) {
  const kif = '手合割：平手\n先手：A\n後手：B\n手数----指手---------消費時間--\n   1 ７六歩(77)\n*角道を開ける\n   2 ３四歩(33)\n   3 投了\n';
  await page.fill('[data-testid="position-input"]', kif);
  await page.click('[data-testid="load-position"]');
  await page.waitForSelector('[data-testid="game-result"][data-end="resign"]');
  await page.selectOption('[data-testid="game-limit"]', 'd8');
  await page.click('[data-testid="analyse-game"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done', null, { timeout: 60_000 });
  await page.click('[data-testid="move"][data-ply="1"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="move-comment"]').textContent === '角道を開ける');
}

// exerciseChess analyses a chess position for a moment (lines, the eval bar, stats).
async function exerciseChess(page) {
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
}

// exerciseOthello plays a move by clicking its square.
async function exerciseOthello(page) {
  await page.click('[data-testid="sq-f5"]');
  await page.waitForSelector('[data-testid="move-list"] [data-testid="move"]');
  await page.waitForSelector('.board-area[data-ready="true"][data-turn="w"]');
}

async function exerciseTsume(page) {
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', MATE);
  await page.fill('[data-testid="sfen-input"]', SEED);
  await page.click('[data-testid="load-problem"]');
  await page.click('[data-testid="solve"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
}

// OTHER_PAGES are the pages after the board, each checked fresh and once used.
const OTHER_PAGES = [
  { name: 'tsume', path: '/tsume', ready: '[data-testid="board"] .piece', exercise: exerciseTsume, used: 'solved',
    more: async (page, check, suffix) => {
      await page.click('[data-testid="edit-board"]');
      await page.waitForSelector('[data-testid="editor"]:not([hidden])');
      await check(page, 'tsume, editor');
      await screenshot(page, `editor-${suffix}`);
    } },
  { name: 'chess', path: '/chess', ready: '[data-testid="sq-e1"] [data-piece="K"]', exercise: exerciseChess, used: 'after an analysis' },
  { name: 'othello', path: '/othello', ready: '.board-area[data-ready="true"]', exercise: exerciseOthello, used: 'after a move' },
];

for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
  for (const [size, opts] of Object.entries(SIZES)) {
    test(`${lang} browser at ${size} size: every page in ${lang === 'ja' ? 'Japanese' : 'English'}, nothing missing`, { timeout: 120_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const check = (page, what) => checkLanguage(page, lang, what);

        const board = await openBoard(browser.context);
        await check(board, 'board, fresh');
        const hands = await board.$$eval('[data-testid="hand-b"] .who, [data-testid="hand-w"] .who', (els) => els.map((e) => e.textContent).sort());
        assert.deepEqual(hands, lang === 'ja' ? ['先手', '後手'] : ['Gote', 'Sente'], 'the hands are named in the page\'s language');
        await exerciseBoard(board);
        await check(board, 'board, after an analysis');
        await screenshot(board, `board-${lang}-${size}`);
        await exerciseRecord(board);
        await check(board, 'board, a record with its result, analysed');
        await board.close();

        // The other pages: fresh, then used, then (tsume) its editor.
        for (const { name, path, ready, exercise, used, more } of OTHER_PAGES) {
          const page = await browser.context.newPage();
          await page.goto(`${baseURL()}${path}`);
          await page.waitForSelector(ready);
          await check(page, `${name}, fresh`);
          await exercise(page);
          await check(page, `${name}, ${used}`);
          await screenshot(page, `${name}-${lang}-${size}`);
          if (more) await more(page, check, `${lang}-${size}`);
          await page.close();
        }
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}

test('the language and the notation are switched on the page and remembered', { timeout: 60_000 }, async () => {
  const browser = await launch({ locale: 'ja-JP' });
  try {
    const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d_8h2b+&ply=3');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('２二角成'));
    assert.equal(await page.textContent('[data-testid="analyze-toggle"]'), '検討開始');

    await Promise.all([page.waitForEvent('load'), page.selectOption('[data-testid="lang-select"]', 'en')]);
    await page.waitForSelector('.board-area[data-ready="true"]');
    assert.equal(await page.textContent('[data-testid="analyze-toggle"]'), 'Analyze');
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    // The game survives the switch (the URL keeps it).
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);

    await Promise.all([page.waitForEvent('load'), page.selectOption('[data-testid="notation-select"]', 'western')]);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('Bx2b+'));
    const moves = await moveTexts(page);
    assert.match(moves[0], /P-7f/);
    assert.match(moves[1], /P-3d/);
    assert.match(moves[2], /Bx2b\+/);

    // Both choices are remembered by a new page of the same browser.
    const tsume = await browser.context.newPage();
    await tsume.goto(`${baseURL()}/tsume`);
    await tsume.waitForSelector('[data-testid="board"] .piece');
    assert.equal(await tsume.textContent('[data-testid="solve"]'), 'Solve');
    assert.equal(await tsume.inputValue('[data-testid="notation-select"]'), 'western');
    await tsume.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
    await tsume.selectOption('[data-testid="engine-select"]', MATE);
    await tsume.click('[data-testid="solve"]');
    await tsume.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
    const line = await tsume.locator('[data-testid="tsume-move"]').allTextContents();
    assert.match(line[0], /[A-Z][*x-][1-9][a-i]/, `Western mate line: ${line.join(' ')}`);

    // And back to Japanese.
    await Promise.all([page.waitForEvent('load'), page.selectOption('[data-testid="lang-select"]', 'ja')]);
    await page.waitForSelector('.board-area[data-ready="true"]');
    assert.equal(await page.textContent('[data-testid="analyze-toggle"]'), '検討開始');
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});
