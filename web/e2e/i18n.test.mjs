// The pages in Japanese and in English, chosen from the browser's language
// and switchable on the page; move notation Japanese or Western. Real
// chromium, real usid and engines (fairy-stockfish analyses, gps solves).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, clickSquare, screenshot, takeProblems, baseURL, moveTexts } from './lib.mjs';

const ANALYSIS = process.env.USID_ANALYSIS_ENGINE || 'fairy';
const MATE = process.env.USID_MATE_ENGINE || 'gps';
const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';
const SIZES = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844, mobile: true } };

// Latin words a Japanese page may show: names of formats, protocols and
// keys, the language chooser's "English", the product's name; engine names
// and versions come from /v1/engines.
const ALLOWED = new Set(['usid', 'API', 'SFEN', 'USI', 'KIF', 'KI2', 'CSA', 'HTTP', 'Home', 'End', 'English',
  'startpos', 'moves', 'go', 'mate', 'gps']);

async function engineWords() {
  const { engines: list } = await (await fetch(`${baseURL()}/v1/engines`)).json();
  const words = new Set();
  for (const e of list) for (const s of [e.name, e.id?.name, e.id?.author]) for (const w of String(s || '').match(/[A-Za-z]+/g) || []) words.add(w);
  return words;
}

// pageWords collects what the page says: its text (not the data of inputs,
// error details usid wrote, or engine names in the engine chooser) and the
// attributes people read (title, placeholder, aria-label).
async function pageWords(page) {
  return page.evaluate(() => {
    const skip = (el) => el.closest('textarea, input, #engine, .error-message, .error-code, script, style');
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!skip(n.parentElement) && n.textContent.trim()) out.push(n.textContent);
    for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
      if (el.closest('#engine')) continue;
      for (const a of ['title', 'placeholder', 'aria-label']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
    }
    // CSS-generated words come from data attributes.
    for (const el of document.querySelectorAll('[data-empty], [data-illegal]')) out.push(el.dataset.empty || el.dataset.illegal);
    out.push(document.title);
    return out;
  });
}

// latinWords are the words of two or more Latin letters in texts, leaving
// out tokens with digits or slashes (SFEN, moves like 7g7f, sizes like 3k).
function latinWords(texts, allowed) {
  const bad = new Set();
  for (const t of texts) {
    for (const tok of t.split(/[\s()（）、。:：,·・—–\-=?？!]+/)) {
      if (/[0-9/]/.test(tok)) continue;
      for (const w of tok.match(/[A-Za-z]{2,}/g) || []) if (!allowed.has(w)) bad.add(w);
    }
  }
  return [...bad];
}

// A key shown instead of its text (a missing catalogue entry) looks like "tsume.matein".
const rawKeys = (texts) => texts.flatMap((t) => t.match(/\b[a-z]+\.[a-z][a-zA-Z0-9.]*\b/g) || []).filter((k) => k !== 'e.g' && !/\.(js|yaml|kif|css)$/.test(k));

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

async function exerciseTsume(page) {
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', MATE);
  await page.fill('[data-testid="sfen-input"]', SEED);
  await page.click('[data-testid="load-problem"]');
  await page.click('[data-testid="solve"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
}

for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
  for (const [size, opts] of Object.entries(SIZES)) {
    test(`${lang} browser at ${size} size: every page in ${lang === 'ja' ? 'Japanese' : 'English'}, nothing missing`, { timeout: 120_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const allowed = new Set([...ALLOWED, ...(await engineWords())]);
        const check = async (page, what) => {
          assert.equal(await page.evaluate(() => document.documentElement.lang), lang, `${what}: <html lang>`);
          assert.equal(await page.inputValue('[data-testid="lang-select"]'), lang, `${what}: the chooser shows the language`);
          const texts = await pageWords(page);
          assert.deepEqual(rawKeys(texts), [], `${what}: catalogue keys shown instead of words`);
          if (lang === 'ja') assert.deepEqual(latinWords(texts, allowed), [], `${what}: English left on the Japanese page`);
          else assert.ok(texts.some((t) => /Analy[sz]e|Solve/.test(t)), `${what}: English words shown`);
        };

        const board = await openBoard(browser.context);
        await check(board, 'board, fresh');
        await exerciseBoard(board);
        await check(board, 'board, after an analysis');
        await screenshot(board, `board-${lang}-${size}`);
        await board.close();

        const tsume = await browser.context.newPage();
        await tsume.goto(`${baseURL()}/tsume`);
        await tsume.waitForSelector('[data-testid="board"] .piece');
        await check(tsume, 'tsume, fresh');
        await exerciseTsume(tsume);
        await check(tsume, 'tsume, solved');
        await screenshot(tsume, `tsume-${lang}-${size}`);
        await tsume.click('[data-testid="edit-board"]');
        await tsume.waitForSelector('[data-testid="editor"]:not([hidden])');
        await check(tsume, 'tsume, editor');
        await screenshot(tsume, `editor-${lang}-${size}`);
        await tsume.close();
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
