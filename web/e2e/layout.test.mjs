// Every page of every game as a reader sees it, at desktop and phone size,
// in Japanese and in English (issue 37): no label cut or broken mid-word
// (textProblems), no serious or critical accessibility violation (axe-core),
// on a phone the board, the side to move and the best line on one screen,
// the evaluation graph filled from its 0 line under the move list, the
// record box under the board, the play clocks beside the board. Real
// chromium, real usid and engines (fairy analyses, gps solves).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openBoard, screenshot, takeProblems, baseURL, SIZES, SCREENSHOTS, textProblems, axeViolations, clickSquare } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const GAME = fs.readFileSync(path.join(here, '../../kifu/testdata/kfw-game-a.kif'), 'utf8'); // 38 moves
const ANALYSIS = process.env.USID_ANALYSIS_ENGINE || 'fairy';
const MATE = process.env.USID_MATE_ENGINE || 'gps';
const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';

// box is an element's place on the page at the top of it (not scrolled).
const box = (page, sel) => page.locator(sel).first().evaluate((el) => {
  const r = el.getBoundingClientRect();
  return { x: r.x + scrollX, y: r.y + scrollY, right: r.right + scrollX, bottom: r.bottom + scrollY, width: r.width, height: r.height };
});

// read checks what a reader meets on the page as it is: every text whole,
// nothing axe calls serious or critical. Problems are collected, not
// thrown, so one run shows every page's.
async function read(page, what, problems) {
  for (const p of await textProblems(page)) problems.push(`${what}: ${p}`);
  for (const v of await axeViolations(page)) problems.push(`${what}: axe ${v}`);
  // Nothing makes the page wider than the window (a phone would scroll sideways, or zoom out).
  const w = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, window: document.documentElement.clientWidth }));
  if (w.page > w.window) problems.push(`${what}: the page is ${w.page} px wide in a ${w.window} px window`);
}

// onFirstScreen checks that each selector's element lies in the first
// screenful of the page (the page scrolled to its top).
async function onFirstScreen(page, what, lang, sels, problems) {
  await page.evaluate(() => scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOTS, `layout-${what.replaceAll(' ', '-')}-${lang}-screen.png`) });
  const vh = await page.evaluate(() => innerHeight);
  for (const sel of sels) {
    const b = await box(page, sel);
    if (b.bottom > vh + 0.5 || b.y < -0.5) problems.push(`${what}: ${sel} at y ${Math.round(b.y)}–${Math.round(b.bottom)}, below the first screen (${vh})`);
  }
}

for (const [lang, locale] of [['ja', 'ja-JP'], ['en', 'en-US']]) {
  for (const [size, opts] of Object.entries(SIZES)) {
    const phone = size === 'phone';
    const name = `${lang}-${size}`;

    test(`layout ${lang} ${size}: the shogi board with a game, its analysis, a variation and lines`, { timeout: 240_000 }, async () => {
      const browser = await launch({ ...opts, locale, bypassCSP: true });
      const problems = [];
      try {
        const page = await openBoard(browser.context);
        await page.fill('[data-testid="position-input"]', GAME);
        await page.click('[data-testid="load-position"]');
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
        await page.waitForFunction((e) => [...document.querySelectorAll('#engine option')].some((o) => o.value === e), ANALYSIS);
        await page.selectOption('[data-testid="engine-select"]', ANALYSIS);
        await read(page, 'board, a game loaded', problems);

        await page.selectOption('[data-testid="game-limit"]', 'd8');
        await page.click('[data-testid="analyse-game"]');
        await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'done', null, { timeout: 120_000 });
        // A variation at move 10, the lines running for it.
        await page.click('[data-testid="move"][data-ply="9"]');
        await page.waitForSelector('.board-area[data-ready="true"]');
        await clickSquare(page, '1c');
        await clickSquare(page, '1d');
        await page.waitForSelector('[data-testid="variation"]');
        await page.waitForSelector('.board-area[data-ready="true"]');
        await page.click('[data-testid="analyze-toggle"]');
        await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
        await page.waitForFunction(() => Number(document.querySelector('[data-testid="pv-line"]').dataset.depth) >= 6, null, { timeout: 30_000 });
        await read(page, 'board, the game analysed, a variation, lines', problems);

        // The graph: filled from its 0 line, large, right under the moves.
        const fill = await page.evaluate(() => {
          const svg = document.querySelector('[data-testid="eval-graph"] svg');
          const mid = svg.viewBox.baseVal.height / 2;
          const polys = [...svg.querySelectorAll('polygon')].map((p) => [...p.points]);
          return { mid, n: polys.length, ends: polys.map((pts) => [pts[0].y, pts.at(-1).y]) };
        });
        if (!fill.n) problems.push('graph: nothing filled after the game analysis');
        for (const [a, b] of fill.ends) if (a !== fill.mid || b !== fill.mid) problems.push(`graph: a fill runs from y ${a}/${b}, not from the 0 line (${fill.mid})`);
        // The three read in one step: the lines still running may show a
        // move's comment between two reads, moving the graph down (CI saw
        // a graph "32 px above" a comment read after it).
        const { graph, moves, comment } = await page.evaluate(() => {
          const at = (el) => {
            const r = el.getBoundingClientRect();
            return { x: r.x + scrollX, y: r.y + scrollY, right: r.right + scrollX, bottom: r.bottom + scrollY, width: r.width, height: r.height };
          };
          const c = document.querySelector('[data-testid="move-comment"]');
          const moves = at(document.querySelector('[data-testid="move-list"]'));
          return { graph: at(document.querySelector('[data-testid="eval-graph"] .g-plot')), moves, comment: c.checkVisibility() ? at(c) : moves };
        });
        if (graph.height < (phone ? 130 : 170)) problems.push(`graph: ${Math.round(graph.width)}×${Math.round(graph.height)}, too small`);
        const under = graph.y - Math.max(moves.bottom, comment.bottom);
        if (under < 0 || under > 60 || Math.abs(graph.right - moves.right) > 40) problems.push(`graph: not right under the move list (${Math.round(under)} px below it, right edges ${Math.round(graph.right)}/${Math.round(moves.right)})`);

        // The result fills its row.
        const result = await box(page, '[data-testid="game-result"]');
        if (result.width < moves.width - 20) problems.push(`move list: the result takes ${Math.round(result.width)} of ${Math.round(moves.width)} px`);

        const board = await box(page, '[data-testid="board"]');
        if (!phone) {
          // More than a handful of moves at once.
          const rows = await page.evaluate(() => {
            const l = document.querySelector('[data-testid="move-list"]');
            return l.clientHeight / document.querySelector('[data-testid="move"]').getBoundingClientRect().height;
          });
          if (rows < 16) problems.push(`move list: ${rows.toFixed(1)} rows shown`);
          // The record box under the board, not at the foot of the side column.
          const load = await box(page, '.position-panel');
          const col = await box(page, '.board-col');
          if (load.right > col.right + 1 || load.y < board.bottom) problems.push(`record box at x ${Math.round(load.x)}–${Math.round(load.right)} y ${Math.round(load.y)}: not under the board (column ${Math.round(col.x)}–${Math.round(col.right)})`);
        } else {
          // A line is whole, wrapped (a 26-ply line takes six rows): what the
          // first screen must show is where it starts, its score and first moves.
          await onFirstScreen(page, 'phone board', lang, ['[data-testid="board"]', '.board-area .hand.to-move', '[data-testid="pv-score"]'], problems);
        }
        await page.evaluate(() => scrollTo(0, 0));
        await screenshot(page, `layout-board-${name}`);
        await page.click('[data-testid="analyze-toggle"]');
        await page.waitForFunction(() => ['stopped', 'done'].includes(document.querySelector('[data-testid="analysis-status"]').dataset.state));

        // A game against the engine: the clocks beside the board, the
        // player's in byoyomi at once.
        await page.click('[data-testid="reset"]');
        await page.fill('[data-testid="play-main-you"]', '0');
        await page.fill('[data-testid="play-extra-you"]', '30');
        await page.click('[data-testid="play-begin"]');
        await page.waitForSelector('[data-testid="clock-b"][data-running="true"]', { timeout: 30_000 });
        await read(page, 'board, playing', problems);
        const wrap = await box(page, '.board-wrap');
        for (const side of ['b', 'w']) {
          const c = await box(page, `[data-testid="clock-${side}"]`);
          const inside = c.x >= wrap.x - 1 && c.right <= wrap.right + 1 && c.y >= wrap.y - 60 && c.bottom <= wrap.bottom + 60;
          if (!inside) problems.push(`clock ${side} at x ${Math.round(c.x)}–${Math.round(c.right)} y ${Math.round(c.y)}–${Math.round(c.bottom)}: not beside the board (${Math.round(wrap.x)}–${Math.round(wrap.right)}, ${Math.round(wrap.y)}–${Math.round(wrap.bottom)})`);
        }
        await page.evaluate(() => scrollTo(0, 0));
        await screenshot(page, `layout-play-${name}`);
        // Resigning asks first: a second click confirms (issue 44).
        await page.click('[data-testid="play-resign"]');
        await page.click('[data-testid="play-resign"]');
        await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
        await read(page, 'board, the game over', problems);
        assert.deepEqual(takeProblems(browser.context), [], 'the page logged errors');
        await page.close();
      } finally {
        await browser.close();
      }
      assert.deepEqual(problems, [], `${problems.length} problems`);
    });

    test(`layout ${lang} ${size}: chess, othello and tsume pages`, { timeout: 240_000 }, async () => {
      const browser = await launch({ ...opts, locale, bypassCSP: true });
      const problems = [];
      try {
        // Chess: the lines of an analysis.
        let page = await browser.context.newPage();
        await page.goto(`${baseURL()}/chess`);
        await page.waitForSelector('[data-testid="sq-e1"] [data-piece="K"]');
        await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
        await read(page, 'chess', problems);
        await page.click('[data-testid="analyze-toggle"]');
        await page.waitForSelector('[data-testid="pv-line"]', { timeout: 30_000 });
        await read(page, 'chess, lines', problems);
        const cb = await box(page, '[data-testid="board"]');
        const vw = await page.evaluate(() => document.documentElement.clientWidth);
        if (cb.right > vw || cb.x < 0) problems.push(`chess: the board spans x ${Math.round(cb.x)}–${Math.round(cb.right)} of ${vw}`);
        // The side to move is marked beside the board.
        const turn = await page.evaluate(() => {
          const a = document.querySelector('.board-area.chess-area');
          const s = getComputedStyle(a, '::after');
          return { turn: a.dataset.turn, content: s.content, top: s.top, bottom: s.bottom, bg: s.backgroundColor };
        });
        if (turn.content === 'none' || turn.turn !== 'w' || turn.bottom !== '0px' || turn.bg !== 'rgb(255, 255, 255)') problems.push(`chess: no mark of the side to move beside the board (${JSON.stringify(turn)})`);
        if (phone) await onFirstScreen(page, 'phone chess', lang, ['[data-testid="board"]', '[data-testid="pv-score"]'], problems);
        await page.evaluate(() => scrollTo(0, 0));
        await screenshot(page, `layout-chess-${name}`);
        await page.click('[data-testid="analyze-toggle"]');
        await page.close();

        // Othello: a move played.
        page = await browser.context.newPage();
        await page.goto(`${baseURL()}/othello`);
        await page.waitForSelector('.board-area[data-ready="true"]');
        await page.click('[data-testid="sq-f5"]');
        await page.waitForSelector('.board-area[data-ready="true"][data-turn="w"]');
        await read(page, 'othello', problems);
        const ob = await box(page, '[data-testid="board"]');
        if (ob.right > vw || ob.x < 0) problems.push(`othello: the board spans x ${Math.round(ob.x)}–${Math.round(ob.right)} of ${vw}`);
        await screenshot(page, `layout-othello-${name}`);
        await page.close();

        // Tsume: solved by the engine, then tried by hand (a wrong move's feedback).
        page = await browser.context.newPage();
        await page.goto(`${baseURL()}/tsume#sfen=${SEED.replaceAll(' ', '_')}`);
        await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
        await page.selectOption('[data-testid="engine-select"]', MATE);
        await page.waitForSelector('[data-testid="board"] .piece');
        await read(page, 'tsume', problems);
        await page.click('[data-testid="solve"]');
        await page.waitForSelector('[data-testid="tsume-result"][data-result="mate"]', { timeout: 60_000 });
        await read(page, 'tsume, solved', problems);
        await page.click('[data-testid="try"]');
        await page.waitForSelector('.board-area[data-ready="true"]', { timeout: 30_000 });
        await clickSquare(page, '5i');
        await clickSquare(page, '5h');
        await page.waitForSelector('[data-testid="try-feedback"][data-state="wrong"]', { timeout: 30_000 });
        await read(page, 'tsume, trying', problems);
        if (phone) await onFirstScreen(page, 'phone tsume', lang, ['[data-testid="board"]', '[data-testid="try-feedback"]'], problems);
        await page.evaluate(() => scrollTo(0, 0));
        await screenshot(page, `layout-tsume-${name}`);
        assert.deepEqual(takeProblems(browser.context), [], 'the pages logged errors');
        await page.close();
      } finally {
        await browser.close();
      }
      assert.deepEqual(problems, [], `${problems.length} problems`);
    });
  }
}
