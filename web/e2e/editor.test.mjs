// The position editor on the analysis board: pieces, hands, side to move,
// standard starts, clear; usid's verdict on the position as it is built.
// Real chromium, real usid.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, SIZES } from './lib.mjs';


async function checked(page, state) {
  await page.waitForSelector(`[data-testid="editor-check"][data-state="${state}"]`);
}

for (const [size, opts] of Object.entries(SIZES)) {
  test(`the analysis board's position editor at ${size} size: starts, pieces, hands, side to move, checked by usid`, { timeout: 60_000 }, async () => {
    const browser = await launch(opts);
    const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
    try {
      const page = await openBoard(browser.context);
      await press(page, '[data-testid="edit-position"]');
      await page.waitForSelector('[data-testid="editor"]:not([hidden])');
      await checked(page, 'valid');

      // A handicap start: gote (the giver) moves first, its lance is gone.
      await page.selectOption('[data-testid="editor-start"]', 'lance');
      await checked(page, 'valid');
      assert.equal(await page.getAttribute('[data-testid="editor-turn-w"]', 'aria-pressed'), 'true');
      assert.equal(await page.locator('[data-square="1a"] .piece').count(), 0);
      assert.equal(await page.locator('[data-testid="board"] .piece').count(), 39);

      // An empty board is refused with usid's reason, and cannot be used.
      await press(page, '[data-testid="editor"] [data-act="clear"]');
      await checked(page, 'invalid');
      assert.ok(await page.getAttribute('[data-testid="editor-errors"]', 'data-code'), 'usid says why');
      assert.ok(await page.isDisabled('[data-testid="editor-done"]'));
      assert.equal(await page.locator('.board-area.illegal').count(), 1);

      // Two kings, a gold in sente's hand: legal.
      await press(page, '[data-brush="b:K"]');
      await press(page, '[data-square="5i"]');
      await press(page, '[data-brush="w:K"]');
      await press(page, '[data-square="5a"]');
      await press(page, '[data-brush="b:G"]');
      await press(page, '[data-testid="hand-b"]');
      await checked(page, 'valid');
      assert.equal(await page.locator('.board-area.illegal').count(), 0, 'no stale badge');
      assert.equal(await page.getAttribute('[data-testid="hand-b"] [data-hand-piece="G"]', 'data-count'), '1');

      // A pawn on the last rank has no move: refused; taken off again: fine.
      await press(page, '[data-brush="b:P"]');
      await press(page, '[data-square="3a"]');
      await checked(page, 'invalid');
      const code = await page.getAttribute('[data-testid="editor-errors"]', 'data-code');
      assert.ok(code, 'a reason for the dead pawn');
      await screenshot(page, `editor-board-${size}`);
      await press(page, '[data-square="3a"]');
      await checked(page, 'valid');

      // Sente to move, and use it: the board shows it as a new game.
      await press(page, '[data-testid="editor-turn-b"]');
      await checked(page, 'valid');
      await press(page, '[data-testid="editor-done"]');
      await page.waitForSelector('[data-testid="editor"][hidden]', { state: 'attached' });
      await page.waitForFunction(() => document.querySelector('[data-testid="current-sfen"]').value.startsWith('4k4/9/9/9/9/9/9/9/4K4 b G'));
      await page.waitForSelector('.board-area[data-ready="true"]');
      assert.match(await page.evaluate(() => location.hash), /pos=sfen_4k4\/9/);
      // The new position is playable: the gold can be dropped.
      await press(page, '[data-testid="hand-b"] [data-hand-piece="G"]');
      await press(page, '[data-square="5b"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 1);
      await page.close();
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}
