// Two engines side by side (issue 44, as ShogiHome's research mode): on
// each game's board a second engine's lines in a panel of their own,
// beside the first's on a wide screen and under them on a phone, its
// arrows in a second colour, its own lines count; Space starts and stops
// both. The engines are picked by game from GET /v1/engines, not by name
// (two of the game's engines, or one twice: two instances). A client whose
// quota holds no second connection is refused it, in the page's words.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const browsers = [];
after(async () => { for (const b of browsers) await b.close(); });
// Each test's browser goes with its test: its connections count against
// the client's quota of sessions, which the next test needs.
async function close(b) {
  const i = browsers.indexOf(b);
  if (i < 0) return;
  browsers.splice(i, 1);
  await b.close();
}

// The protocols that play each game, and the page and position to analyse:
// shogi out of gpsusi's book (from the start it answers unsearched).
const GAMES = {
  shogi: { protocols: ['usi'], path: '/#pos=startpos_moves_1g1f_1c1d_9g9f_9c9d_5i5h_5a5b&ply=6' },
  chess: { protocols: ['uci'], path: '/chess' },
  othello: { protocols: ['usix', 'uoi'], path: '/othello' },
};

// enginesOf returns two engines of the game: two different ones where usid
// has them, else the one twice.
async function enginesOf(game) {
  const { engines } = await (await fetch(`${baseURL()}/v1/engines`)).json();
  const list = engines.filter((e) => GAMES[game].protocols.includes(e.profile?.protocol));
  assert.ok(list.length > 0, `usid lists no ${game} engine (GET /v1/engines): configure one as web/e2e/run.sh does`);
  return [list[0], list[1] || list[0]];
}

// The stroke colour of an engine's best arrow (a line, or othello's ring).
// Read in one synchronous step in the page: the arrows are redrawn with
// every info line, and an element detached between a locator's lookup and
// its evaluation has no computed style (both colours read as '').
const arrowColour = (page, engine) => page.waitForFunction((n) => {
  const el = document.querySelector(`.arrow.best[data-engine="${n}"] :is(line, circle)`);
  return el && el.isConnected && getComputedStyle(el).stroke;
}, engine, { timeout: 10_000 }).then((h) => h.jsonValue());

const LANGS = { shogi: ['ja', 'en'], chess: ['en', 'ja'], othello: ['ja', 'en'] };

for (const game of Object.keys(GAMES)) {
  for (const [i, [size, opts]] of Object.entries(SIZES).entries()) {
    const lang = LANGS[game][i];
    test(`${game} ${size} ${lang}: two engines' lines side by side, arrows in two colours, Space stops both`, { timeout: 120_000 }, async (t) => {
      const [e1, e2] = await enginesOf(game);
      const b = await launch({ ...opts, locale: lang === 'ja' ? 'ja-JP' : 'en-US' });
      browsers.push(b);
      t.after(() => close(b));
      const page = await b.context.newPage();
      await page.goto(`${baseURL()}${GAMES[game].path}`);
      await page.waitForSelector('.board-area[data-ready="true"]');
      await page.waitForSelector(`[data-testid="engine-select"] option[value="${e1.name}"]`, { state: 'attached' });
      await page.selectOption('[data-testid="engine-select"]', e1.name);

      // The second engine: only engines of this game are offered.
      assert.equal(await page.locator('[data-testid="engine2-panel"]').isVisible(), false, 'no second panel until asked');
      await page.click('[data-testid="engine2-add"]');
      await page.waitForSelector('[data-testid="engine2-panel"]', { state: 'visible' });
      const offered = await page.locator('[data-testid="engine2-select"] option').evaluateAll((os) => os.map((o) => o.value));
      const { engines } = await (await fetch(`${baseURL()}/v1/engines`)).json();
      for (const name of offered) {
        const e = engines.find((x) => x.name === name);
        assert.ok(GAMES[game].protocols.includes(e?.profile?.protocol), `${name} (${e?.profile?.protocol}) offered on the ${game} board`);
      }
      await page.selectOption('[data-testid="engine2-select"]', e2.name);
      // Its own lines count: two where the engine has MultiPV.
      const multi = await page.locator('[data-testid="multipv2-select"]').getAttribute('data-profile') === 'multipv';
      if (multi) await page.selectOption('[data-testid="multipv2-select"]', '2');
      // The first engine's own count, 1, where it can choose (disabled
      // without MultiPV: a selectOption would wait its whole timeout).
      if (await page.locator('[data-testid="multipv-select"]').isEnabled()) await page.selectOption('[data-testid="multipv-select"]', '1');
      // The panel says the bar and graph are the first engine's.
      const note = await page.locator('[data-testid="engine2-note"]').innerText();
      assert.match(note, lang === 'ja' ? /評価値バーとグラフは1つ目/ : /bar and graph are the first engine's/, note);

      // Space starts both.
      await page.locator('body').click({ position: { x: 2, y: 2 } });
      await page.keyboard.press('Space');
      await page.waitForSelector('[data-testid="pv-lines"] [data-testid="pv-line"]', { timeout: 60_000 });
      await page.waitForSelector('[data-testid="pv-lines-2"] [data-testid="pv-line"]', { timeout: 60_000 });
      if (multi) {
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-lines-2"] [data-testid="pv-line"]').length === 2, null, { timeout: 60_000 })
          .catch(async () => assert.fail(`the second engine shows ${await page.locator('[data-testid="pv-lines-2"] [data-testid="pv-line"]').count()} lines, want its own 2`));
      }
      assert.equal(await page.locator('[data-testid="pv-lines"] [data-testid="pv-line"]').count(), 1, 'the first engine keeps its own 1 line');
      // Arrows (rings on othello) of both, in two colours.
      await page.waitForSelector('.arrow.best[data-engine="1"]', { state: 'attached' });
      await page.waitForSelector('.arrow.best[data-engine="2"]', { state: 'attached' });
      const [c1, c2] = [await arrowColour(page, 1), await arrowColour(page, 2)];
      assert.notEqual(c1, c2, `both engines' best arrows are ${c1}`);

      // Side by side on a wide screen, one under the other on a phone.
      const p1 = await page.locator('.engine-panel').boundingBox();
      const p2 = await page.locator('[data-testid="engine2-panel"]').boundingBox();
      if (size === 'desktop') {
        assert.ok(p2.x >= p1.x + p1.width - 1 && Math.abs(p2.y - p1.y) < 4, `beside: first ${JSON.stringify(p1)}, second ${JSON.stringify(p2)}`);
        const board = await page.locator('.board-area').boundingBox();
        assert.ok(p1.x > board.x + board.width, 'the lines beside the board');
        assert.ok(p2.x + p2.width <= opts.width, 'the second panel on the screen');
      } else {
        assert.ok(p2.y >= p1.y + p1.height - 1 && Math.abs(p2.x - p1.x) < 4, `below: first ${JSON.stringify(p1)}, second ${JSON.stringify(p2)}`);
      }
      await checkLanguage(page, lang, `${game} with two engines`);
      await screenshot(page, `dual-${game}-${size}`);

      // Space stops both: each engine's search ends.
      await page.keyboard.press('Space');
      await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state) &&
        ['stopped', 'done'].includes(document.querySelector('[data-testid="engine2-status"]').dataset.state), null, { timeout: 20_000 })
        .catch(async () => assert.fail(`after Space: ${await page.locator('[data-testid="analysis-status"]').getAttribute('data-state')} and ${await page.locator('[data-testid="engine2-status"]').getAttribute('data-state')}`));
      assert.equal(await page.locator('[data-testid="analyze-toggle"]').getAttribute('aria-pressed'), 'false');
      // Both sets of lines stay, as one engine's do after Stop.
      assert.ok(await page.locator('[data-testid="pv-lines-2"] [data-testid="pv-line"]').count() >= 1);

      // Removed, the second engine's panel and arrows go.
      await page.click('[data-testid="engine2-remove"]');
      await page.waitForSelector('[data-testid="engine2-panel"]', { state: 'hidden' });
      assert.equal(await page.locator('.arrow[data-engine="2"]').count(), 0, 'no second engine arrows once removed');
      assert.deepEqual(takeProblems(b.context), []);
      await close(b);
    });
  }
}

// A client's quota of live connections, filled by other connections of
// the same browser: the second engine is refused, the page says why in its
// language, and once one is freed it is added.
for (const lang of ['ja', 'en']) {
  test(`${lang}: a second engine the quota cannot hold is refused in the page's words`, { timeout: 90_000 }, async (t) => {
    const b = await launch({ ...SIZES.desktop, locale: lang === 'ja' ? 'ja-JP' : 'en-US' });
    browsers.push(b);
    t.after(() => close(b));
    const page = await b.context.newPage();
    await page.goto(`${baseURL()}${GAMES.shogi.path}`);
    await page.waitForSelector('.board-area[data-ready="true"]');
    await page.waitForSelector('[data-testid="connection"][data-state="open"]');
    // Open connections until usid refuses one: the quota is full.
    const held = await page.evaluate(async () => {
      window.extra = [];
      for (let i = 0; i < 64; i++) {
        const ws = new WebSocket(`ws://${location.host}/v1/ws`);
        const ok = await new Promise((res) => { ws.onopen = () => res(true); ws.onerror = () => res(false); });
        if (!ok) return i;
        window.extra.push(ws);
      }
      return -1;
    });
    assert.ok(held >= 0, 'usid refused none of 64 connections: no quota to test');
    await page.click('[data-testid="engine2-add"]');
    await page.waitForSelector('[data-testid="engine2-status"][data-state="refused"]', { timeout: 30_000 });
    const words = await page.locator('[data-testid="engine2-error"]').innerText();
    assert.match(words, lang === 'ja' ? /usidが2つ目のエンジンを断りました/ : /usid refused the second engine/, words);
    const { quota } = await (await fetch(`${baseURL()}/v1/limits`)).json();
    assert.ok(words.includes(String(quota.sessions)), `the error names the quota (${quota.sessions}): ${words}`);
    await checkLanguage(page, lang, 'second engine refused');
    await screenshot(page, `dual-refused-${lang}`);
    // Not retried: it is added again once a connection is free.
    await page.evaluate(() => { window.extra.pop().close(); });
    await page.click('[data-testid="engine2-add"]');
    await page.locator('body').click({ position: { x: 2, y: 2 } });
    await page.keyboard.press('Space');
    await page.waitForSelector('[data-testid="pv-lines-2"] [data-testid="pv-line"]', { timeout: 60_000 });
    await page.keyboard.press('Space');
    await page.evaluate(() => { for (const ws of window.extra) ws.close(); });
    // The refused handshakes are the test's own doing.
    takeProblems(b.context);
    await close(b);
  });
}
