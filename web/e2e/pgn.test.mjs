// Chess records as lichess reads and writes them, on /chess: the Opera
// game with its usual annotations (variations nested two deep, comments,
// NAGs) and a game as lichess exports it ([%eval] and [%clk] comments)
// pasted into the board; its variations shown in the move list beside the
// move they replace, as shogi's are, comments under their move, NAG glyphs
// on it; a click into a variation shows it on the board; the PGN the page
// downloads parses back (POST /v1/records/parse) to the same tree. At
// desktop and phone size, with screenshots.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';

// The records are the Go tests' own (chess/pgn/testdata).
const testdata = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../chess/pgn/testdata');
const OPERA = fs.readFileSync(path.join(testdata, 'opera.pgn'), 'utf8');
const LICHESS = fs.readFileSync(path.join(testdata, 'lichess.pgn'), 'utf8');

const browsers = [];
after(async () => { for (const b of browsers) await b.close(); });

async function openChess(opts) {
  const b = await launch(opts);
  browsers.push(b);
  const page = await b.context.newPage();
  await page.goto(`${baseURL()}/chess`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  return { b, page };
}

// flat is a text without its white space (a move's number and the move are
// two spans, side by side).
const flat = (s) => s.replace(/\s+/g, '');

async function parse(record) {
  const r = await fetch(`${baseURL()}/v1/records/parse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ record }) });
  assert.equal(r.status, 200, await r.clone().text());
  return r.json();
}

// paste loads a record as a user does, and waits for its main line.
async function paste(page, text, moves) {
  await page.fill('[data-testid="position-input"]', text);
  await page.click('[data-testid="load-position"]');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length === n, moves);
}

// download clicks the page's download and returns the PGN it writes.
async function download(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  assert.match(dl.suggestedFilename(), /\.pgn$/);
  return (await dl.createReadStream()).toArray().then((c) => Buffer.concat(c).toString());
}

// sameTree: the downloaded PGN reads back to the game pasted: the same
// start, main line, final position, end, comments and tree of plies.
async function sameTree(text, original) {
  const [a, b] = [await parse(original), await parse(text)];
  for (const k of ['position', 'final_fen', 'end', 'comment', 'plies']) assert.deepEqual(b[k], a[k], `${k} read back from\n${text}`);
}

// beside: the element sits right under (or beside) its move, within a few pixels.
async function rowAfter(page, nodeSel, rowSel) {
  return page.evaluate(([m, r]) => {
    const move = document.querySelector(m).getBoundingClientRect();
    const row = document.querySelector(r).getBoundingClientRect();
    return Math.round(row.top - move.bottom);
  }, [nodeSel, rowSel]);
}

for (const [size, opts] of Object.entries(SIZES)) {
  test(`${size}: the Opera game's variations, comments and NAGs beside their moves; a click into a variation; downloaded and read back the same`, { timeout: 90_000 }, async () => {
    const { b, page } = await openChess({ ...opts, locale: 'en-US' });
    await paste(page, OPERA, 33);
    const list = '[data-testid="move-list"]';

    // Three variations of the main line, under 3... Bg4, 4... Bxf3 and 6... Nf6;
    // 4... dxe5's holds its own (6. Bc4) in parentheses.
    const vars = (await page.locator(`${list} [data-testid="variation"]`).allInnerTexts()).map(flat);
    assert.deepEqual(vars, [flat('3…exd4 is the main line. 4.Nxd4 Nf6'), flat('4…dxe5 5.Qxd8+ Kxd8 6.Nxe5 and White has won a pawn. (6.Bc4 f6 7.Be3) 6…Be6'),
      flat('6…Qf6 7.Qb3 b6')]);
    // Each right under the move it replaces.
    const bxf3 = await page.locator(`${list} [data-testid="move"][data-ply="8"]`).getAttribute('data-node');
    const next = await page.evaluate(([l, id]) => document.querySelector(`${l} [data-testid="move"][data-node="${id}"]`).nextElementSibling.dataset.testid, [list, bxf3]);
    assert.equal(next, 'variations', 'the variation of 4... Bxf3 follows it');

    // Comments in a row under their move; the game's under the start.
    const comments = await page.locator(`${list} [data-testid="comment"]`).allInnerTexts();
    assert.deepEqual(comments.map((c) => c.replace(/\s+/g, ' ')), [
      'The Opera Game, played in a box at the Paris opera during The Barber of Seville.', 'The Philidor Defence.',
      'This pin gives up the centre.', 'A queen sacrifice.']);
    const d6 = `${list} [data-testid="move"][data-ply="4"]`;
    const gap = await rowAfter(page, d6, `${list} [data-testid="comment"][data-node="${await page.locator(d6).getAttribute('data-node')}"]`);
    assert.ok(gap >= -1 && gap <= 2, `the comment of 2... d6 is ${gap} px under it`);
    assert.equal(await page.locator('[data-testid="move-comment"]').isHidden(), true, 'no second copy of the comment under the list');

    // NAG glyphs on their moves: 3... Bg4?!, 9... b5?, 10. Nxb5!, 12. O-O-O +−, 16. Qb8+!!.
    const nagOf = (ply) => page.locator(`${list} [data-testid="move"][data-ply="${ply}"] [data-testid="nag"]`).allInnerTexts();
    assert.deepEqual(await nagOf(6), ['?!']);
    assert.deepEqual(await nagOf(18), ['?']);
    assert.deepEqual(await nagOf(19), ['!']);
    assert.deepEqual(await nagOf(23), ['+−']);
    assert.deepEqual(await nagOf(31), ['!!']);

    // Into a variation: 5. Qxd8+ shows the queen on d8, the way back to the main line offered.
    await page.locator(`${list} [data-testid="var-move"]`, { hasText: 'Qxd8+' }).click();
    await page.waitForSelector(`${list} [data-testid="var-move"].current`);
    assert.match(await page.locator(`${list} [data-testid="var-move"].current`).innerText(), /Qxd8\+/);
    await page.waitForSelector('[data-testid="sq-d8"] .chess-piece.white');
    await page.waitForSelector('[data-testid="main-line"]:not([hidden])');
    // And deeper: 7. Be3 of the nested line.
    await page.locator(`${list} .sub [data-testid="var-move"]`, { hasText: 'Be3' }).click();
    await page.waitForSelector('[data-testid="sq-e3"] .chess-piece.white');
    await screenshot(page, `chess-pgn-opera-${size}`);

    await sameTree(await download(page), OPERA);
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  });

  test(`${size}: a game as lichess exports it: its variations and glyphs shown, clocks and evaluations kept through the download`, { timeout: 90_000 }, async () => {
    const { b, page } = await openChess({ ...opts, locale: 'en-US' });
    await paste(page, LICHESS, 12);
    const list = '[data-testid="move-list"]';
    const vars = (await page.locator(`${list} [data-testid="variation"]`).allInnerTexts()).map(flat);
    assert.deepEqual(vars, [flat('2.Nf3 Nc6 3.Bb5'), flat('5.Ne2 Bg7 6.Nbc3')]);
    assert.deepEqual(await page.locator(`${list} [data-testid="move"][data-ply="3"] [data-testid="nag"]`).allInnerTexts(), ['?!']);
    assert.deepEqual(await page.locator(`${list} [data-testid="move"][data-ply="9"] [data-testid="nag"]`).allInnerTexts(), ['??']);
    // lichess's words stay; its commands are read, not shown as text.
    const comments = await page.locator(`${list} [data-testid="comment"]`).allInnerTexts();
    assert.deepEqual(comments, ['(0.28 → -0.26) Inaccuracy. Nf3 was best.', '(-0.25 → -3.10) Blunder. Ne2 was best.', 'White resigns.']);
    assert.doesNotMatch(await page.locator(list).innerText(), /%clk|%eval/);
    await page.locator(`${list} [data-testid="var-move"]`, { hasText: 'Bb5' }).click();
    await page.waitForSelector('[data-testid="sq-b5"] .chess-piece.white');
    await screenshot(page, `chess-pgn-lichess-${size}`);

    const text = await download(page);
    assert.match(text, /1\. e4 \{ \[%eval 0\.36\] \[%clk 0:03:00\] \} 1\.\.\. e5 \{ \[%eval 0\.28\] \[%clk 0:03:00\] \}/);
    await sameTree(text, LICHESS);
    assert.deepEqual(takeProblems(b.context), [], 'the page logged errors');
  });
}
