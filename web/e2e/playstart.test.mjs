// Starting, resigning and finding games against the engine (issue 44), on
// the analysis board against a real usid and fairy-stockfish: after Start
// the board, both clocks and the resign button are on screen (the start
// button is below the fold), at both sizes; resigning asks first (a second
// click, or Enter, within a few seconds; Escape and the time running out
// take it back), in Japanese and English; and the games of closed tabs,
// which hold the player's two slots, are listed in the play panel when the
// bound refuses a new game, each to resign or resume.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const ENGINE = process.env.USID_PLAY_ENGINE || 'fairy';

// gamesInProgress is what GET /v1/play/games lists for this test's client
// (every page of the run is one anonymous client: 127.0.0.1).
async function gamesInProgress() {
  const r = await fetch(`${baseURL()}/v1/play/games`);
  assert.equal(r.status, 200);
  return (await r.json()).games;
}

// noGames waits until no game of an earlier test holds a slot (an
// abandoned one goes after its grace, a minute).
async function noGames() {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const left = await gamesInProgress();
    if (!left.length) return;
    if (Date.now() > deadline) throw new Error(`games of earlier tests still in progress: ${JSON.stringify(left)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function openBoard(context) {
  const page = await context.newPage();
  await page.goto(`${baseURL()}/`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction((e) => [...document.querySelectorAll('#engine option')].some((o) => o.value === e), ENGINE);
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  return page;
}

// start starts a game in which the player, Black, is to move with ten
// minutes on the clock: the engine thinks only after a move, so a game
// that waits costs nothing.
async function start(page) {
  await page.selectOption('[data-testid="play-side"]', 'b');
  await page.selectOption('[data-testid="play-mode"]', 'sudden');
  await page.fill('[data-testid="play-main-you"]', '600');
  await page.fill('[data-testid="play-main-engine"]', '600');
  await page.click('[data-testid="play-begin"]');
}

async function playing(page) {
  await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
  return page.getAttribute('[data-testid="play-panel"]', 'data-game');
}

// offScreen lists what of the board, its clocks and the resign button is
// not wholly inside the window.
async function offScreen(page) {
  return page.evaluate(() => {
    const out = [];
    for (const sel of ['.board', '[data-testid="clock-b"]', '[data-testid="clock-w"]', '[data-testid="play-resign"]']) {
      const r = document.querySelector(sel).getBoundingClientRect();
      if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth || !r.width) out.push(`${sel} at ${JSON.stringify(r)} (window ${innerWidth}x${innerHeight})`);
    }
    return out;
  });
}

const confirming = (page) => page.getAttribute('[data-testid="play-resign"]', 'data-confirming');

for (const [size, opts] of Object.entries(SIZES)) {
  const locale = size === 'phone' ? 'ja-JP' : 'en-US';
  const lang = locale.slice(0, 2);
  test(`${size} (${lang}): the board, clocks and resign on screen after Start; resigning asks first`, { timeout: 180_000 }, async () => {
    await noGames();
    const browser = await launch({ ...opts, locale });
    try {
      const page = await openBoard(browser.context);
      // The start button is below the fold: the page scrolls to it.
      const below = await page.evaluate(() => document.querySelector('[data-testid="play-begin"]').getBoundingClientRect().top > innerHeight);
      assert.ok(below, 'the test needs the start button below the fold');
      await start(page);
      const game = await playing(page);
      await page.waitForFunction(() => !document.querySelector('[data-testid="clock-b"]').hidden);
      assert.deepEqual(await offScreen(page), [], 'after Start');
      await screenshot(page, `playstart-${size}`);

      // One click asks, in the page's language; nothing is sent.
      const words = { ja: ['投了', '投了を確定'], en: ['Resign', 'Confirm resign'] }[lang];
      await page.click('[data-testid="play-resign"]');
      assert.equal(await confirming(page), 'true');
      assert.equal(await page.textContent('[data-testid="play-resign"]'), words[1]);
      await screenshot(page, `playstart-resign-asks-${size}`);
      if (lang === 'ja') await checkLanguage(page, 'ja', 'resign asking');
      // Unanswered, it takes itself back; the game goes on.
      await page.waitForFunction(() => !document.querySelector('[data-testid="play-resign"]').dataset.confirming, null, { timeout: 10_000 });
      assert.equal(await page.textContent('[data-testid="play-resign"]'), words[0]);
      assert.equal(await page.getAttribute('[data-testid="play-panel"]', 'data-status'), 'playing');
      // From the keyboard: Enter asks, Escape takes it back, Enter twice resigns.
      await page.focus('[data-testid="play-resign"]');
      await page.keyboard.press('Enter');
      assert.equal(await confirming(page), 'true');
      await page.keyboard.press('Escape');
      assert.equal(await confirming(page), null);
      assert.equal(await page.getAttribute('[data-testid="play-panel"]', 'data-status'), 'playing');
      assert.deepEqual((await gamesInProgress()).map((g) => g.game), [game], 'still in progress after Escape');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await page.waitForSelector('[data-testid="play-panel"][data-status="ended"]');
      assert.equal(await page.getAttribute('[data-testid="play-result"]', 'data-reason'), 'resign');
      assert.deepEqual(await takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}

test('the games of closed tabs: listed when the bound refuses a new game, resigned and resumed from the list', { timeout: 180_000 }, async () => {
  await noGames();
  const browser = await launch({ ...SIZES.desktop, locale: 'en-US' });
  try {
    // Two tabs each start a game and are closed: the two slots are held.
    const held = [];
    for (let i = 0; i < 2; i++) {
      const tab = await openBoard(browser.context);
      await start(tab);
      held.push(await playing(tab));
      await tab.close();
    }
    const page = await openBoard(browser.context);
    // Listed as soon as the page connects.
    await page.waitForSelector('[data-testid="play-games"]:not([hidden])');
    const listed = () => page.$$eval('[data-testid="play-game"]', (lis) => lis.map((li) => li.dataset.game));
    assert.deepEqual((await listed()).sort(), [...held].sort());
    // A third game is refused, in words that point at the list.
    await start(page);
    await page.waitForSelector('[data-testid="play-error"]:not([hidden])');
    assert.equal(await page.getAttribute('[data-testid="play-error"]', 'data-code'), 'too_many_requests');
    assert.match(await page.textContent('[data-testid="play-error"]'), /You have 2 games in progress.*resume or resign one below/);
    const item = (id) => `[data-testid="play-game"][data-game="${id}"]`;
    assert.equal(await page.textContent(`${item(held[0])} .what`), 'Shogi against fairy, you play sente, 0 moves · your move');
    await screenshot(page, 'playstart-games-desktop');

    // Resigned from the list: one click asks, the second resigns.
    await page.click(`${item(held[0])} [data-testid="play-game-resign"]`);
    assert.equal(await page.textContent(`${item(held[0])} [data-testid="play-game-resign"]`), 'Confirm resign');
    assert.equal((await gamesInProgress()).length, 2, 'one click resigned nothing');
    await page.click(`${item(held[0])} [data-testid="play-game-resign"]`);
    await page.waitForFunction((id) => !document.querySelector(`[data-testid="play-game"][data-game="${id}"]`), held[0]);
    assert.deepEqual((await gamesInProgress()).map((g) => g.game), [held[1]]);

    // Resumed from the list: this tab plays it, and lists nothing else.
    await page.click(`${item(held[1])} [data-testid="play-game-resume"]`);
    assert.equal(await playing(page), held[1]);
    await page.waitForSelector('[data-testid="play-games"][hidden]', { state: 'attached' });
    await page.click('[data-testid="play-resign"]');
    await page.click('[data-testid="play-resign"]');
    await page.waitForSelector('[data-testid="play-panel"][data-status="ended"]');
    assert.deepEqual(await gamesInProgress(), []);
    assert.deepEqual(await takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});
