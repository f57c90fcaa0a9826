// The analysis board (/) against a real usid and real engines.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  launch, openBoard, clickSquare, drag, moveTexts, screenshot, takeProblems, baseURL,
} from './lib.mjs';

const ENGINE = process.env.USID_ANALYSIS_ENGINE || 'fairy';
let browser;

before(async () => { browser = await launch({ width: 1280, height: 860 }); });
after(async () => { await browser?.close(); });

function assertClean() {
  assert.deepEqual(takeProblems(browser.context), [], 'the page logged errors');
}

test('the board renders the start position with 40 pieces and empty hands', async () => {
  const page = await openBoard(browser.context);
  assert.equal(await page.locator('[data-testid="board"] [data-square]').count(), 81);
  assert.equal(await page.locator('[data-testid="board"] .piece').count(), 40);
  assert.equal(await page.locator('[data-square="5i"] .piece').getAttribute('data-piece'), 'K');
  assert.equal(await page.locator('[data-square="5i"] .piece').getAttribute('data-color'), 'b');
  assert.equal(await page.locator('[data-square="8h"] .piece').getAttribute('data-piece'), 'B');
  assert.equal(await page.locator('[data-square="2b"] .piece').getAttribute('data-color'), 'w');
  assert.equal(await page.locator('[data-testid="hand-b"] [data-hand-piece]').count(), 0);
  assert.equal(await page.locator('[data-testid="hand-w"] [data-hand-piece]').count(), 0);
  // The kanji are drawn with the embedded font, not a system one.
  const fontOK = await page.evaluate(async () => {
    await document.fonts.ready;
    return document.fonts.check('56px UsidPiece', '歩');
  });
  assert.ok(fontOK, 'the piece font is loaded');
  await page.close();
  assertClean();
});

test('7g7f played by clicks shows as ７六歩, and navigation steps through it', async () => {
  const page = await openBoard(browser.context);
  await clickSquare(page, '7g');
  assert.ok(await page.locator('[data-square="7f"].dest').count(), '7f is offered as a target');
  await clickSquare(page, '7f');
  await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('７六歩'));
  const moves = await moveTexts(page);
  assert.equal(moves.length, 1);
  assert.match(moves[0], /^1.*７六歩/);
  await page.waitForSelector('.board-area[data-ready="true"]');
  assert.equal(await page.locator('[data-square="7f"] .piece').getAttribute('data-piece'), 'P');
  assert.equal(await page.locator('[data-square="7g"] .piece').count(), 0);

  await page.click('[data-testid="nav-prev"]');
  await page.waitForSelector('[data-square="7g"] .piece');
  assert.equal(await page.locator('[data-testid="move-start"].current').count(), 1);
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('[data-testid="move"][data-ply="1"].current');
  assert.equal(await page.locator('[data-square="7g"] .piece').count(), 0);
  await page.keyboard.press('ArrowLeft');
  await page.waitForSelector('[data-testid="move-start"].current');
  await page.click('[data-testid="move"][data-ply="1"]');
  await page.waitForSelector('[data-testid="move"][data-ply="1"].current');

  // A move that is not legal is not accepted.
  await page.waitForSelector('.board-area[data-ready="true"]');
  await clickSquare(page, '3c');
  await clickSquare(page, '3e');
  await page.waitForTimeout(300);
  assert.equal((await moveTexts(page)).length, 1, 'an illegal move was accepted');
  await page.close();
  assertClean();
});

test('a move by drag and drop', async () => {
  const page = await openBoard(browser.context);
  await drag(page, '2g', '2f');
  await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('２六歩'));
  await page.waitForSelector('.board-area[data-ready="true"]');
  // Dropping a piece on a square it cannot reach changes nothing.
  await drag(page, '3c', '3f');
  await page.waitForTimeout(300);
  assert.equal((await moveTexts(page)).length, 1);
  assert.equal(await page.locator('.ghost').count(), 0, 'the drag ghost is gone');
  await page.close();
  assertClean();
});

test('an optional promotion asks, and both choices work', async () => {
  const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d&ply=2');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 2);

  await drag(page, '8h', '2b');
  await page.waitForSelector('[data-testid="promotion-dialog"]');
  await page.click('[data-testid="unpromote"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('２二角不成'));
  assert.equal(await page.locator('[data-square="2b"] .piece').getAttribute('data-piece'), 'B');

  await page.click('[data-testid="nav-prev"]');
  await page.waitForSelector('.board-area[data-ready="true"]');
  await clickSquare(page, '8h');
  await clickSquare(page, '2b');
  await page.waitForSelector('[data-testid="promotion-dialog"]');
  await page.click('[data-testid="promote"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('２二角成'));
  assert.equal(await page.locator('[data-square="2b"] .piece').getAttribute('data-piece'), '+B');
  assert.equal(await page.locator('[data-testid="hand-b"] [data-hand-piece="B"]').count(), 1, 'the captured bishop is in hand');
  assert.equal((await moveTexts(page)).length, 3, 'the first choice stays in the line');
  assert.equal(await page.locator('[data-testid="var-move"][data-usi="8h2b+"].current').count(), 1, 'the other choice opened a variation');

  // The URL keeps the line, promotion '+' included: a reload shows it again.
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
  await page.waitForSelector('[data-square="2b"] .piece[data-piece="+B"]');
  await page.close();
  assertClean();
});

test('an illegal SFEN or USI position shows its reason in words, its code in data-code (usid reads pasted text)', async () => {
  const page = await openBoard(browser.context);
  const cases = [
    ['lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNK b - 1', 'two_kings'],
    ['lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1', 'sfen_rank_width'],
    ['startpos moves 7g7f 7g7f', 'empty_source'],
  ];
  for (const [text, code] of cases) {
    await page.fill('[data-testid="position-input"]', text);
    await page.click('[data-testid="load-position"]');
    const box = page.locator('[data-testid="error"]');
    await box.waitFor({ state: 'visible' });
    await page.waitForFunction((c) => document.querySelector('[data-testid="error"]').dataset.code === c, code);
    // The reason in words; the code stays in data-code (issue 37: no codes shown).
    const shown = await box.textContent();
    assert.ok(!shown.includes(code), `error box shows the code ${code}: ${shown}`);
    assert.equal(await box.locator(`li[data-code="${code}"]`).count(), 1);
    assert.ok(await box.locator('.error-message').first().textContent(), 'with a message');
  }
  // A legal position clears the error.
  await page.fill('[data-testid="position-input"]', 'startpos moves 7g7f');
  await page.click('[data-testid="load-position"]');
  await page.locator('[data-testid="error"]').waitFor({ state: 'hidden' });
  await page.close();
  // usid refuses them with 422, which Chromium logs as failed loads.
  const problems = takeProblems(browser.context);
  assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
  assert.equal(problems.length, cases.length);
});

// The line counts and game-analysis limits the board offers are exactly its
// own choices within the server's caps (GET /v1/limits): run.sh runs usid
// with max_multipv 4 and max_depth 12 (testdata/usid.yaml), so 5 lines and
// depth 16 must be gone.
test('the lines and game-analysis limits offered are those within GET /v1/limits', async () => {
  const limits = await (await fetch(`${baseURL()}/v1/limits`)).json();
  const { max_multipv: maxPV, max_depth: maxDepth, max_movetime_ms: maxMS } = limits.caps;
  if (process.env.USID_E2E_LOWER_CAPS) assert.deepEqual([maxPV, maxDepth], [4, 12], 'run.sh lowers max_multipv and max_depth');
  const page = await openBoard(browser.context);
  await page.waitForSelector('[data-testid="multipv-select"][data-limits="server"]');
  await page.waitForSelector('[data-testid="game-limit"][data-limits="server"]');
  const values = (id) => page.locator(`[data-testid="${id}"] option`).evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual(await values('multipv-select'), ['1', '2', '3', '4', '5'].filter((v) => Number(v) <= maxPV));
  const builtin = { t1000: 1000, d8: 8, d12: 12, d16: 16, t500: 500, t2000: 2000 };
  assert.deepEqual(await values('game-limit'),
    Object.keys(builtin).filter((k) => (k[0] === 'd' ? builtin[k] <= maxDepth : builtin[k] <= maxMS)));
  if (maxPV < 5) assert.ok(!(await values('multipv-select')).includes('5'));
  if (maxDepth < 16) assert.ok(!(await values('game-limit')).includes('d16'));
  await page.close();
  assertClean();
});

test('analysis with multipv 2 shows two deepening lines, plays a line, and stops', { timeout: 90_000 }, async () => {
  const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d&ply=2');
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.selectOption('[data-testid="multipv-select"]', '2');
  await page.click('[data-testid="analyze-toggle"]');
  const twoLines = () => page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 2, null, { timeout: 30_000 });

  // Analyse the earlier positions briefly too (a new search per position),
  // so the graph has a curve, then come back.
  await twoLines();
  for (const key of ['ArrowLeft', 'ArrowLeft']) {
    await page.keyboard.press(key);
    await twoLines();
    await page.waitForTimeout(700);
  }
  await page.keyboard.press('End');
  await twoLines();
  const depths = () => page.locator('[data-testid="pv-line"]').evaluateAll((ls) => ls.map((l) => Number(l.dataset.depth)));
  const first = await depths();
  await page.waitForFunction(
    (d0) => {
      const ls = [...document.querySelectorAll('[data-testid="pv-line"]')];
      return ls.length === 2 && ls.every((l, i) => Number(l.dataset.depth) > d0[i]);
    },
    first, { timeout: 30_000 },
  );
  const status = page.locator('[data-testid="analysis-status"]');
  assert.equal(await status.getAttribute('data-state'), 'searching');
  assert.match(await page.locator('[data-testid="analysis-stats"]').textContent(), /depth \d+.*nodes.*nps/);
  assert.match(await page.locator('[data-testid="pv-score"]').first().textContent(), /^[≥≤]?([+−-]?\d+|0|#-?\d+)$/);
  assert.ok(await page.locator('[data-testid="pv-move"]').count() >= 2, 'the lines have moves');
  assert.ok(await page.locator('[data-testid="arrows"] .arrow.best').count() === 1, 'the best move has an arrow');
  assert.notEqual(await page.locator('[data-testid="eval-bar"]').getAttribute('data-value'), '');
  assert.equal(await page.locator('[data-testid="eval-graph"]').getAttribute('data-points'), '3');
  await page.waitForTimeout(1500); // deeper lines for the picture
  await screenshot(page, 'board-analysis');

  await page.click('[data-testid="analyze-toggle"]'); // stop
  await page.waitForFunction(() => document.querySelector('[data-testid="analysis-status"]').dataset.state === 'stopped', null, { timeout: 15_000 });
  await page.locator('[data-testid="bestmove"]').waitFor({ state: 'visible' });
  const stopped = await depths();
  await page.waitForTimeout(1500);
  assert.deepEqual(await depths(), stopped, 'no new depth after stop');

  // Clicking a move of the best line (the third, if the engine's last line
  // is that long) plays the line up to it.
  const before = (await moveTexts(page)).length;
  const pvMoves = page.locator('[data-testid="pv-line"]').first().locator('[data-testid="pv-move"]');
  const pv = await pvMoves.evaluateAll((ms) => ms.map((m) => m.dataset.usi));
  const n = Math.min(3, pv.length);
  await pvMoves.nth(n - 1).click();
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid="move"]').length === k, before + n);
  const played = await page.locator('[data-testid="move"]').evaluateAll((ls) => ls.map((l) => l.dataset.usi));
  assert.deepEqual(played.slice(before), pv.slice(0, n));
  assert.equal(await page.locator(`[data-testid="move"][data-ply="${before + n}"].current`).count(), 1);
  await page.close();
  assertClean();
});

test('analysis resumes by itself after the WebSocket drops', { timeout: 90_000 }, async () => {
  const page = await browser.context.newPage();
  // Pass the page's WebSocket through to usid, so the test can cut it.
  const sockets = [];
  await page.routeWebSocket(/\/v1\/ws$/, (ws) => { ws.connectToServer(); sockets.push(ws); });
  await page.goto(`${baseURL()}/`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.selectOption('[data-testid="multipv-select"]', '1');
  await page.waitForSelector('[data-testid="connection"][data-state="open"]');
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });

  await sockets.at(-1).close({ code: 1012, reason: 'test: drop' });
  await page.waitForSelector('[data-testid="connection"][data-state="waiting"]');
  await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout: 20_000 });
  assert.equal(sockets.length, 2, 'the page opened a new WebSocket');
  // The search is asked for again on the new connection and lines come back.
  await page.waitForFunction(() => document.querySelector('[data-testid="analysis-status"]').dataset.state === 'searching'
    && document.querySelectorAll('[data-testid="pv-line"]').length === 1, null, { timeout: 30_000 });
  await page.click('[data-testid="analyze-toggle"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="analysis-status"]').dataset.state === 'stopped', null, { timeout: 15_000 });
  await page.close();
  assertClean();
});

test('the board is usable at phone width (390×844, touch)', { timeout: 60_000 }, async () => {
  const phone = await launch({ width: 390, height: 844, mobile: true });
  try {
    const page = await openBoard(phone.context);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px too wide)`);
    const box = await page.locator('[data-testid="board"]').boundingBox();
    assert.ok(box.width >= 300 && box.x >= 0 && box.x + box.width <= 390, `board fits: ${JSON.stringify(box)}`);
    await page.tap('[data-square="7g"]');
    await page.tap('[data-square="7f"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('７六歩'));
    await page.waitForSelector('.board-area[data-ready="true"]');
    await page.tap('[data-square="3c"]');
    await page.tap('[data-square="3d"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 2);
    await page.selectOption('[data-testid="engine-select"]', ENGINE);
    await page.tap('[data-testid="analyze-toggle"]');
    await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
    await page.waitForTimeout(1000);
    await screenshot(page, 'phone');
    await page.tap('[data-testid="analyze-toggle"]');
    await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
    await page.close();
    assert.deepEqual(takeProblems(phone.context), []);
  } finally {
    await phone.close();
  }
});

test('on a phone, 成/不成 is chosen by its own tap: the tap that opens the choice picks nothing', { timeout: 60_000 }, async () => {
  const phone = await launch({ width: 390, height: 844, mobile: true });
  try {
    // Sente: the bishop takes on 2b, where it may promote.
    let page = await openBoard(phone.context, '#pos=startpos_moves_7g7f_3c3d&ply=2');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 2);
    await page.tap('[data-square="8h"]');
    await page.tap('[data-square="2b"]');
    await page.waitForSelector('[data-testid="promotion-dialog"]');
    await screenshot(page, 'promotion-phone');
    // The dialog stays open and no move is played until a choice is tapped.
    await page.waitForSelector('[data-testid="promotion-dialog"]');
    assert.equal((await moveTexts(page)).length, 2, 'the tap that opened the dialog played a move');
    await page.tap('[data-testid="unpromote"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('２二角不成'));
    assert.equal(await page.locator('[data-square="2b"] .piece').getAttribute('data-piece'), 'B');
    await page.close();

    // Gote: the bishop takes on 8h, and this time promotes.
    page = await openBoard(phone.context, '#pos=startpos_moves_7g7f_3c3d_2g2f&ply=3');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.tap('[data-square="2b"]');
    await page.tap('[data-square="8h"]');
    await page.waitForSelector('[data-testid="promotion-dialog"]');
    assert.equal((await moveTexts(page)).length, 3, 'the tap that opened the dialog played a move');
    await page.tap('[data-testid="promote"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="move-list"]').textContent.includes('８八角成'));
    assert.equal(await page.locator('[data-square="8h"] .piece').getAttribute('data-piece'), '+B');
    await page.close();
    assert.deepEqual(takeProblems(phone.context), []);
  } finally {
    await phone.close();
  }
});

test('usid serves the page assets with their content types', async () => {
  const res = await fetch(`${baseURL()}/`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/html/);
});
