// The othello page (/othello): the board application with othello's module
// against a real usid, in Japanese and English at desktop and phone size:
// the board draws (a1 top left), a move is played by clicking its square,
// a click on no legal square plays nothing and usid refuses an illegal
// transcript with its code, the engine's lines, ring and eval bar follow
// the position; a game against the engine is played to its end by the
// rules (passes included), its result said with the disc count, then
// analysed move by move; a pass is played with the Pass button when the
// side to move has no square, the editor builds positions usid checks, a
// transcript goes in and out.
//
// The engine: usid's own othello engine ("othello", the built-in
// configuration's: `usid othello-engine`, USI-X, id name usid-othello), as
// `make run` serves it; run.sh adds no engine. (The UOI draft, which no
// packaged engine speaks, is played and analysed end to end by the Go test
// server.TestOthelloPlayAndAnalysis with usid's fake engine.)

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

// A game whose last position has White without a square and Black with one
// (found by random play with web/static/js/games/othello.js).
const TO_PASS = 'd3c3b3b2b1d2e3e2d1a1f3a3f5g3f4f2f1g5h3c5c4c2g4g1h1c1d6e1b6c6b4e6c7h5g2a7h6e7a2c8e8h7b7b5a4f8g8h2g6h4a6f7d8b8a5f6d7h8g7';

const browsers = [];
after(async () => { for (const b of browsers) await b.close(); });
async function close(b) {
  browsers.splice(browsers.indexOf(b), 1);
  await b.close();
}

async function openOthello(opts) {
  const b = await launch(opts);
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/othello`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  return { b, page };
}

const moves = (page) => page.locator('[data-testid="move-list"] [data-testid="move"]').allTextContents();
const count = async (page) => [await page.locator('[data-testid="count-b"]').innerText(), await page.locator('[data-testid="count-w"]').innerText()].map(Number);
const othelloEngines = async () => {
  const { engines } = await (await fetch(`${baseURL()}/v1/engines`)).json();
  return engines.filter((e) => ['usix', 'uoi'].includes(e.profile?.protocol)).map((e) => `${e.name} ${e.profile.protocol}`);
};

for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
  for (const [size, opts] of Object.entries(SIZES)) {
    test(`${lang} ${size}: the othello board draws, plays a clicked square, refuses an illegal one`, { timeout: 90_000 }, async () => {
      const { b, page } = await openOthello({ ...opts, locale });
      assert.equal(await page.locator('[data-testid="board"] .disc').count(), 4, 'the start position');
      assert.equal(await page.locator('[data-testid="sq-d4"] .disc').getAttribute('data-disc'), 'w', 'd4 is white (a1 top left)');
      assert.equal(await page.locator('[data-testid="sq-e4"] .disc').getAttribute('data-disc'), 'b');
      assert.deepEqual((await page.locator('.oth-sq.target').evaluateAll((els) => els.map((e) => e.dataset.square))).sort(), ['c4', 'd3', 'e6', 'f5']);
      // a1 top left: its square is the board's first, at the top left corner.
      const [a1, h8] = [await page.locator('[data-testid="sq-a1"]').boundingBox(), await page.locator('[data-testid="sq-h8"]').boundingBox()];
      assert.ok(a1.x < h8.x && a1.y < h8.y, 'a1 is at the top left');
      await checkLanguage(page, lang, 'othello, fresh');

      // A click on a square that turns nothing over plays nothing.
      await page.click('[data-testid="sq-a1"]');
      await page.waitForSelector('.board-area[data-refused="a1"]');
      assert.deepEqual(await moves(page), []);
      assert.deepEqual(await count(page), [2, 2]);
      // f5 turns e5 over.
      await page.click('[data-testid="sq-f5"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 1);
      assert.match((await moves(page))[0], /f5/);
      await page.waitForSelector('.board-area[data-ready="true"][data-turn="w"]');
      assert.deepEqual(await count(page), [4, 1]);
      assert.equal(await page.locator('[data-testid="sq-e5"] .disc').getAttribute('data-disc'), 'b');
      await page.waitForFunction(() => document.querySelector('[data-testid="current-position"]').value.endsWith('W2'));

      // usid refuses a transcript with a move that turns nothing over.
      await page.fill('[data-testid="position-input"]', 'f5 d6 a1');
      await page.click('[data-testid="load-position"]');
      await page.waitForSelector('[data-testid="error"][data-code="flips_nothing"]');

      await checkLanguage(page, lang, 'othello, a move played, a transcript refused');
      await screenshot(page, `othello-moves-${lang}-${size}`); // i18n.test.mjs takes othello-${lang}-${size}

      // The engines: only othello's are offered, the built-in one.
      assert.deepEqual(await othelloEngines(), ['othello usix'], 'the built-in othello engine');
      assert.deepEqual(await page.locator('[data-testid="engine-select"] option').evaluateAll((o) => o.map((x) => x.value)), ['othello']);
      // Its lines after f5 (White to move): usid's engine's best square, one
      // of White's, as a ring, the first move of its line; a score in discs
      // from Black's side.
      await page.fill('[data-testid="position-input"]', 'f5');
      await page.click('[data-testid="load-position"]');
      await page.click('[data-testid="nav-last"]');
      await page.waitForSelector('.board-area[data-ready="true"][data-turn="w"]');
      await page.click('[data-testid="analyze-toggle"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 1, null, { timeout: 30_000 });
      await page.waitForSelector('[data-testid="arrows"] .arrow.best');
      const squares = await page.locator('.oth-sq.target').evaluateAll((els) => els.map((e) => e.dataset.square));
      assert.deepEqual([...squares].sort(), ['d6', 'f4', 'f6'], "White's squares after f5");
      const best = await page.locator('[data-testid="arrows"] .arrow.best').getAttribute('data-move');
      assert.ok(squares.includes(best), `the ring ${best} is one of White's squares`);
      assert.match(await page.locator('[data-testid="pv-line"] .pv-moves').first().innerText(), new RegExp(best));
      await page.waitForFunction(() => document.querySelector('[data-testid="eval-bar"]').dataset.value !== '');
      assert.match(await page.locator('[data-testid="eval-bar"]').innerText(), /\d/);
      await checkLanguage(page, lang, 'othello, analysing');
      await screenshot(page, `othello-lines-${lang}-${size}`);
      await page.click('[data-testid="analyze-toggle"]');
      await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
      assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
      await close(b);
    });
  }
}

test('othello: a transcript in, a pass, the end by the disc count, the transcript out', { timeout: 60_000 }, async () => {
  const { b, page } = await openOthello({ ...SIZES.desktop, locale: 'en-US' });
  await page.fill('[data-testid="position-input"]', TO_PASS);
  await page.click('[data-testid="load-position"]');
  const n = TO_PASS.length / 2;
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === k, n);
  await page.click('[data-testid="nav-last"]');
  await page.waitForSelector('.board-area[data-ready="true"]');
  // White has no square: the Pass button is the only move.
  await page.waitForSelector('[data-testid="pass"]:not([hidden])');
  assert.equal(await page.locator('.oth-sq.target').count(), 0);
  await page.click('[data-testid="pass"]');
  await page.waitForFunction((k) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === k, n + 1);
  assert.match((await moves(page)).at(-1), /^\s*\d*\.?\s*○\s*Pass$/, 'White\'s pass, in the page\'s language');
  await page.waitForSelector('[data-testid="pass"][hidden]', { state: 'attached' });
  // Black fills the last square: the game is over, counted.
  await page.waitForSelector('.oth-sq.target');
  const last = await page.locator('.oth-sq.target').first().getAttribute('data-square');
  await page.click(`[data-testid="sq-${last}"]`);
  await page.waitForSelector('[data-testid="terminal"]:not([hidden])');
  const [bl, wh] = await count(page);
  assert.equal(bl + wh, 64);
  assert.match(await page.locator('[data-testid="terminal"]').innerText(), new RegExp(`${bl}.*${wh}`));
  await screenshot(page, 'othello-end-en-desktop');

  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  assert.match(dl.suggestedFilename(), /\.txt$/);
  const text = await (await dl.createReadStream()).toArray().then((c) => Buffer.concat(c).toString());
  assert.equal(text.trim(), TO_PASS + last, 'the transcript, passes left out');
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});

// A wipeout in nine moves (found by a search with package othello): the
// game ends 13-0 with 51 squares empty, which the winner gets (World
// Othello Federation): 64-0. The end of the game (the banner) and the move
// list give that one score; the banner says the discs on the board beside it.
const WIPEOUT = 'd3c3b3d2e1d6d7e3f4';
for (const [lang, locale, size, words] of [
  ['en', 'en-US', 'desktop', { score: 'Black 64 – White 0', raw: 'on the board 13–0' }],
  ['ja', 'ja-JP', 'phone', { score: '黒 64 – 白 0', raw: '盤上の石は黒13・白0' }],
]) {
  test(`othello ${lang} ${size}: a game ended with empty squares shows one score`, { timeout: 60_000 }, async () => {
    const { b, page } = await openOthello({ ...SIZES[size], locale });
    await page.fill('[data-testid="position-input"]', WIPEOUT);
    await page.click('[data-testid="load-position"]');
    await page.waitForFunction((k) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === k, WIPEOUT.length / 2);
    await page.click('[data-testid="nav-last"]');
    await page.waitForSelector('[data-testid="terminal"]:not([hidden])');
    assert.deepEqual(await count(page), [13, 0]);
    const banner = await page.locator('[data-testid="terminal"]').innerText();
    const list = await page.locator('[data-testid="game-result"]').innerText();
    assert.equal(await page.getAttribute('[data-testid="game-result"]', 'data-end'), '64-0');
    for (const [what, text] of [['the banner', banner], ['the move list', list]]) {
      assert.ok(text.includes(words.score), `${what} says ${words.score}: ${text}`);
      assert.ok(!/\b13\b.*\b0\b/.test(text.replace(words.raw, '')), `${what} gives no other score: ${text}`);
    }
    assert.ok(banner.includes(words.raw), `the banner says the discs on the board: ${banner}`);
    await checkLanguage(page, lang, 'othello, a wipeout');
    await screenshot(page, `othello-wipeout-${lang}-${size}`);
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
    await close(b);
  });
}

test('othello: the editor places discs and chooses the side to move; usid checks the position', { timeout: 60_000 }, async () => {
  const { b, page } = await openOthello({ ...SIZES.phone, locale: 'ja-JP' });
  await page.click('[data-testid="edit-position"]');
  await page.waitForSelector('[data-testid="editor"]:not([hidden])');
  await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
  await page.click('[data-testid="brush-b-D"]');
  await page.click('[data-testid="sq-c3"]');
  await page.click('[data-testid="brush-w-D"]');
  await page.click('[data-testid="sq-e4"]'); // black's start disc turns white
  await page.click('[data-testid="editor-turn-w"]');
  await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
  await screenshot(page, 'othello-editor-ja-phone');
  await page.click('[data-testid="editor-done"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="current-position"]').value.startsWith('------------------X--------OO------XO---------------------------W'));
  assert.equal(await page.locator('[data-testid="sq-e4"] .disc').getAttribute('data-disc'), 'w');
  assert.equal(await page.locator('[data-testid="sq-c3"] .disc').getAttribute('data-disc'), 'b');
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});

// A game against the built-in engine, to its end by the rules: the human
// (Black) plays the first square it is offered, or passes; the engine
// answers at a level the page offers from its level option (the weakest
// on the phone, the one above it on the desktop). Then the result with the
// disc count, the game analysed, the transcript.
const engine = 'othello';
for (const [lang, locale, size, fromWeakest] of [['ja', 'ja-JP', 'phone', 0], ['en', 'en-US', 'desktop', 1]]) {
  test(`${lang} ${size}: a game against ${engine} to the end, its result by the disc count, then analysed`, { timeout: 400_000 }, async () => {
    const { b, page } = await openOthello({ ...SIZES[size], locale });
    await page.selectOption('[data-testid="engine-select"]', engine);
    // usid's engine has levels over its level option, the weakest last.
    await page.waitForFunction(() => document.querySelector('[data-testid="play-level"]').dataset.kind === 'level');
    const levels = await page.locator('#play-level option').evaluateAll((o) => o.map((x) => x.value).filter((v) => v.startsWith('lvl:')));
    assert.ok(levels.length >= 5, `levels ${levels}`);
    await page.selectOption('[data-testid="play-level"]', levels.at(-1 - fromWeakest));
    await page.selectOption('[data-testid="play-side"]', 'b');
    await page.selectOption('[data-testid="play-mode"]', 'fischer');
    await page.fill('[data-testid="play-main-you"]', '300');
    await page.fill('[data-testid="play-extra-you"]', '2');
    await page.click('[data-testid="play-begin"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="play-panel"]').dataset.status === 'playing' ||
      !document.querySelector('[data-testid="play-error"]').hidden);
    assert.equal(await page.locator('[data-testid="play-error"]').isHidden(), true, await page.locator('[data-testid="play-error"]').innerText());
    let turns = 0;
    let passes = 0;
    for (;;) {
      // The human's turn (a square or the Pass button offered), or the end.
      const what = await page.waitForFunction(() => {
        if (document.querySelector('[data-testid="play-panel"]').dataset.status !== 'playing') return 'end';
        if (!document.querySelector('.board-area[data-ready="true"][data-turn="b"]')) return false;
        if (document.querySelector('[data-testid="clock-b"]')?.dataset.running !== 'true') return false;
        if (!document.querySelector('[data-testid="pass"]').hidden) return 'pass';
        const sq = document.querySelector('.oth-sq.target');
        return sq ? sq.dataset.square : false;
      }, null, { timeout: 30_000 }).then((h) => h.jsonValue());
      if (what === 'end') break;
      const before = (await moves(page)).length;
      if (turns === 3) await screenshot(page, `othello-play-${lang}-${size}`);
      if (what === 'pass') {
        passes++;
        await page.click('[data-testid="pass"]');
      } else {
        await page.click(`[data-testid="sq-${what}"]`);
      }
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length > n, before, { timeout: 30_000 });
      turns++;
      assert.ok(turns <= 64, 'the game ends');
    }
    await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
    const [bl, wh] = await count(page);
    assert.ok(bl + wh > 4, `discs ${bl}-${wh}`);
    const winner = await page.locator('[data-testid="play-result"]').getAttribute('data-winner');
    assert.equal(winner || '', bl > wh ? 'b' : wh > bl ? 'w' : '', `the winner by the count ${bl}-${wh} (human passes: ${passes})`);
    // The score: the discs, the empty squares to the winner (the World
    // Othello Federation's count; at the weakest level a game may end in a
    // wipeout with squares left empty).
    const empty = 64 - bl - wh;
    const [sb, sw] = bl > wh ? [bl + empty, wh] : wh > bl ? [bl, wh + empty] : [bl + Math.floor(empty / 2), wh + empty - Math.floor(empty / 2)];
    await page.waitForSelector(`[data-testid="game-result"][data-end="${sb}-${sw}"]`);
    assert.match(await page.locator('[data-testid="game-result"]').innerText(), new RegExp(`${sb}.*${sw}`));
    const plies = (await moves(page)).length;
    await checkLanguage(page, lang, `othello, a game against ${engine} ended`);
    await screenshot(page, `othello-end-${engine}-${lang}-${size}`);

    // The game analysed: a point on the graph for every position (at
    // depth 8 a position: what is checked is the page, not the engine's
    // time; a second a position took most of this test's 100 s).
    await page.selectOption('[data-testid="game-limit"]', 'd8');
    await page.click('[data-testid="play-analyse"]');
    await page.waitForSelector('[data-testid="game-status"][data-state="done"]', { timeout: 240_000 });
    await page.waitForFunction((k) => document.querySelector('[data-testid="eval-graph"]').dataset.points === String(k), plies + 1);
    await checkLanguage(page, lang, `othello, a game against ${engine} analysed`);
    await screenshot(page, `othello-analysed-${engine}-${lang}-${size}`);
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
    await close(b);
  });
}
