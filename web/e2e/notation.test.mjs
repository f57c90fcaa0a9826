// Issue 37 item 9: the defaults follow the page's language. A fresh en-US
// browser writes Western shogi moves (P-7f) and ranks a-i, a fresh ja-JP one
// ７六歩 and 一…九; language and notation stay separate choices, each kept once
// chosen. Real chromium, real usid.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, moveTexts, baseURL, SIZES } from './lib.mjs';

const WANT = {
  'en-US': { move: 'P-7f', ranks: 'abcdefghi', files: '987654321', notation: 'western' },
  'ja-JP': { move: '７六歩', ranks: '一二三四五六七八九', files: '９８７６５４３２１', notation: 'kif' },
};

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [locale, want] of Object.entries(WANT)) {
    test(`a fresh ${locale} browser's notation follows its language (${size})`, { timeout: 60_000 }, async () => {
      const browser = await launch({ ...opts, locale, notation: null });
      const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
      try {
        const page = await openBoard(browser.context);
        assert.equal(await page.inputValue('[data-testid="notation-select"]'), want.notation);
        assert.equal((await page.locator('.board-area .coords-ranks').first().textContent()).trim(), want.ranks);
        assert.equal((await page.locator('.board-area .coords-files').first().textContent()).trim(), want.files);
        await press(page, '[data-square="7g"]');
        await press(page, '[data-square="7f"]');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 1);
        // Shown at once as the move, in the notation once usid has named it.
        await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('[data-testid="move"]').textContent), want.move)
          .catch(async () => assert.match((await moveTexts(page))[0], new RegExp(want.move)));
        await screenshot(page, `notation-default-${size}-${locale}`);

        // The tsume page draws its board the same way.
        const tsume = await browser.context.newPage();
        await tsume.goto(`${baseURL()}/tsume`);
        await tsume.waitForSelector('.coords-ranks span');
        assert.equal((await tsume.locator('.coords-ranks').first().textContent()).trim(), want.ranks);
        await tsume.close();

        // The other notation, chosen, stays chosen whatever the language.
        const other = want.notation === 'kif' ? 'western' : 'kif';
        await Promise.all([page.waitForEvent('load'), page.selectOption('[data-testid="notation-select"]', other)]);
        await page.waitForSelector('.board-area[data-ready="true"]');
        const lang = locale.startsWith('ja') ? 'en' : 'ja';
        await Promise.all([page.waitForEvent('load'), page.selectOption('[data-testid="lang-select"]', lang)]);
        await page.waitForSelector('.board-area[data-ready="true"]');
        assert.equal(await page.inputValue('[data-testid="notation-select"]'), other, 'the chosen notation outlives a language change');
        assert.equal(await page.evaluate(() => document.documentElement.lang), lang);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
