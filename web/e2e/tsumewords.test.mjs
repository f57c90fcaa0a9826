// Issue 37 item 10, the tsume page: its words are the page's language (no
// "不詰 不詰", no "0.1 s" on the Japanese page), a problem solved by hand can
// be stepped through like the engine's answer, and the hint gives away the
// first move a part at a time (the piece first, then the move). Real
// chromium, real usid, gpsusi.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

const ENGINE = process.env.USID_MATE_ENGINE || 'gps';
const BARE = '4k4/9/9/9/9/9/9/9/4K4 b - 1'; // no mate
const HEAD_GOLD = '4k4/9/4P4/9/9/9/9/9/4K4 b G2r2b3g4s4n4l17p 1'; // G*5b mates

async function openTsume(context, sfen) {
  const page = await context.newPage();
  await page.goto(`${baseURL()}/tsume#sfen=${sfen.replaceAll(' ', '_')}`);
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.waitForSelector('[data-testid="board"] .piece');
  return page;
}

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
    test(`the tsume page's words, its own solution stepped through, the hint in parts (${size}, ${lang})`, { timeout: 120_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
      try {
        // No mate: said once, with the time in the page's units.
        let page = await openTsume(browser.context, BARE);
        await press(page, '[data-testid="solve"]');
        await page.waitForSelector('[data-testid="tsume-result"][data-result="nomate"]', { timeout: 60_000 });
        const title = await page.textContent('#result-title');
        assert.ok((title.match(/不詰/g) || []).length <= 1, `the title says 不詰 more than once: ${title}`);
        const stats = await page.textContent('[data-testid="tsume-stats"]');
        const detail = await page.textContent('#result-detail');
        if (lang === 'ja') {
          for (const s of [stats, detail]) {
            assert.doesNotMatch(s, /\d s\b/, `English units on the Japanese page: ${s}`);
            assert.match(s, /秒/, `seconds in Japanese: ${s}`);
          }
        } else {
          assert.match(stats, /\d s\b/);
        }
        await screenshot(page, `tsumewords-nomate-${size}-${lang}`);
        await page.close();

        // Solving it yourself: the hint names the piece first, then shows the move.
        page = await openTsume(browser.context, HEAD_GOLD);
        await press(page, '[data-testid="try"]');
        await page.waitForSelector('.board-area[data-ready="true"]', { timeout: 30_000 });
        await page.waitForFunction(() => !document.querySelector('[data-testid="hint"]').disabled);
        await press(page, '[data-testid="hint"]');
        await page.waitForSelector('[data-testid="try-feedback"][data-state="hint"]');
        const hint = await page.textContent('[data-testid="try-feedback"]');
        assert.match(hint, lang === 'ja' ? /金/ : /gold/, `the hint names the piece: ${hint}`);
        assert.doesNotMatch(hint, /5b|５二|G\*5b/, `the first hint gives the square away: ${hint}`);
        assert.equal(await page.locator('[data-testid="arrows"] [data-move]').count(), 0, 'the first hint draws no arrow');
        await press(page, '[data-testid="hint"]');
        await page.waitForSelector('[data-testid="arrows"] [data-move="G*5b"]');

        await press(page, '[data-testid="hand-b"] [data-hand-piece="G"]');
        await press(page, '[data-square="5b"]');
        await page.waitForSelector('[data-testid="try-feedback"][data-state="solved"]', { timeout: 60_000 });
        // The solution can be stepped through, as the engine's is.
        await page.waitForSelector('[data-testid="mate-line"] [data-testid="tsume-move"]');
        assert.equal(await page.locator('[data-testid="mate-line"] [data-testid="tsume-move"]').count(), 1);
        assert.equal((await page.textContent('[data-testid="step-count"]')).trim(), '1 / 1');
        await press(page, '[data-testid="step-first"]');
        assert.equal((await page.textContent('[data-testid="step-count"]')).trim(), '0 / 1');
        assert.equal(await page.locator('[data-square="5b"] .piece').count(), 0, 'the problem is shown');
        await press(page, '[data-testid="step-next"]');
        await page.waitForSelector('[data-square="5b"] .piece[data-piece="G"]');
        await screenshot(page, `tsumewords-own-${size}-${lang}`);
        await page.close();
        assert.deepEqual(takeProblems(browser.context).filter((p) => !/status of 4\d\d/.test(p)), []);
      } finally {
        await browser.close();
      }
    });
  }
}
