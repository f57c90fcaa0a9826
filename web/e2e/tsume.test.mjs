// The tsume page (/tsume) against a real usid and a real mate engine.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

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

// Only engines that can answer the page (issue 44: stockfish was offered):
// shogi engines (USI), of which those without a mate search cannot be
// chosen; no chess or othello engine, though usid has both configured.
test('the engines offered are shogi engines with a mate search', async () => {
  const { engines } = await (await fetch(`${baseURL()}/v1/engines`)).json();
  const game = Object.fromEntries(engines.map((e) => [e.name, e.profile?.protocol]));
  const others = engines.filter((e) => ['uci', 'usix', 'uoi'].includes(e.profile?.protocol)).map((e) => e.name);
  assert.ok(others.includes('stockfish') && others.includes('othello'), `run.sh configures a chess and an othello engine: ${others}`);
  const page = await openTsume();
  const offered = await page.locator('[data-testid="engine-select"] option').evaluateAll((os) => os.map((o) => ({ name: o.value, disabled: o.disabled })));
  assert.ok(offered.some((o) => o.name === ENGINE && !o.disabled), `${ENGINE} is offered: ${JSON.stringify(offered)}`);
  for (const o of offered) {
    assert.equal(game[o.name], 'usi', `${o.name} is a shogi engine`);
    const caps = engines.find((e) => e.name === o.name).capabilities;
    assert.equal(o.disabled, !caps.checkmate, `${o.name}: chosen only with a mate search`);
  }
  await page.close();
  assert.deepEqual(takeProblems(browser.context), []);
});

// The example problems show their whole titles, at a phone's width too
// (issue 44: "Mate in 5: rook and gold against a king on the edg…").
test('the example problems are listed whole, and set up when chosen', async () => {
  for (const opts of [SIZES.desktop, SIZES.phone]) {
    const b = await launch({ ...opts, locale: 'en-US' });
    try {
      const page = await b.context.newPage();
      await page.goto(`${baseURL()}/tsume`);
      await page.waitForSelector('[data-testid="board"] .piece');
      const cut = await page.locator('[data-testid="samples"] button').evaluateAll((bs) => bs
        .filter((x) => x.scrollWidth > x.clientWidth + 1 || x.getBoundingClientRect().right > innerWidth)
        .map((x) => x.textContent));
      assert.deepEqual(cut, [], `${opts.width} px: titles cut`);
      const titles = await page.locator('[data-testid="samples"] button').allTextContents();
      assert.ok(titles.includes('Mate in 5: rook and gold against a king on the edge'), titles.join(' | '));
      await screenshot(page, `tsume-examples-${opts.mobile ? 'phone' : 'desktop'}`);
      await page.click('[data-testid="samples"] button[data-i18n="tsume.sample4"]');
      assert.equal(await page.inputValue('[data-testid="sfen-input"]'), '4k4/9/9/9/9/9/9/9/4K4 b - 1');
      assert.equal(await page.getAttribute('[data-testid="samples"] button[data-i18n="tsume.sample4"]', 'aria-pressed'), 'true');
      assert.deepEqual(takeProblems(b.context), []);
    } finally {
      await b.close();
    }
  }
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

// The time limits the page offers are exactly its own choices within the
// server's caps.max_mate_time_ms (GET /v1/limits). run.sh runs usid with
// max_mate_time 60s (testdata/usid.yaml), so "2 min" must be gone; if
// /v1/limits cannot be had, the page keeps its own choices.
test('the time limits offered are those within GET /v1/limits', async () => {
  const builtin = [3000, 10000, 30000, 60000, 120000];
  const limits = await (await fetch(`${baseURL()}/v1/limits`)).json();
  const cap = limits.caps.max_mate_time_ms;
  if (process.env.USID_E2E_LOWER_CAPS) assert.equal(cap, 60000, 'run.sh lowers max_mate_time to 60s');
  const page = await openTsume();
  await page.waitForSelector('[data-testid="time-limit"][data-limits="server"]');
  const offered = () => page.locator('[data-testid="time-limit"] option').evaluateAll((os) => os.map((o) => Number(o.value)));
  assert.deepEqual(await offered(), builtin.filter((v) => v <= cap));
  if (cap < 120000) assert.ok(!(await offered()).includes(120000), '2 min is beyond the cap');
  assert.equal(await page.locator('[data-testid="time-limit"]').inputValue(), '10000', 'the default choice stays');
  await page.close();

  // A cap below every choice: the cap itself is offered.
  const low = await browser.context.newPage();
  await low.route('**/v1/limits', (r) => r.fulfill({ json: { ...limits, caps: { ...limits.caps, max_mate_time_ms: 2000 } } }));
  await low.goto(`${baseURL()}/tsume`);
  await low.waitForSelector('[data-testid="time-limit"][data-limits="server"]');
  assert.deepEqual(await low.locator('[data-testid="time-limit"] option').evaluateAll((os) => os.map((o) => [o.value, o.textContent])), [['2000', '2.0 s']]);
  await low.close();

  // usid cannot say: the page's own choices.
  const down = await browser.context.newPage();
  await down.route('**/v1/limits', (r) => r.fulfill({ status: 404, contentType: 'application/problem+json', body: '{"code":"not_found"}' }));
  await down.goto(`${baseURL()}/tsume`);
  await down.waitForSelector('[data-testid="time-limit"][data-limits="builtin"]');
  assert.deepEqual(await down.locator('[data-testid="time-limit"] option').evaluateAll((os) => os.map((o) => Number(o.value))), builtin);
  await down.close();
  const problems = takeProblems(browser.context);
  assert.deepEqual(problems.filter((p) => !/status of 404/.test(p)), []);
});
