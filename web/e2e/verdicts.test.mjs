// Game analysis verdicts a player can trust (issue 26), on the board at its
// default setting against a real usid: a game with one obvious blunder gets
// that blunder marked and next to nothing else; the time left is estimated
// from the first positions on; an engine's book move says so (issue 24).
// Real chromium, real usid, fairy-stockfish and gpsusi.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems } from './lib.mjs';

const FAIRY = process.env.USID_ANALYSIS_ENGINE || 'fairy';
const GPS = process.env.USID_MATE_ENGINE || 'gps';

// A self-play game of fairy-stockfish at depth 8 (review/verdicts_test.go's
// selfPlay, seed 105: 4 random opening plies, then the engine's moves) in
// which move 15, ▲３四飛 (5d3d), leaves the rook to the pawn on 3c (△同歩
// takes it): the planted blunder (plant, a loss of ≥ 1200 cp at depth 10),
// then 4 more self-play moves.
const BLUNDER_GAME = '8g8f 7c7d 2g2f 4a4b 7g7f 5c5d 2f2e 1c1d 2e2d 2c2d 2h2d 4b3b 2d5d 5a4b 5d3d 3c3d 3i3h 8b5b 8h2b';
const BLUNDER_PLY = 15;

let browser;
before(async () => { browser = await launch({ width: 1280, height: 900 }); });
after(async () => { await browser?.close(); });

function assertClean() {
  assert.deepEqual(takeProblems(browser.context), [], 'the page logged errors');
}

async function loadGame(page, engine, moves) {
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', engine);
  await page.fill('[data-testid="position-input"]', `position startpos moves ${moves}`);
  await page.click('[data-testid="load-position"]');
  const n = moves.split(' ').length;
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid="move"]').length === k, n);
}

// startAndWatchEstimate starts the game analysis at the board's default
// setting and watches the status line as it changes. It returns, once the
// page has shown a time left or the job has ended: eta, the positions done
// when a time left first showed (null: never); running, whether the page
// showed the job running with positions left (a job whose positions are
// all in usid's evaluation cache, as on a server that analysed the game
// before, is done at its first answer and has no time left to show).
async function startAndWatchEstimate(page) {
  // The default setting: nothing chosen (a fresh profile), 1 s per position.
  assert.equal(await page.inputValue('[data-testid="game-limit"]'), 't1000');
  await page.evaluate(() => {
    const w = { eta: null, running: false, text: '' };
    window.__watch = w;
    const look = () => {
      const st = document.querySelector('[data-testid="game-status"]');
      const bar = document.querySelector('[data-testid="game-progress"]');
      const eta = document.querySelector('[data-testid="game-eta"]');
      if (st.dataset.state === 'running' && bar.value < bar.max) w.running = true;
      if (w.eta === null && !eta.hidden && Number(eta.dataset.ms) > 0) { w.eta = bar.value; w.text = eta.textContent; }
    };
    new MutationObserver(look).observe(document.querySelector('[data-testid="game-status"]'), { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.click('[data-testid="analyse-game"]');
  await page.waitForFunction(() => window.__watch.eta !== null || ['done', 'failed', 'cancelled'].includes(document.querySelector('[data-testid="game-status"]').dataset.state), null, { timeout: 60_000 });
  const w = await page.evaluate(() => window.__watch);
  if (w.eta !== null) assert.match(w.text, /^about \d+ (s|min \d+ s) left$/);
  else console.log('# every position came from the evaluation cache: no time left to show');
  return w;
}

test('a rook left en prise is the game\'s blunder (??) and nearly nothing else is marked', { timeout: 150_000 }, async () => {
  const page = await openBoard(browser.context);
  await loadGame(page, FAIRY, BLUNDER_GAME);
  const total = BLUNDER_GAME.split(' ').length + 1;
  const w = await startAndWatchEstimate(page);
  await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done', null, { timeout: 120_000 });
  if (w.running) assert.ok(w.eta !== null && w.eta <= 3, `the time left was first shown after ${w.eta} of ${total} positions; want from the first ones`);
  assert.equal(await page.locator('[data-testid="game-eta"]').isHidden(), true, 'no estimate once done');

  const judged = await page.locator('[data-testid="move"][data-judgement]').evaluateAll((ls) => ls.map((l) => [Number(l.dataset.ply), l.dataset.judgement, l.querySelector('.glyph').textContent]));
  const errors = judged.filter(([, j]) => j === 'mistake' || j === 'blunder');
  console.log(`# judged moves (ply, judgement): ${JSON.stringify(judged.map(([p, j]) => [p, j]))}`);
  assert.deepEqual(judged.find(([p]) => p === BLUNDER_PLY)?.slice(1), ['blunder', '??'], `move ${BLUNDER_PLY} (the rook left en prise) is marked ??`);
  const others = errors.filter(([p]) => p !== BLUNDER_PLY);
  assert.ok(others.length <= 1, `other moves marked ? or ??: ${JSON.stringify(others)}; want at most one`);

  // The graph: every position drawn as one curve, marks only for mistakes
  // and blunders, the blunder's among them.
  const graph = page.locator('[data-testid="eval-graph"]');
  assert.equal(await graph.getAttribute('data-points'), String(total));
  assert.equal(await graph.getAttribute('data-segments'), '1');
  const marks = await page.locator('[data-testid="graph-mark"]').evaluateAll((ms) => ms.map((m) => [Number(m.dataset.ply), m.dataset.judgement]));
  assert.deepEqual(marks, errors.map(([p, j]) => [p, j]));
  // The bar shows the number of the position shown.
  await page.click(`[data-testid="move"][data-ply="${BLUNDER_PLY}"]`);
  await page.waitForFunction(() => /^[+−]?\d|^#/.test(document.querySelector('[data-testid="eval-bar"] .eval-label').textContent));
  assert.equal(await page.locator('[data-testid="eval-bar"] .eval-label').getAttribute('data-lead'), 'w', 'gote is ahead after the rook is left');
  await graph.scrollIntoViewIfNeeded();
  await screenshot(page, 'board-game-blunder');
  await page.close();
  assertClean();
});

test('gpsusi at the board\'s default: the time left shows from the first positions', { timeout: 120_000 }, async () => {
  const page = await openBoard(browser.context);
  // Seeded random legal moves (BenchmarkGpsGame100's game, seed 26): out
  // of gps's opening book, so that every position is searched (a book game
  // is done before the page asks).
  await loadGame(page, GPS, '4i4h 8b4b 6i6h 5a6b 2g2f 2c2d 2f2e 9c9d 4h5h 4b5b 3i3h 6b7b');
  const w = await startAndWatchEstimate(page);
  if (w.eta === null) {
    // Ended before any estimate: only a job answered from the cache may.
    await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done');
    assert.equal(w.running, false, 'the job ran with positions left and no time left showed');
  } else {
    assert.ok(w.eta <= 2, `the time left was first shown after ${w.eta} positions; want from the first ones`);
    await page.click('[data-testid="analyse-game"]'); // cancel: the whole run is measured in BENCHMARKS.md
    await page.waitForFunction(() => ['cancelled', 'done'].includes(document.querySelector('[data-testid="game-status"]').dataset.state));
  }
  await page.close();
  assertClean();
});

test('a book move says so instead of showing nothing (issue 24)', { timeout: 90_000 }, async () => {
  for (const [locale, want] of [['en-US', /Book move/], ['ja-JP', /定跡/]]) {
    const b = await launch({ width: 1280, height: 900, locale });
    try {
      // gpsusi answers the start position from its opening book, with no
      // info line at all.
      const page = await openBoard(b.context);
      await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
      await page.selectOption('[data-testid="engine-select"]', GPS);
      await page.click('[data-testid="analyze-toggle"]');
      await page.waitForFunction(() => document.querySelector('[data-testid="analysis-status"]').dataset.state === 'done', null, { timeout: 60_000 });
      assert.match(await page.locator('#state-text').textContent(), want);
      assert.equal(await page.locator('[data-testid="pv-line"]').count(), 0);
      assert.notEqual((await page.locator('[data-testid="pv-hint"]').textContent()).trim(), '', 'the lines say why there are none');
      assert.deepEqual(takeProblems(b.context), []);
    } finally {
      await b.close();
    }
  }
});
