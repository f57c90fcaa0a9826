// Issue 37 item 2: the analysis lines are never much staler than the status
// beside them. A mouse resting over the lines after clicking a move of one
// used to hold the new position's lines at their first depths (2-6) while the
// status went on to depth 17. Real chromium, real usid, real engine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, SIZES } from './lib.mjs';

const statusDepth = (page) => page.evaluate(() => Number((/(\d+)/.exec(document.querySelector('#analysis-stats').textContent) || [])[1] || 0));
const lineDepth = (page) => page.evaluate(() => Number(document.querySelector('[data-testid="pv-line"][data-multipv="1"]')?.dataset.depth || 0));

for (const [size, opts] of Object.entries(SIZES)) {
  for (const locale of ['ja-JP', 'en-US']) {
    test(`lines follow the search under a resting pointer after a line's move is played (${size}, ${locale})`, { timeout: 90_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      try {
        const page = await openBoard(browser.context);
        await (opts.mobile ? page.tap('#analyze') : page.click('#analyze'));
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"] [data-testid="pv-move"]').length > 1);
        // Play the line's first move and leave the pointer where it was.
        const first = page.locator('[data-testid="pv-line"][data-multipv="1"] [data-testid="pv-move"][data-index="0"]');
        await (opts.mobile ? first.tap() : first.click());
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 1);
        // The search of the new position goes deep...
        await page.waitForFunction(() => Number((/(\d+)/.exec(document.querySelector('#analysis-stats').textContent) || [])[1] || 0) >= 10, null, { timeout: 30_000 });
        const status = await statusDepth(page);
        // ...and the lines shown follow within a second or so.
        try {
          await page.waitForFunction((d) => Number(document.querySelector('[data-testid="pv-line"][data-multipv="1"]')?.dataset.depth || 0) >= d, status - 2, { timeout: 2500 });
        } catch {
          assert.fail(`the lines stayed at depth ${await lineDepth(page)} while the status said depth ${await statusDepth(page)} (it was ${status})`);
        }
        await screenshot(page, `lines-follow-${size}-${locale}`);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
