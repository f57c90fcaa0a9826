// The chess board (/chess) against a real usid and Debian's stockfish:
// paste a PGN, analyse, play a move, see lines and arrows; screenshots at
// desktop and phone size.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL } from './lib.mjs';

const PGN = `[Event "Casual"]
[White "Anderssen"]
[Black "Kieseritzky"]
[Result "*"]

1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 *
`;

let browsers = [];
after(async () => { for (const b of browsers) await b.close(); });

async function openChess(opts) {
  const b = await launch(opts);
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/chess`);
  await page.waitForSelector('[data-testid="sq-e1"] [data-piece="K"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="engine-select"]').value === 'stockfish');
  return { b, page };
}

for (const [size, opts] of [['desktop', { width: 1280, height: 860 }], ['phone', { width: 390, height: 844, mobile: true }]]) {
  test(`${size}: paste a PGN, analyse, play a move, see lines and arrows`, async () => {
    const { b, page } = await openChess(opts);
    assert.equal(await page.locator('.chess-piece').count(), 32, 'the start position');
    await page.fill('[data-testid="position-input"]', PGN);
    await page.click('[data-testid="load-position"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] .move').length === 8);
    assert.match(await page.locator('[data-testid="move-list"]').innerText(), /Qh4\+/);
    assert.match(await page.locator('[data-testid="record-info"]').innerText(), /Anderssen/);
    assert.equal(await page.locator('[data-testid="sq-f1"] .chess-piece').getAttribute('data-piece'), 'K');

    await page.click('[data-testid="analyze-toggle"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 2, null, { timeout: 60000 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="arrows"] .arrow').length === 2);
    const best = await page.locator('[data-testid="arrows"] .arrow.best').getAttribute('data-move');
    assert.match(best, /^[a-h][1-8][a-h][1-8]/);
    assert.notEqual(await page.locator('[data-testid="eval-bar"]').getAttribute('data-value'), '');

    // Play White's bishop takes b5 by clicks: the lines follow the new position.
    await page.click('[data-testid="sq-c4"]');
    await page.waitForSelector('[data-testid="sq-b5"].target');
    await page.click('[data-testid="sq-b5"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] .move').length === 9);
    assert.match(await page.locator('[data-testid="move-list"] .move.current').innerText(), /Bxb5/);
    assert.equal(await page.locator('[data-testid="sq-b5"] .chess-piece').getAttribute('data-piece'), 'B');
    await page.waitForFunction(() => {
      const a = document.querySelector('[data-testid="arrows"] .arrow.best');
      const lines = document.querySelectorAll('[data-testid="pv-line"]');
      // Black to move now: the best arrow starts on one of Black's pieces.
      if (!a || lines.length !== 2) return false;
      const from = a.dataset.move.slice(0, 2);
      const p = document.querySelector(`[data-testid="sq-${from}"] .chess-piece`);
      return p && p.classList.contains('black');
    }, null, { timeout: 60000 });
    await screenshot(page, `chess-${size}`);
    await page.click('[data-testid="analyze-toggle"]');
    await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  });
}

test('an illegal FEN is refused with its code and no engine is asked', async () => {
  const { b, page } = await openChess({ width: 1280, height: 860 });
  await page.fill('[data-testid="position-input"]', '4k3/8/8/8/8/8/8/4K2R w KQ - 0 1');
  await page.click('[data-testid="load-position"]');
  await page.waitForSelector('[data-testid="error"][data-code="castling_rights"]');
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
});
