// One clock (issue 44): a game against fairy (shogi, KIF) and one against
// stockfish (chess, PGN) in sudden death through the page; during the game
// and after it, the engine's clock the page shows and the record the page
// downloads agree to the second (KIF: the time used, its running total, is
// the main time less the clock shown; PGN: [%clk] is the clock), and every
// move's time in the record is the server's charge for it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, clickSquare, takeProblems, baseURL, SIZES } from './lib.mjs';

const MAIN_S = 600;

async function openPlay(context, path) {
  const page = await context.newPage();
  page.plays = [];
  await page.routeWebSocket(/\/v1\/ws$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((payload) => {
      try {
        const m = JSON.parse(payload);
        if (m.type === 'play') page.plays.push(m.play);
      } catch { /* not JSON */ }
      ws.send(payload);
    });
  });
  await page.goto(`${baseURL()}${path}`);
  await page.waitForSelector('[data-testid="connection"][data-state="open"]');
  await page.waitForSelector('.board-area[data-ready="true"]');
  return page;
}

// humansTurn waits for the human's turn, the board ready.
async function humansTurn(page, human) {
  await page.waitForFunction((h) => document.querySelector(`[data-testid="clock-${h}"]`).dataset.running === 'true' &&
    document.querySelector('.board-area').dataset.ready === 'true', human, { timeout: 30_000 });
  return page.plays.at(-1);
}

// seconds reads a clock's text (m:ss, or s.t under ten seconds) as the
// seconds begun.
function seconds(text) {
  const m = /(\d+):(\d\d)/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : Math.ceil(Number(text));
}

// engineParity is the parity of the engine's moves' indexes (the side
// to move first has the even ones).
const engineParity = (st) => (st.human === (st.first || 'b') ? 1 : 0);

const hms = (h, m, s) => Number(h) * 3600 + Number(m) * 60 + Number(s);

// download is the record the page downloads.
async function download(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  return fs.readFileSync(await dl.path(), 'utf8');
}

// checkKIF: every move's time the server's in whole seconds; the engine's
// running total the main time less its clock shown.
function checkKIF(kif, st, shown) {
  const times = [...kif.matchAll(/\(\s*(\d+):(\d\d)\/(\d\d):(\d\d):(\d\d)\)/g)];
  assert.equal(times.length, st.moves.length, `a time for every move:\n${kif}`);
  times.forEach((m, i) => assert.equal(hms(0, m[1], m[2]), Math.floor(st.times_ms[i] / 1000), `move ${i + 1}: the KIF's time, the server's ${st.times_ms[i]} ms`));
  const eng = engineParity(st);
  const last = times.filter((_, i) => i % 2 === eng).at(-1);
  const total = hms(last[3], last[4], last[5]);
  assert.equal(total, MAIN_S - seconds(shown), `the engine's clock shows ${shown}; the KIF's total ${total} s (times ${st.times_ms})`);
}

// checkPGN: every move's [%emt] the server's time, its [%clk] the
// server's clock after it; the engine's clock shown its last [%clk].
function checkPGN(pgn, st, shown) {
  const cmds = [...pgn.matchAll(/\[%clk (\d+):(\d\d):(\d\d)(\.\d+)?\]\s*\[%emt (\d+):(\d\d):(\d\d)(\.\d+)?\]/g)];
  assert.equal(cmds.length, st.moves.length, `a clock and a time for every move:\n${pgn}`);
  const ms = (h, m, s, f) => hms(h, m, s) * 1000 + Math.round(Number(f || 0) * 1000);
  cmds.forEach((c, i) => {
    assert.equal(ms(c[5], c[6], c[7], c[8]), st.times_ms[i], `move ${i + 1}: %emt`);
    assert.equal(ms(c[1], c[2], c[3], c[4]), st.clocks_ms[i], `move ${i + 1}: %clk`);
  });
  const eng = engineParity(st);
  const clk = cmds.filter((_, i) => i % 2 === eng).at(-1);
  assert.equal(Math.ceil(ms(clk[1], clk[2], clk[3], clk[4]) / 1000), seconds(shown), `the engine's clock shows ${shown}; its last %clk ${clk[0]}`);
}

for (const g of [
  { name: 'fairy (shogi, KIF)', path: '/', human: 'b', engine: 'w', check: checkKIF, field: 'sfen' },
  { name: 'stockfish (chess, PGN)', path: '/chess', human: 'w', engine: 'b', check: checkPGN, field: 'fen' },
]) {
  test(`${g.name}: the engine's clock on the page and the downloaded record agree to the second`, { timeout: 180_000 }, async () => {
    const browser = await launch({ ...SIZES.desktop, locale: 'ja-JP' });
    try {
      const page = await openPlay(browser.context, g.path);
      await page.selectOption('[data-testid="play-side"]', g.human);
      await page.selectOption('[data-testid="play-mode"]', 'sudden');
      await page.fill('[data-testid="play-main-you"]', String(MAIN_S));
      await page.fill('[data-testid="play-main-engine"]', String(MAIN_S));
      await page.selectOption('[data-testid="play-level"]', 'ms:500');
      await page.click('[data-testid="play-begin"]');
      await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
      const check = async (st) => g.check(await download(page), st, await page.textContent(`[data-testid="clock-${g.engine}-time"]`));
      for (let n = 0; n < 5; n++) {
        const st = await humansTurn(page, g.human);
        assert.equal(st.status, 'playing');
        if (n >= 2) await check(st); // during the game
        const res = await fetch(`${baseURL()}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ position: { [g.field]: st[g.field], moves: st.moves } }) });
        const plain = (await res.json()).legal_moves.filter((m) => /^[1-9a-h][1-9a-i][1-9a-h][1-9a-i]$/.test(m));
        const mv = plain[(n * 7) % plain.length];
        await clickSquare(page, mv.slice(0, 2));
        await clickSquare(page, mv.slice(2, 4));
        // The engine's answer (or the end) came from the server.
        const deadline = Date.now() + 30_000;
        while (page.plays.at(-1).moves.length < st.moves.length + 2 && page.plays.at(-1).status === 'playing') {
          assert.ok(Date.now() < deadline, `no answer to ${mv} within 30 s`);
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      await humansTurn(page, g.human);
      await page.click('[data-testid="play-resign"]');
      await page.click('[data-testid="play-resign"]');
      await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
      const end = page.plays.at(-1);
      assert.equal(end.status, 'ended');
      assert.ok(end.moves.length >= 10, `${end.moves.length} moves`);
      await check(end);
      console.log(`${g.name}: the engine's clock ${end.clock[g.engine].main_ms} ms, times ${end.times_ms}`);
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}
