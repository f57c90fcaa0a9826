// Issue 37 item 10: the evaluation bar on a mated position says so in words
// (詰み, Mate), not "#0". A game ending in mate, analysed: its last position
// is mated. Real chromium, real usid, real engine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, SIZES } from './lib.mjs';

const MATED = '#pos=sfen_4k4/9/4P4/9/9/9/9/9/4K4_b_G2r2b3g4s4n4l17p_1_moves_G*5b&ply=1';

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
    test(`the eval bar on a mated position says mate in words (${size}, ${lang})`, { timeout: 120_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const page = await openBoard(browser.context, MATED);
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 1);
        await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
        await page.selectOption('[data-testid="game-limit"]', 'd8');
        await (opts.mobile ? page.tap('[data-testid="analyse-game"]') : page.click('[data-testid="analyse-game"]'));
        await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done', null, { timeout: 100_000 });
        await page.waitForFunction(() => document.querySelector('#eval-bar .eval-label').textContent !== '');
        const label = await page.textContent('#eval-bar .eval-label');
        assert.doesNotMatch(label, /#-?0\b/, `the bar reads ${label}`);
        assert.equal(label, lang === 'ja' ? '詰み' : 'Mate');
        await screenshot(page, `mated-bar-${size}-${lang}`);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
