// Solving a tsume yourself on the tsume page: the board takes the player's
// moves, each checked against the mate search's proof (a check? still
// mate?), the defender's reply played; hint and reveal; the countdown.
// Real chromium, real usid, gpsusi.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

const ENGINE = process.env.USID_MATE_ENGINE || 'gps';
const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';

async function openTry(context, mobile) {
  const page = await context.newPage();
  await page.goto(`${baseURL()}/tsume#sfen=${SEED.replaceAll(' ', '_')}`);
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.waitForSelector('[data-testid="board"] .piece');
  await (mobile ? page.tap('[data-testid="try"]') : page.click('[data-testid="try"]'));
  // The countdown runs while the engine proves the mate.
  await page.waitForSelector('.board-area[data-ready="true"]', { timeout: 30_000 });
  assert.equal(await page.isEnabled('[data-testid="hint"]'), true);
  return page;
}

const feedback = (page, state) => page.waitForSelector(`[data-testid="try-feedback"][data-state="${state}"]`, { timeout: 60_000 });

async function move(page, usi, mobile) {
  const press = (sel) => (mobile ? page.tap(sel) : page.click(sel));
  await page.waitForSelector('.board-area[data-ready="true"]');
  if (usi[1] === '*') await press(`[data-testid="hand-b"] [data-hand-piece="${usi[0]}"]`);
  else await press(`[data-square="${usi.slice(0, 2)}"]`);
  await press(`[data-square="${usi.slice(2, 4)}"]`);
  if (await page.locator('[data-testid="promotion-dialog"]').count()) await press(`[data-testid="promotion-dialog"] [data-move="${usi}"]`);
}

test('solving the seed yourself: a non-check and a non-mating check are refused, the hint, the defender answers, solved', { timeout: 180_000 }, async () => {
  const browser = await launch({ width: 1366, height: 900 });
  try {
    const page = await openTry(browser.context, false);

    await move(page, '5i5h');
    await feedback(page, 'wrong');
    assert.match(await page.textContent('[data-testid="try-feedback"]'), /not a check/);
    await page.waitForSelector('[data-square="5i"] .piece[data-piece="K"]');

    // A check that does not mate: the escape is shown and the move taken back.
    await move(page, '8i9i');
    await page.waitForFunction(() => document.querySelector('[data-testid="try-feedback"]').dataset.state === 'wrong' &&
      /does not mate|could not prove/.test(document.querySelector('[data-testid="try-feedback"]').textContent), null, { timeout: 120_000 });
    await page.waitForSelector('[data-square="8i"] .piece[data-piece="R"]');

    // The hint names the piece first; asked again, it shows the move.
    await page.click('[data-testid="hint"]');
    await page.waitForSelector('[data-testid="try-feedback"][data-state="hint"]');
    assert.match(await page.textContent('[data-testid="try-feedback"]'), /gold/);
    await page.click('[data-testid="hint"]');
    await page.waitForSelector('[data-testid="arrows"] [data-move="G*8f"]');

    await move(page, 'G*8f');
    await feedback(page, 'good');
    await page.waitForSelector('[data-square="9g"] .piece[data-piece="K"][data-color="w"]');
    await move(page, '8f8g');
    await feedback(page, 'good');
    await page.waitForSelector('[data-square="9h"] .piece[data-piece="K"][data-color="w"]');
    await move(page, '8g8h');
    await feedback(page, 'solved');
    assert.match(await page.textContent('[data-testid="try-feedback"]'), /5/);
    await screenshot(page, 'tsume-try-desktop');
    await page.close();
    assert.deepEqual(takeProblems(browser.context).filter((p) => !/status of 4\d\d/.test(p)), []);
  } finally {
    await browser.close();
  }
});

test('solving yourself at phone size (touch), then revealing the answer', { timeout: 120_000 }, async () => {
  const browser = await launch({ width: 390, height: 844, mobile: true });
  try {
    const page = await openTry(browser.context, true);
    await move(page, 'G*8f', true);
    await feedback(page, 'good');
    await screenshot(page, 'tsume-try-phone');
    await page.tap('[data-testid="reveal"]');
    await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]');
    assert.equal(await page.locator('[data-testid="tsume-move"]').count(), 5);
    await page.close();
  } finally {
    await browser.close();
  }
});

for (const [size, opts] of Object.entries(SIZES)) {
  test(`${size}: the status is current during a second solve, with a countdown, and while a new problem is built`, { timeout: 120_000 }, async () => {
    const browser = await launch(opts);
    const press = (page, sel) => (opts.mobile ? page.tap(sel) : page.click(sel));
    try {
      const page = await browser.context.newPage();
      await page.goto(`${baseURL()}/tsume`);
      await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
      await page.selectOption('[data-testid="engine-select"]', ENGINE);
      for (let i = 0; i < 2; i++) {
        await press(page, '[data-testid="solve"]');
        await page.waitForFunction(() => {
          const p = document.querySelector('[data-testid="tsume-progress"]');
          return p.dataset.state === 'done' || (p.dataset.state === 'searching' && /left/.test(p.textContent));
        });
        await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 60_000 });
        assert.notEqual(await page.getAttribute('[data-testid="tsume-progress"]', 'data-state'), 'starting');
      }
      // Editing a new problem: the solved one's status, time and result go.
      await page.waitForSelector('[data-testid="tsume-progress"][data-state="done"]');
      await press(page, '[data-testid="edit-board"]');
      await page.locator('[data-testid="editor"]').waitFor({ state: 'visible' });
      assert.equal(await page.getAttribute('[data-testid="tsume-progress"]', 'data-state'), 'editing');
      assert.match(await page.textContent('#progress-text'), /Editing the position/);
      assert.equal(await page.textContent('[data-testid="tsume-stats"]'), '', 'the last solve\'s time and nodes are gone');
      assert.ok(await page.locator('[data-testid="tsume-result"]').isHidden(), 'the last result is gone');
      // Cancelled: the problem is back, ready to solve.
      await press(page, '[data-testid="editor-cancel"]');
      await page.waitForSelector('[data-testid="tsume-progress"][data-state="idle"]');
      assert.match(await page.textContent('#progress-text'), /Press Solve/);
      // "Solve it yourself" from the editor takes the position being built
      // (the gold moved from the hand to the board's corner).
      await press(page, '[data-testid="edit-board"]');
      await page.locator('[data-testid="editor"]').waitFor({ state: 'visible' });
      await press(page, '[data-brush="erase"]');
      await press(page, '[data-testid="hand-b"] [data-hand-piece="G"]');
      await press(page, '[data-brush="b:G"]');
      await press(page, '[data-square="1a"]');
      await page.waitForFunction(() => document.querySelector('[data-testid="editor-check"]').dataset.state === 'valid');
      await press(page, '[data-testid="try"]');
      await page.waitForFunction(() => document.querySelector('[data-testid="sfen-input"]').value.startsWith('8G/9/9/9/9/k8/'));
      await page.locator('[data-testid="editor"]').waitFor({ state: 'hidden' });
      await page.close();
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}
