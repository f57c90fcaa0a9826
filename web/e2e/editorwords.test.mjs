// Issue 37 item 5: the position editor speaks the page's language, in words:
// usid's reason for refusing a position is told as a sentence with its
// details ("5 golds ...": 金が盤上と持ち駒に5枚...), never as its code
// (too_many_pieces); the 不正な局面 badge leaves the board's squares visible;
// the stopped analysis' arrows leave the board while editing; on a desktop
// the editor's buttons are on the screen. On every game's page (shogi,
// chess, othello). Real chromium, real usid, real engine.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

const CODES = /\b[a-z]+(_[a-z]+)+\b/; // a code such as too_many_pieces

// badgeRect is where the 不正な局面 badge (.board-area.illegal::before) is drawn.
function badgeRect(page) {
  return page.evaluate(() => {
    const root = document.querySelector('.board-area.illegal');
    if (!root) return null;
    const cs = getComputedStyle(root, '::before');
    if (cs.content === 'none' || cs.display === 'none') return null;
    const r = root.getBoundingClientRect();
    const m = new DOMMatrix(cs.transform === 'none' ? undefined : cs.transform);
    const w = parseFloat(cs.width) + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
    const h = parseFloat(cs.height) + parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
    const left = r.left + parseFloat(cs.left) + m.e;
    const top = r.top + parseFloat(cs.top) + m.f;
    return { left, top, right: left + w, bottom: top + h };
  });
}

const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

// The words of the editor's errors, and whether they name a code.
async function editorWords(page) {
  await page.waitForSelector('[data-testid="editor-check"][data-state="invalid"]');
  return (await page.locator('[data-testid="editor-errors"]').innerText()).trim();
}

for (const [size, opts] of Object.entries(SIZES)) {
  for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
    test(`the shogi editor tells why in ${lang}, shows the board, drops the arrows (${size})`, { timeout: 90_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
      try {
        const page = await openBoard(browser.context);
        // An analysis draws its arrows; stopped, they stay for its position.
        await press(page, '#analyze');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="arrows"] > *').length > 0);
        await press(page, '#analyze');
        await page.waitForSelector('#analysis-status[data-state="stopped"]');
        await press(page, '[data-testid="edit-position"]');
        await page.waitForSelector('[data-testid="editor"]:not([hidden])');
        await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
        assert.equal(await page.locator('[data-testid="arrows"] > *').count(), 0, 'the stopped analysis\' arrows are gone while editing');
        if (size === 'desktop') {
          // The editor's buttons are on the screen, without a scroll.
          const done = await page.locator('[data-testid="editor-done"]').boundingBox();
          const vh = await page.evaluate(() => innerHeight);
          assert.ok(done && done.y + done.height <= vh, `the Done button ends at ${done && Math.round(done.y + done.height)} px, below the fold at ${vh} px`);
        }

        // A fifth gold, in sente's hand: refused, said in words.
        await press(page, '[data-brush="b:G"]');
        await press(page, '[data-testid="hand-b"]');
        const text = await editorWords(page);
        assert.equal(await page.getAttribute('[data-testid="editor-errors"]', 'data-code'), 'too_many_pieces');
        assert.doesNotMatch(text, CODES, `a code shown: ${text}`);
        if (lang === 'ja') {
          assert.match(text, /金/);
          assert.match(text, /5/);
          assert.doesNotMatch(text, /[A-Za-z]{2,}/, `English on the Japanese page: ${text}`);
        } else {
          assert.match(text, /5 golds/);
        }
        // The badge leaves the squares' pieces in sight (5e, the centre, too).
        const badge = await badgeRect(page);
        assert.ok(badge, 'the board says the position is illegal');
        for (const sq of ['5e', '5a', '5i', '1e', '9e']) {
          const box = await page.locator(`[data-square="${sq}"]`).boundingBox();
          const r = { left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height };
          assert.ok(!overlaps(badge, r), `the badge ${JSON.stringify(badge)} covers ${sq}`);
        }
        await screenshot(page, `editorwords-shogi-${size}-${lang}`);
        await page.close();
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });

    test(`the chess and othello editors tell why in ${lang} (${size})`, { timeout: 90_000 }, async () => {
      const browser = await launch({ ...opts, locale });
      const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
      try {
        for (const g of ['chess', 'othello']) {
          const page = await browser.context.newPage();
          await page.goto(`${baseURL()}/${g}`);
          await page.waitForSelector('.board-area[data-ready="true"]');
          await press(page, '[data-testid="edit-position"]');
          await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
          await page.selectOption('[data-testid="editor-start"]', 'empty');
          if (g === 'chess') {
            // The empty start has its two kings: a pawn on the first rank is refused.
            await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
            await press(page, '[data-brush="w:P"]');
            await press(page, '[data-square="a1"]');
          }
          const text = await editorWords(page);
          const code = await page.getAttribute('[data-testid="editor-errors"]', 'data-code');
          assert.ok(code, `${g}: usid says why`);
          assert.doesNotMatch(text, CODES, `${g}: a code shown: ${text}`);
          if (lang === 'ja') assert.doesNotMatch(text, /[A-Za-z]{2,}/, `${g}: English on the Japanese page: ${text}`);
          // No badge over the squares: the verdict is beside Done.
          const badge = await badgeRect(page);
          if (badge) {
            for (const cell of await page.locator('.board-area [data-square]').all()) {
              const box = await cell.boundingBox();
              if (box && overlaps(badge, { left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height })) assert.fail(`${g}: the badge covers ${await cell.getAttribute('data-square')}`);
            }
          }
          await screenshot(page, `editorwords-${g}-${size}-${lang}`);
          await page.close();
        }
        assert.deepEqual(takeProblems(browser.context), []);
      } finally {
        await browser.close();
      }
    });
  }
}
