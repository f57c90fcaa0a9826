// The chess page (/chess): the board application with chess's module,
// against a real usid and Debian's stockfish. In Japanese and English, at
// desktop and phone size: the board draws, a move is played by clicks, a
// click on no legal square plays nothing and usid refuses an illegal
// position with its code, the engine's lines, arrows and eval bar follow
// the position. Then (desktop) playing the engine with chess clocks, game
// analysis of a PGN, variations, the PGN download and the position editor.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const PGN = `[Event "Casual"]
[White "Anderssen"]
[Black "Kieseritzky"]
[Result "*"]

1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 *
`;

const browsers = [];
after(async () => { for (const b of browsers) await b.close(); });
// close ends a test's browser (and its WebSocket: usid caps a client's).
async function close(b) {
  browsers.splice(browsers.indexOf(b), 1);
  await b.close();
}

async function openChess(opts) {
  const b = await launch(opts);
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/chess`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="engine-select"]').value === 'stockfish');
  return { b, page };
}

const moves = (page) => page.locator('[data-testid="move-list"] [data-testid="move"]').allTextContents();
const state = (page) => page.locator('[data-testid="analysis-status"]').getAttribute('data-state');

for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
  for (const [size, opts] of Object.entries(SIZES)) {
    test(`${lang} ${size}: the chess board draws, plays a clicked move, refuses an illegal one, shows the engine's lines`, { timeout: 120_000 }, async () => {
      const { b, page } = await openChess({ ...opts, locale });
      assert.equal(await page.locator('[data-testid="board"] .chess-piece').count(), 32, 'the start position');
      assert.equal(await page.locator('[data-testid="sq-e1"] .chess-piece').getAttribute('data-piece'), 'K');
      await checkLanguage(page, lang, 'chess, fresh');

      // A click on a square the pawn cannot reach plays nothing.
      await page.click('[data-testid="sq-e2"]');
      await page.waitForSelector('[data-testid="sq-e4"].target');
      await page.click('[data-testid="sq-e5"]');
      assert.equal(await page.locator('[data-testid="sq-e2"] .chess-piece').getAttribute('data-piece'), 'P');
      assert.deepEqual(await moves(page), [], 'no move was played');
      // A legal one is played and shown in SAN.
      await page.click('[data-testid="sq-e2"]');
      await page.click('[data-testid="sq-e4"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 1);
      await page.waitForFunction(() => /e4/.test(document.querySelector('[data-testid="move-list"] [data-testid="move"]').textContent));
      assert.equal(await page.locator('[data-testid="sq-e4"] .chess-piece').getAttribute('data-piece'), 'P');
      await page.waitForFunction(() => document.querySelector('[data-testid="current-position"]').value.includes(' b KQkq'));

      // usid refuses an illegal position with its code.
      await page.fill('[data-testid="position-input"]', '4k3/8/8/8/8/8/8/4K2R w KQ - 0 1');
      await page.click('[data-testid="load-position"]');
      await page.waitForSelector('[data-testid="error"][data-code="castling_rights"]');
      await checkLanguage(page, lang, 'chess, a move played, a position refused');

      // A PGN, analysed with two lines: lines, arrows and the bar follow.
      await page.fill('[data-testid="position-input"]', PGN);
      await page.click('[data-testid="load-position"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 8);
      await page.waitForFunction(() => /Qh4\+/.test(document.querySelector('[data-testid="move-list"]').textContent));
      assert.match(await page.locator('[data-testid="record-info"]').innerText(), /Anderssen/);
      await page.click('[data-testid="nav-last"]');
      await page.waitForSelector('.board-area[data-ready="true"]');
      assert.equal(await page.locator('[data-testid="sq-f1"] .chess-piece').getAttribute('data-piece'), 'K');
      await page.selectOption('[data-testid="multipv-select"]', '2');
      await page.click('[data-testid="analyze-toggle"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 2, null, { timeout: 60_000 });
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="arrows"] .arrow').length === 2);
      assert.match(await page.locator('[data-testid="arrows"] .arrow.best').getAttribute('data-move'), /^[a-h][1-8][a-h][1-8]/);
      assert.notEqual(await page.locator('[data-testid="eval-bar"]').getAttribute('data-value'), '');
      assert.match(await page.locator('[data-testid="pv-line"] .pv-moves').first().innerText(), /[a-hNBRQK]/);

      // Bishop takes b5 by clicks: Black to move, the best arrow starts on a black piece.
      await page.click('[data-testid="sq-c4"]');
      await page.waitForSelector('[data-testid="sq-b5"].target');
      await page.click('[data-testid="sq-b5"]');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 9);
      // Shown at once, in SAN once usid has named it.
      await page.waitForFunction(() => /Bxb5/.test(document.querySelector('[data-testid="move-list"] .current')?.textContent));
      await page.waitForFunction(() => {
        const a = document.querySelector('[data-testid="arrows"] .arrow.best');
        if (!a || document.querySelectorAll('[data-testid="pv-line"]').length !== 2) return false;
        const p = document.querySelector(`[data-testid="sq-${a.dataset.move.slice(0, 2)}"] .chess-piece`);
        return p && p.classList.contains('black');
      }, null, { timeout: 60_000 });
      await screenshot(page, `chess-lines-${lang}-${size}`); // i18n.test.mjs takes chess-${lang}-${size}
      await page.click('[data-testid="analyze-toggle"]');
      await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));
      assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
      await close(b);
    });
  }
}

// The level menu (issue 42): stockfish's levels with the built-in
// configuration, named in the page's language: full strength first, the
// Elo levels down from the strongest, then the beginner levels below the
// lowest Elo (Skill Level 0, a depth-1 search, a share of random moves),
// Beginner 1 the weakest, last. A game at Beginner 1: the engine answers.
const LEVEL_WORDS = { en: { beginner: 'Beginner', elo: 'Elo' }, ja: { beginner: '入門', elo: 'レーティング' } };
for (const [lang, locale, size] of [['en', 'en-US', 'desktop'], ['ja', 'ja-JP', 'phone']]) {
  test(`chess ${lang} ${size}: the level menu offers beginner levels below the Elo levels`, { timeout: 60_000 }, async () => {
    const { b, page } = await openChess({ ...SIZES[size], locale });
    await page.waitForFunction(() => document.querySelector('[data-testid="play-level"]').dataset.kind === 'level');
    const levels = await page.locator('#play-level option').evaluateAll((os) => os.filter((o) => o.value.startsWith('lvl:')).map((o) => [o.value, o.textContent]));
    const w = LEVEL_WORDS[lang];
    assert.deepEqual(levels.slice(-3), [['lvl:beginner3', `${w.beginner} 3`], ['lvl:beginner2', `${w.beginner} 2`], ['lvl:beginner1', `${w.beginner} 1`]], JSON.stringify(levels));
    const elo = levels.slice(0, -3);
    assert.ok(elo.length >= 5 && elo.every(([v, text]) => v.startsWith('lvl:elo') && text.startsWith(w.elo)), JSON.stringify(elo));
    assert.equal(elo.at(-1)[0], 'lvl:elo1350', 'the lowest Elo level just above the beginners');
    await page.selectOption('[data-testid="play-level"]', 'lvl:beginner1');
    await page.selectOption('[data-testid="play-side"]', 'b'); // the engine (White) moves first
    await page.selectOption('[data-testid="play-mode"]', 'fischer');
    await page.click('[data-testid="play-begin"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 1 ||
      !document.querySelector('[data-testid="play-error"]').hidden, null, { timeout: 30_000 });
    assert.equal(await page.locator('[data-testid="play-error"]').isHidden(), true, await page.locator('[data-testid="play-error"]').innerText());
    await checkLanguage(page, lang, 'chess, a game at Beginner 1');
    await screenshot(page, `chess-beginner-${lang}-${size}`);
    // Resigned (a second click confirms): the game's slot is given back.
    await page.click('[data-testid="play-resign"]');
    await page.click('[data-testid="play-resign"]');
    await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
    await close(b);
  });
}

for (const [lang, locale, size] of [['en', 'en-US', 'desktop'], ['ja', 'ja-JP', 'phone']]) {
test(`${lang} ${size}: play stockfish with Fischer clocks, then analyse the game and download it as PGN`, { timeout: 180_000 }, async () => {
  const { b, page } = await openChess({ ...SIZES[size], locale });
  await page.selectOption('[data-testid="play-side"]', 'w');
  await page.selectOption('[data-testid="play-mode"]', 'fischer');
  await page.selectOption('[data-testid="play-level"]', 'ms:100');
  await page.fill('[data-testid="play-main-you"]', '120');
  await page.fill('[data-testid="play-extra-you"]', '1');
  await page.fill('[data-testid="play-main-engine"]', '60');
  await page.fill('[data-testid="play-extra-engine"]', '1');
  await page.click('[data-testid="play-begin"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="play-panel"]').dataset.status === 'playing' ||
    !document.querySelector('[data-testid="play-error"]').hidden);
  assert.equal(await page.locator('[data-testid="play-error"]').isHidden(), true, await page.locator('[data-testid="play-error"]').innerText());
  await page.waitForSelector('[data-testid="clock-w"]:not([hidden]) [data-testid="clock-w-time"]');
  // Your move by clicks; the engine answers on the board.
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.click('[data-testid="sq-d2"]');
  await page.click('[data-testid="sq-d4"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 2, null, { timeout: 30_000 });
  assert.match((await moves(page))[0], /d4/);
  assert.equal(await page.locator('[data-testid="play-declare"]').isHidden(), true, 'chess has no declaration');
  await checkLanguage(page, lang, 'chess, playing');
  await screenshot(page, `chess-play-${lang}-${size}`);
  // Resigning asks first: a second click confirms (issue 44).
  await page.click('[data-testid="play-resign"]');
  await page.click('[data-testid="play-resign"]');
  await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
  assert.equal(await page.locator('[data-testid="play-result"]').getAttribute('data-winner'), 'b');
  await page.waitForSelector('[data-testid="game-result"][data-end="0-1"]');

  // The game analysis of a loaded PGN: every position, the graph and the judgements.
  await page.fill('[data-testid="position-input"]', PGN);
  await page.click('[data-testid="load-position"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 8);
  await page.selectOption('[data-testid="game-limit"]', 'd8');
  await page.click('[data-testid="analyse-game"]');
  await page.waitForSelector('[data-testid="game-status"][data-state="done"]', { timeout: 90_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="eval-graph"]').dataset.points === '9');
  assert.equal(await page.locator('[data-testid="summary-w"] .sum-name').innerText(), 'Anderssen');

  // A variation: back two moves, another move; the main line stays.
  await page.click('[data-testid="move-start"]');
  await page.click('[data-testid="nav-next"]');
  await page.click('[data-testid="nav-next"]');
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.click('[data-testid="sq-g1"]');
  await page.click('[data-testid="sq-f3"]');
  await page.waitForSelector('[data-testid="variation"] [data-testid="var-move"]');
  assert.match(await page.locator('[data-testid="variation"]').innerText(), /Nf3/);
  assert.equal((await moves(page)).length, 8, 'the main line is kept');
  await checkLanguage(page, lang, 'chess, a game analysed', ['Anderssen', 'Kieseritzky', 'Casual']); // the record's words
  await screenshot(page, `chess-game-${lang}-${size}`);

  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  assert.match(dl.suggestedFilename(), /\.pgn$/);
  const text = await (await dl.createReadStream()).toArray().then((c) => Buffer.concat(c).toString());
  assert.match(text, /\[White "Anderssen"\]/);
  assert.match(text, /1\. e4 .*e5 .*2\. f4/s);
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});
}

test('chess: the position editor builds a position usid checks', { timeout: 60_000 }, async () => {
  const { b, page } = await openChess({ ...SIZES.phone, locale: 'ja-JP' });
  await page.click('[data-testid="edit-position"]');
  await page.waitForSelector('[data-testid="editor"]:not([hidden])');
  await page.selectOption('[data-testid="editor-start"]', 'empty');
  await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
  // Two white kings are no position: the second moves the first.
  await page.click('[data-testid="brush-w-Q"]');
  await page.click('[data-testid="sq-d1"]');
  await page.click('[data-testid="brush-b-P"]');
  await page.click('[data-testid="sq-a1"]'); // a pawn on the first rank
  await page.waitForSelector('[data-testid="editor-check"][data-state="invalid"]');
  assert.ok(await page.locator('[data-testid="editor-errors"][data-code]').count() > 0);
  await page.click('[data-testid="sq-a1"]'); // the same piece again takes it away
  await page.click('[data-testid="editor-turn-b"]');
  await page.waitForSelector('[data-testid="editor-check"][data-state="valid"]');
  await screenshot(page, 'chess-editor-ja-phone');
  await page.click('[data-testid="editor-done"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="current-position"]').value.startsWith('4k3/8/8/8/8/8/8/3QK3 b'));
  assert.equal(await page.locator('[data-testid="sq-d1"] .chess-piece').getAttribute('data-piece'), 'Q');
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});

test('chess: the URL keeps the game and the move shown, across a reload', { timeout: 60_000 }, async () => {
  const b = await launch({ ...SIZES.desktop, locale: 'en-US' });
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/chess#pos=startpos_moves_e2e4_e7e5_g1f3&ply=2`);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === 3);
  await page.waitForSelector('[data-testid="move"][data-ply="2"].current');
  assert.equal(await page.locator('[data-testid="sq-e5"] .chess-piece').getAttribute('data-piece'), 'p');
  assert.equal(await page.locator('[data-testid="sq-f3"] .chess-piece').count(), 0, 'the shown move is the second');
  await page.click('[data-testid="nav-last"]');
  await page.waitForFunction(() => location.hash === '#pos=startpos_moves_e2e4_e7e5_g1f3&ply=3');
  await page.reload();
  await page.waitForSelector('[data-testid="move"][data-ply="3"].current');
  assert.equal(await page.locator('[data-testid="sq-f3"] .chess-piece').getAttribute('data-piece'), 'N');
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});

test('chess: a promotion asks for the piece', { timeout: 60_000 }, async () => {
  const b = await launch({ ...SIZES.phone, locale: 'en-US' });
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/chess#pos=fen_8/P6k/8/8/8/8/8/K7_w_-_-_0_1&ply=0`);
  await page.waitForSelector('[data-testid="sq-a7"] [data-piece="P"]');
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.click('[data-testid="sq-a7"]');
  await page.click('[data-testid="sq-a8"]');
  await page.waitForSelector('[data-testid="promotion-dialog"] [data-promote="n"]');
  await screenshot(page, 'chess-promotion-en-phone');
  await page.click('[data-testid="promotion-dialog"] [data-promote="n"]');
  await page.waitForFunction(() => /a8=N/.test(document.querySelector('[data-testid="move-list"]').textContent));
  assert.equal(await page.locator('[data-testid="sq-a8"] .chess-piece').getAttribute('data-piece'), 'N');
  assert.equal(await page.locator('[data-testid="promotion-dialog"]').count(), 0);
  assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  await close(b);
});
