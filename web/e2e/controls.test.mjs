// The analysis board's controls follow the engine's profile (/v1/engines);
// live analysis limits; Space; #pos on hashchange; whole PV lines, stable
// PV clicks while lines redraw; the layout. Each at desktop and phone sizes.
// Real chromium, real usid, fairy-stockfish (MultiPV) and gpsusi (no
// MultiPV, mate search).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, openBoard, screenshot, takeProblems, baseURL, moveTexts, SIZES } from './lib.mjs';

const FAIRY = process.env.USID_ANALYSIS_ENGINE || 'fairy';
const GPS = process.env.USID_MATE_ENGINE || 'gps';

const state = (page) => page.getAttribute('[data-testid="analysis-status"]', 'data-state');
const waitState = (page, ...s) => page.waitForFunction((want) => want.includes(document.querySelector('[data-testid="analysis-status"]').dataset.state), s, { timeout: 60_000 });

// atBothSizes runs a test at desktop and at phone size (touch).
function atBothSizes(name, options, fn) {
  for (const [size, opts] of Object.entries(SIZES)) test(`${size}: ${name}`, options, () => fn(size, opts));
}

async function engines(page) {
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
}

atBothSizes('Lines only where the engine has MultiPV; mate search only where it solves mates', { timeout: 90_000 }, async (size, opts) => {
  const browser = await launch(opts);
  try {
    // A position out of gps's opening book, so that it searches.
    const page = await openBoard(browser.context, '#pos=sfen_ln1g1g1nl/1ks2r3/1ppppsbpp/p4pp2/9/P1P1P1P1P/1P1PSP1P1/1BK1G2R1/LNSG3NL_b_-_1&ply=0');
    await engines(page);
    await page.selectOption('[data-testid="engine-select"]', FAIRY);
    await page.waitForSelector('[data-testid="multipv-select"][data-profile="multipv"]:not([disabled])');
    await page.selectOption('[data-testid="multipv-select"]', '3');

    // gps has no MultiPV option: one line, and the analysis runs (it used to
    // fail with "unsupported: engine gps has no MultiPV option").
    await page.selectOption('[data-testid="engine-select"]', GPS);
    await page.waitForSelector('[data-testid="multipv-select"][data-profile="none"][disabled]');
    assert.equal(await page.inputValue('[data-testid="multipv-select"]'), '1');
    await page.click('[data-testid="analyze-toggle"]');
    await page.waitForSelector('[data-testid="pv-line"]', { timeout: 60_000 });
    assert.equal(await page.locator('[data-testid="analysis-error"]').isHidden(), true, 'no error from gps');
    await page.click('[data-testid="analyze-toggle"]');
    await waitState(page, 'stopped', 'done');
    assert.equal(await page.locator('[data-testid="analysis-error"]').isHidden(), true);

    // Back on fairy, the saved choice of 3 lines returns.
    await page.selectOption('[data-testid="engine-select"]', FAIRY);
    await page.waitForSelector('[data-testid="multipv-select"][data-profile="multipv"]:not([disabled])');
    assert.equal(await page.inputValue('[data-testid="multipv-select"]'), '3');
    await page.close();

    // The tsume page offers only engines that solve mates.
    const tsume = await browser.context.newPage();
    await tsume.goto(`${baseURL()}/tsume`);
    await engines(tsume);
    assert.equal(await tsume.locator(`#engine option[value="${FAIRY}"]`).isDisabled(), true, 'fairy has no mate search');
    assert.equal(await tsume.locator(`#engine option[value="${GPS}"]`).isDisabled(), false);
    assert.equal(await tsume.inputValue('[data-testid="engine-select"]'), GPS);
    await tsume.close();
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});

atBothSizes('a live analysis limit ends the search by itself; Space starts and stops; whole lines wrap', { timeout: 90_000 }, async (size, opts) => {
  const browser = await launch(opts);
  try {
    // The moves of the last line of multipv 1 the page heard before it
    // asked the engine to stop: after the stop the line shown has at least
    // those (the engine's report of the iteration it broke off is shorter,
    // and the page keeps the full line).
    let stopSent = false;
    let lastPV = -1;
    browser.context.on('page', (p) => p.on('websocket', (ws) => {
      ws.on('framesent', (f) => { try { if (JSON.parse(f.payload).type === 'stop') stopSent = true; } catch { /* not JSON */ } });
      ws.on('framereceived', (f) => {
        try {
          const m = JSON.parse(f.payload);
          if (!stopSent && m.type === 'info' && (m.multipv ?? 1) === 1 && Array.isArray(m.pv) && m.pv.length) lastPV = m.pv.length;
        } catch { /* not JSON */ }
      });
    }));
    const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d&ply=2');
    await engines(page);
    await page.selectOption('[data-testid="engine-select"]', FAIRY);
    await page.selectOption('[data-testid="multipv-select"]', '2');
    await page.selectOption('[data-testid="live-limit"]', 'd10');
    await page.keyboard.press('Space');
    await waitState(page, 'done');
    const depths = await page.locator('[data-testid="pv-line"]').evaluateAll((ls) => ls.map((l) => Number(l.dataset.depth)));
    assert.ok(depths.length === 2 && depths.every((d) => d >= 1 && d <= 10), `depths ${depths} within the limit`);
    // Whole lines: every move of a line is inside the panel (wrapped, not cut).
    const boxes = await page.locator('[data-testid="pv-line"]').first().evaluate((l) => {
      const r = l.getBoundingClientRect();
      return { right: r.right, moves: [...l.querySelectorAll('.pv-move')].map((m) => m.getBoundingClientRect().right) };
    });
    assert.ok(boxes.moves.length >= 5, `a depth-10 line shows ${boxes.moves.length} moves`);
    assert.ok(boxes.moves.every((r) => r <= boxes.right + 1), 'no move is cut off');
    await screenshot(page, `board-lines-${size}`);

    // Space starts an unlimited search and stops it; the lines stay whole.
    await page.selectOption('[data-testid="live-limit"]', '');
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('Space');
    await waitState(page, 'searching');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 2);
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="pv-line"]').dataset.depth) >= 8, null, { timeout: 30_000 });
    // Read the line and press Space in one go (lines change many times a second).
    const before = await page.evaluate(() => {
      const n = document.querySelector('[data-testid="pv-line"]').querySelectorAll('.pv-move').length;
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: ' ', bubbles: true }));
      return n;
    });
    await waitState(page, 'stopped');
    const after = await page.locator('[data-testid="pv-line"]').first().locator('.pv-move').count();
    assert.ok(stopSent && after >= 5 && after >= lastPV,
      `after Stop the line shows ${after} moves; the last line before the stop had ${lastPV} (${before} drawn when Space was pressed)`);
    await page.close();
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});

atBothSizes('PV clicks are not lost while the lines redraw', { timeout: 120_000 }, async (size, opts) => {
  const browser = await launch(opts);
  try {
    const frames = []; // what the page asked and heard, for a failure's report
    browser.context.on('page', (p) => p.on('websocket', (ws) => {
      ws.on('framesent', (f) => { try { const m = JSON.parse(f.payload); frames.push(`> ${m.type} ${m.id ?? ''} mpv=${m.multipv ?? ''}`); } catch { /* binary */ } });
      ws.on('framereceived', (f) => { try { const m = JSON.parse(f.payload); frames.push(`< ${m.type} ${m.id ?? ''} mpv=${m.multipv ?? ''} d=${m.depth ?? ''}`); } catch { /* binary */ } });
    }));
    const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d&ply=2');
    await engines(page);
    await page.selectOption('[data-testid="engine-select"]', FAIRY);
    await page.selectOption('[data-testid="multipv-select"]', '3');
    await page.click('[data-testid="analyze-toggle"]');
    for (let i = 0; i < 6; i++) {
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="pv-line"]').length === 3, null, { timeout: 30_000 })
        .catch(async () => {
          const seen = await page.evaluate(() => ({
            lines: document.querySelectorAll('[data-testid="pv-line"]').length,
            status: document.querySelector('#analysis-status')?.dataset.state,
            text: document.querySelector('#analysis-status')?.textContent,
            connection: document.querySelector('#connection')?.dataset.state,
            current: document.querySelector('[data-testid="move"].current')?.dataset.ply,
            multipv: document.querySelector('[data-testid="multipv-select"]')?.value,
            held: document.querySelector('#pv-lines')?.dataset.held,
          }));
          throw new Error(`round ${i + 1} of 6: not 3 lines after 30 s: ${JSON.stringify(seen)}; the last frames: ${frames.slice(-40).join(' | ')}`);
        });
      // As a player does: the mouse comes over the lines, then presses a
      // move of the second line and lets go after a pause.
      const panel = await page.evaluate(() => { const r = document.querySelector('#pv-lines').getBoundingClientRect(); return { x: r.x + 3, y: r.y + 3 }; });
      const target = () => page.evaluate(() => {
        const el = document.querySelector('[data-testid="pv-line"][data-multipv="2"] [data-testid="pv-move"]');
        el.scrollIntoView({ block: 'nearest' });
        const r = el.getBoundingClientRect();
        return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
      });
      if (size === 'phone') {
        // A finger: one tap on a move of the second line.
        const b = await target();
        await page.touchscreen.tap(b.x, b.y);
      } else {
        await page.mouse.move(panel.x, panel.y);
        const b = await target();
        await page.mouse.move(b.x, b.y);
        await page.mouse.down();
        await page.waitForFunction(() => true, null, { polling: 'raf' });
        await page.waitForTimeout(150);
        await page.mouse.up();
      }
      // The click played the line up to the move under the pointer (the
      // lines may have moved meanwhile): the board shows a later position.
      await page.waitForFunction(() => !document.querySelector('[data-testid="move"][data-ply="2"].current'), null, { timeout: 5_000 })
        .catch(() => { throw new Error(`click ${i + 1} of 6 was lost`); });
      if (size === 'desktop') await page.mouse.move(5, 5);
      // The press has ended and no mouse is over the lines: they follow the
      // search again (a phone's phantom mouse once froze them for good).
      await page.waitForFunction(() => !document.querySelector('#pv-lines').dataset.held, null, { timeout: 5_000 })
        .catch(() => { throw new Error(`round ${i + 1} of 6: the lines are still held after the press`); });
      // Back to move 2 (a synthetic click: the move list itself is redrawn
      // when the played line's notation arrives).
      await page.evaluate(() => document.querySelector('[data-testid="move"][data-ply="2"]').click());
      await page.waitForFunction(() => document.querySelector('[data-testid="move"][data-ply="2"].current'));
    }
    await page.close();
  } finally {
    await browser.close();
  }
});

atBothSizes('#pos applies when the URL changes', {}, async (size, opts) => {
  const browser = await launch(opts);
  try {
    const page = await openBoard(browser.context);
    await page.evaluate(() => { location.hash = '#pos=startpos_moves_2g2f_8c8d_2f2e&ply=3'; });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.waitForSelector('[data-square="2e"] .piece[data-piece="P"]');
    // The list shows a move in USI until usid's KIF of it arrives.
    await page.waitForFunction(() => /２五歩/.test(document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]')[2]?.textContent), null, { timeout: 30_000 })
      .catch(async () => assert.fail(`third move shows ${(await moveTexts(page))[2]}, want ２五歩`));
    await page.close();
  } finally {
    await browser.close();
  }
});

for (const [size, opts] of Object.entries(SIZES)) {
  test(`layout at ${size} size: lines and moves beside the board (desktop) or right under it (phone)`, { timeout: 60_000 }, async () => {
    const browser = await launch(opts);
    try {
      const page = await openBoard(browser.context, '#pos=startpos_moves_7g7f_3c3d_2g2f_4a3b_2f2e_8c8d&ply=6');
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 6);
      const box = async (sel) => page.locator(sel).boundingBox();
      const board = await box('[data-testid="board"]');
      const lines = await box('.engine-panel');
      const moves = await box('.moves-panel');
      if (size === 'desktop') {
        assert.ok(lines.x > board.x + board.width && moves.x > board.x + board.width, 'beside the board');
        assert.ok(moves.y + moves.height <= opts.height, `the move list is on screen (y ${moves.y}–${moves.y + moves.height})`);
      } else {
        const col = await box('.controls'); // the board's column ends with its buttons (the record box goes last)
        assert.ok(lines.y >= col.y + col.height && lines.y - (col.y + col.height) < 40, 'the lines right under the board');
        assert.ok(moves.y - (lines.y + lines.height) < 40, 'the moves right under the lines');
        assert.ok(moves.y < opts.height * 1.2, `the move list starts at y ${moves.y}`);
      }
      await screenshot(page, `layout-${size}`);
      await page.close();
    } finally {
      await browser.close();
    }
  });
}

atBothSizes('a record shows how the game ended; a variation is made the main line or deleted', { timeout: 60_000 }, async (size, opts) => {
  const browser = await launch({ ...opts, locale: 'ja-JP' });
  try {
    const page = await openBoard(browser.context);
    const kif = '手合割：平手\n先手：A\n後手：B\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３四歩(33)\n   3 投了\n';
    await page.fill('[data-testid="position-input"]', kif);
    await page.click('[data-testid="load-position"]');
    await page.waitForSelector('[data-testid="game-result"][data-end="resign"]');
    assert.equal(await page.textContent('[data-testid="game-result"]'), 'まで2手: 先手の投了で後手の勝ち');

    // A different second move opens a variation; make it the main line.
    await page.click('[data-testid="move"][data-ply="1"]');
    await page.waitForSelector('.board-area[data-ready="true"]');
    await page.click('[data-square="8c"]');
    await page.click('[data-square="8d"]');
    await page.waitForSelector('[data-testid="var-move"][data-usi="8c8d"].current');
    await page.click('[data-testid="promote-variation"]');
    await page.waitForSelector('[data-testid="move"][data-ply="2"][data-usi="8c8d"]');
    await page.waitForSelector('[data-testid="var-move"][data-usi="3c3d"]');
    assert.equal(await page.isHidden('[data-testid="delete-variation"]'), true, 'on the main line: nothing to delete');

    // Show the old line (now a variation) and delete it.
    await page.click('[data-testid="var-move"][data-usi="3c3d"]');
    await page.waitForSelector('[data-testid="delete-variation"]:not([hidden])');
    await page.click('[data-testid="delete-variation"]');
    await page.waitForFunction(() => !document.querySelector('[data-testid="var-move"]'));
    assert.deepEqual(await page.locator('[data-testid="move"]').evaluateAll((ls) => ls.map((l) => l.dataset.usi)), ['7g7f', '8c8d']);
    await page.close();
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});

atBothSizes('a reload keeps the record: header, comments and the shown move', { timeout: 60_000 }, async (size, opts) => {
  const browser = await launch(opts);
  try {
    const page = await openBoard(browser.context);
    const kif = '手合割：平手\n先手：羽生\n後手：藤井\n手数----指手---------消費時間--\n   1 ７六歩(77)\n*角道を開ける\n   2 ３四歩(33)\n   3 ２六歩(27)\n';
    await page.fill('[data-testid="position-input"]', kif);
    await page.click('[data-testid="load-position"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.click('[data-testid="move"][data-ply="1"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="move-comment"]').textContent === '角道を開ける');
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 3);
    await page.waitForSelector('[data-testid="move"][data-ply="1"].current');
    assert.match(await page.textContent('[data-testid="record-info"]'), /羽生.*藤井/);
    assert.equal(await page.textContent('[data-testid="move-comment"]'), '角道を開ける');
    // Another position loaded: the old record is not brought back.
    await page.click('[data-testid="reset"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 0);
    await page.reload();
    await page.waitForSelector('.board-area[data-ready="true"]');
    assert.equal(await page.isHidden('[data-testid="record-info"]'), true);
    await page.close();
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});

atBothSizes('a broken record offers the moves before the line in error', { timeout: 60_000 }, async (size, opts) => {
  const browser = await launch(opts);
  try {
    const page = await openBoard(browser.context);
    const kif = '手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n   2 ３四歩(33)\n   3 ９九飛(28)\n   4 ８四歩(83)\n';
    await page.fill('[data-testid="position-input"]', kif);
    await page.click('[data-testid="load-position"]');
    await page.waitForSelector('[data-testid="error-line"]');
    await page.waitForSelector('[data-testid="load-partial"]');
    assert.match(await page.textContent('[data-testid="load-partial"]'), /2 moves before line 5/);
    await page.click('[data-testid="load-partial"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 2);
    assert.equal(await page.isHidden('[data-testid="error"]'), true);
    await page.close();
    assert.deepEqual(takeProblems(browser.context).filter((p) => !/status of 422/.test(p)), []);
  } finally {
    await browser.close();
  }
});
