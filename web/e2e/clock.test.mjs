// One clock (issue 44): a game against fairy in sudden death through the
// page; during the game and after it, the engine's clock the page shows
// and the KIF the page downloads agree to the second (the time used, the
// KIF's running total, is the main time less the clock shown), and every
// move's KIF time is the server's charge for it in whole seconds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, clickSquare, takeProblems, baseURL, SIZES } from './lib.mjs';

const MAIN_S = 600;

async function openPlay(context) {
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
  await page.goto(`${baseURL()}/`);
  await page.waitForSelector('[data-testid="connection"][data-state="open"]');
  return page;
}

// humansTurn waits for the human's (Black's) turn, the board ready.
async function humansTurn(page) {
  await page.waitForFunction(() => document.querySelector('[data-testid="clock-b"]').dataset.running === 'true' &&
    document.querySelector('.board-area').dataset.ready === 'true', null, { timeout: 30_000 });
  return page.plays.at(-1);
}

// seconds reads a clock's text (m:ss, or s.t under ten seconds).
function seconds(text) {
  const m = /(\d+):(\d\d)/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : Math.ceil(Number(text));
}

// checkKif downloads the record and checks it against the engine's
// clock shown and the server's times.
async function checkKif(page, st) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  const kif = fs.readFileSync(await download.path(), 'utf8');
  const times = [...kif.matchAll(/\(\s*(\d+):(\d\d)\/(\d\d):(\d\d):(\d\d)\)/g)];
  assert.equal(times.length, st.moves.length, `a time for every move:\n${kif}`);
  times.forEach((m, i) => {
    assert.equal(Number(m[1]) * 60 + Number(m[2]), Math.floor(st.times_ms[i] / 1000), `move ${i + 1}: the KIF's time, the server's ${st.times_ms[i]} ms`);
  });
  const last = times.filter((_, i) => i % 2 === 1).at(-1); // the engine's (White's) last move
  const total = Number(last[3]) * 3600 + Number(last[4]) * 60 + Number(last[5]);
  const shown = await page.textContent('[data-testid="clock-w-time"]');
  assert.equal(total, MAIN_S - seconds(shown), `the engine's clock shows ${shown}; the KIF's total ${total} s (times ${st.times_ms})`);
  assert.equal(MAIN_S - seconds(shown), Math.floor((MAIN_S * 1000 - st.clock.w.main_ms) / 1000), 'the clock shown is the server\'s');
  return total;
}

test('the engine\'s clock on the page and the downloaded KIF agree to the second', { timeout: 180_000 }, async () => {
  const browser = await launch({ ...SIZES.desktop, locale: 'ja-JP' });
  try {
    const page = await openPlay(browser.context);
    await page.selectOption('[data-testid="play-side"]', 'b');
    await page.selectOption('[data-testid="play-mode"]', 'sudden');
    await page.fill('[data-testid="play-main-you"]', String(MAIN_S));
    await page.fill('[data-testid="play-main-engine"]', String(MAIN_S));
    await page.selectOption('[data-testid="play-level"]', 'ms:500');
    await page.click('[data-testid="play-begin"]');
    await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
    let st;
    for (let n = 0; n < 5; n++) {
      st = await humansTurn(page);
      assert.equal(st.status, 'playing');
      if (n >= 2) await checkKif(page, st); // during the game
      const res = await fetch(`${baseURL()}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ position: { sfen: st.sfen, moves: st.moves } }) });
      const plain = (await res.json()).legal_moves.filter((m) => /^[1-9][a-i][1-9][a-i]$/.test(m));
      const mv = plain[(n * 7) % plain.length];
      const before = page.plays.length;
      await clickSquare(page, mv.slice(0, 2));
      await clickSquare(page, mv.slice(2, 4));
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length > n, st.moves.length);
      assert.ok(page.plays.length >= before);
    }
    st = await humansTurn(page);
    await page.click('[data-testid="play-resign"]');
    await page.click('[data-testid="play-resign"]');
    await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
    const end = page.plays.at(-1);
    assert.equal(end.status, 'ended');
    const total = await checkKif(page, end);
    assert.ok(end.moves.length >= 10, `${end.moves.length} moves`);
    console.log(`engine's KIF total ${total} s, clock ${end.clock.w.main_ms} ms, times ${end.times_ms}`);
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});
