// The tsume page (/tsume) against a real usid and a real mate engine.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL } from './lib.mjs';

const ENGINE = process.env.USID_MATE_ENGINE || 'gps';
const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';
let browser;

before(async () => { browser = await launch({ width: 1280, height: 860 }); });
after(async () => { await browser?.close(); });

async function openTsume(sfen) {
  const page = await browser.context.newPage();
  await page.goto(`${baseURL()}/tsume`);
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  if (sfen) {
    await page.fill('[data-testid="sfen-input"]', sfen);
    await page.click('[data-testid="load-problem"]');
  }
  await page.waitForSelector('[data-testid="board"] .piece');
  return page;
}

test('the seed mate in 5 is solved and can be stepped through', { timeout: 60_000 }, async () => {
  const page = await openTsume(SEED);
  assert.equal(await page.locator('[data-testid="board"] .piece').count(), 3);
  assert.equal(await page.locator('[data-testid="hand-b"] [data-hand-piece="G"]').count(), 1);
  await page.selectOption('[data-testid="time-limit"]', '10000');
  await page.click('[data-testid="solve"]');
  // Progress shows while the engine works (the seed is quick, so either is fine).
  await page.waitForFunction(() => {
    const s = document.querySelector('[data-testid="tsume-progress"]').dataset.state;
    return s !== 'idle';
  });
  const result = page.locator('[data-testid="tsume-result"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
  const moves = await page.locator('[data-testid="tsume-move"]').allTextContents();
  assert.equal(moves.length, 5, `five moves: ${moves.join(' ')}`);
  assert.match(moves[0], /打/, 'the mate starts with the gold drop');
  assert.match(await result.textContent(), /Mate in 5/);

  // Step to the end: the last position is on the board.
  for (let i = 1; i <= 5; i++) {
    await page.click('[data-testid="step-next"]');
    await page.waitForFunction((n) => document.querySelector('[data-testid="step-count"]').textContent.startsWith(`${n} /`), i);
  }
  assert.equal(await page.locator('[data-testid="tsume-move"][data-ply="5"].current').count(), 1);
  const last = await page.locator('[data-testid="tsume-move"][data-ply="5"]').getAttribute('data-usi');
  assert.equal(await page.locator(`[data-square="${last.slice(2, 4)}"] .piece`).getAttribute('data-color'), 'b');
  assert.ok(await page.locator('[data-testid="step-next"]').isDisabled());
  await screenshot(page, 'tsume-solved');
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.querySelector('[data-testid="step-count"]').textContent.startsWith('0 /'));
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});

test('without a WebSocket the page solves over POST /v1/mate', { timeout: 60_000 }, async () => {
  const page = await browser.context.newPage();
  await page.routeWebSocket(/\/v1\/ws$/, (ws) => ws.close({ code: 1013, reason: 'test: no WebSocket' }));
  await page.goto(`${baseURL()}/tsume`);
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.waitForSelector('[data-testid="connection"][data-state="waiting"]');
  await page.click('[data-testid="solve"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
  assert.equal(await page.locator('[data-testid="tsume-move"]').count(), 5);
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});

test('bare kings have no mate', { timeout: 60_000 }, async () => {
  const page = await openTsume('4k4/9/9/9/9/9/9/9/4K4 b - 1');
  await page.click('[data-testid="solve"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="nomate"]', { timeout: 30_000 });
  assert.equal(await page.locator('[data-testid="tsume-move"]').count(), 0);
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});

test('a problem set up with the board editor is solved', { timeout: 60_000 }, async () => {
  const page = await openTsume();
  await page.click('[data-testid="edit-board"]');
  await page.locator('[data-testid="editor"]').waitFor({ state: 'visible' });
  await page.click('[data-act="clear"]');
  assert.equal(await page.locator('[data-testid="board"] .piece').count(), 0);
  for (const [brush, sq] of [['w:K', '5a'], ['b:P', '5c'], ['b:K', '5i']]) {
    await page.click(`[data-brush="${brush}"]`);
    await page.click(`[data-square="${sq}"]`);
  }
  await page.click('[data-brush="b:G"]');
  await page.click('[data-testid="hand-b"]');
  await page.click('[data-act="rest"]');
  await page.click('[data-testid="editor-done"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="sfen-input"]').value.startsWith('4k4/9/4P4/'));
  assert.equal(await page.inputValue('[data-testid="sfen-input"]'), '4k4/9/4P4/9/9/9/9/9/4K4 b G2r2b3g4s4n4l17p 1');
  assert.ok(await page.locator('[data-testid="error"]').isHidden());
  await page.click('[data-testid="solve"]');
  await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 30_000 });
  assert.deepEqual(await page.locator('[data-testid="tsume-move"]').evaluateAll((ls) => ls.map((l) => l.dataset.usi)), ['G*5b']);
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});

test('an illegal problem shows its error', async () => {
  const page = await openTsume();
  await page.fill('[data-testid="sfen-input"]', '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l19p 1');
  await page.click('[data-testid="load-problem"]');
  await page.waitForSelector('[data-testid="error"]:not([hidden])');
  assert.equal(await page.locator('[data-testid="error"]').getAttribute('data-code'), 'too_many_pieces');
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});
