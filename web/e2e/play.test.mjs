// Playing the engine on the analysis board (/), against a real usid and
// fairy-stockfish: a game at byoyomi 1 s through the page (the human's
// moves legal ones the test picks, clicked on the board), every clock the
// page shows checked against the server's play events, the engine's time
// per move within byoyomi + 0.3 s, a reload and a dropped connection that
// resume the game, the result and the KIF at the end; a game lost on time;
// a handicap game at Fischer increment with pondering and a false
// declaration; a game from the board's position won by 入玉宣言; and one
// drawn by 千日手. Desktop and phone sizes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, clickSquare, screenshot, takeProblems, baseURL, SIZES } from './lib.mjs';
import { checkLanguage } from './lang.mjs';

const ENGINE = process.env.USID_PLAY_ENGINE || 'fairy';
const HUMAN_MOVES = Number(process.env.USID_PLAY_MOVES || 8); // then the human resigns

// openPlay opens the board with the play events of its WebSocket recorded
// (page.plays: every "play" payload, in order). The socket passes through
// the test (page.sockets), so that the test can cut it.
async function openPlay(context, hash = '') {
  const page = await context.newPage();
  page.plays = [];
  page.playSockets = []; // the socket each of page.plays came on
  page.sockets = [];
  await page.routeWebSocket(/\/v1\/ws$/, (ws) => {
    const server = ws.connectToServer();
    const n = page.sockets.length;
    server.onMessage((payload) => {
      try {
        const m = JSON.parse(payload);
        if (m.type === 'play') { page.plays.push(m.play); page.playSockets.push(n); }
      } catch { /* not JSON: passed on all the same */ }
      ws.send(payload);
    });
    page.sockets.push(ws);
  });
  // Every clock the page shows for a play event (the panel's data-seq
  // counts them), told to the test as it is shown, across reloads.
  page.shown = [];
  await page.exposeBinding('usidClocksShown', (_, c) => { page.shown.push(c); });
  await page.addInitScript(() => {
    addEventListener('DOMContentLoaded', () => {
      const panel = document.querySelector('[data-testid="play-panel"]');
      let last = panel.dataset.seq;
      const clock = (side) => {
        const d = document.querySelector(`[data-testid="clock-${side}"]`).dataset;
        return { mainMs: Number(d.mainMs), byoyomiMs: Number(d.byoyomiMs), running: d.running === 'true' };
      };
      new MutationObserver(() => {
        if (panel.dataset.seq === last) return;
        last = panel.dataset.seq;
        window.usidClocksShown({ game: panel.dataset.game, b: clock('b'), w: clock('w') });
      }).observe(panel, { attributes: true, attributeFilter: ['data-seq'] });
    });
  });
  await page.goto(`${baseURL()}/${hash}`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction((e) => [...document.querySelectorAll('#engine option')].some((o) => o.value === e), ENGINE);
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  return page;
}

// checkClocks waits until the page has shown the latest play event and
// checks its clocks against it: the server's values, the running side, and
// a shown time no more than the server's. The test sees an event as it is
// passed to the page, a moment before the page shows it; the same game's
// earlier event may still be shown then, so the wait is for the event's
// clocks (at most 10 s: a page that never shows them fails below).
async function checkClocks(page) {
  const last = page.plays[page.plays.length - 1];
  await page.waitForFunction((want) => {
    if (document.querySelector('[data-testid="play-panel"]').dataset.game !== want.game) return false;
    return ['b', 'w'].every((side) => {
      const d = document.querySelector(`[data-testid="clock-${side}"]`).dataset;
      return Number(d.mainMs) === want.clock[side].main_ms && Number(d.byoyomiMs) === want.clock[side].byoyomi_ms &&
        d.running === String(want.clock.running === side);
    });
  }, { game: last.game, clock: last.clock }, { timeout: 10_000 }).catch(() => {});
  const shown = await page.evaluate(() => ['b', 'w'].map((s) => ({ ...document.querySelector(`[data-testid="clock-${s}"]`).dataset })));
  const now = page.plays[page.plays.length - 1];
  if (now !== last) return checkClocks(page); // another came meanwhile
  for (const [i, side] of ['b', 'w'].entries()) {
    const c = now.clock[side];
    const s = shown[i];
    assert.equal(Number(s.mainMs), c.main_ms, `${side} main time shown vs the server's`);
    assert.equal(Number(s.byoyomiMs), c.byoyomi_ms, `${side} byoyomi shown vs the server's`);
    assert.equal(s.running, String(now.clock.running === side), `${side} running`);
    const full = c.main_ms + (now.time_control[side].byoyomi_ms ? c.byoyomi_ms : 0);
    assert.ok(Number(s.shownMs) <= full, `${side} shows ${s.shownMs} ms, more than the server's ${full}`);
  }
  return now;
}

// checkEveryClock checks that the page showed the clocks of every play
// event the server sent, in order, and no others. Only the last events on
// a socket the page left (a reload, a dropped connection) may be missing:
// they can reach a page that is going away. Returns the number of events.
function checkEveryClock(page) {
  const clocks = (p) => ({ game: p.game,
    b: { mainMs: p.clock.b.main_ms, byoyomiMs: p.clock.b.byoyomi_ms, running: p.clock.running === 'b' },
    w: { mainMs: p.clock.w.main_ms, byoyomiMs: p.clock.w.byoyomi_ms, running: p.clock.running === 'w' } });
  // The events of each socket, in order (one socket's end comes before the next's start).
  const groups = [];
  page.plays.forEach((p, i) => {
    const s = page.playSockets[i];
    if (!groups.length || groups.at(-1).sock !== s) groups.push({ sock: s, events: [] });
    groups.at(-1).events.push(JSON.stringify(clocks(p)));
  });
  const shown = page.shown.map((c) => JSON.stringify(c));
  // Each left socket shows a prefix of its events (the longest that fits
  // first), the last socket all of its own; together exactly what was shown.
  const fits = (g, j) => {
    if (g === groups.length) return j === shown.length;
    const ev = groups[g].events;
    let k = 0;
    while (k < ev.length && shown[j + k] === ev[k]) k++;
    if (g === groups.length - 1) return k === ev.length && j + k === shown.length;
    for (let c = k; c >= 0; c--) if (fits(g + 1, j + c)) return true;
    return false;
  };
  assert.ok(fits(0, 0), `the clocks shown are not the server's, event for event:\nserver ${JSON.stringify(groups)}\nshown ${JSON.stringify(shown)}`);
  return page.plays.length;
}

// humanMove waits for the human's turn and plays a legal board move
// (no drop, no promotion choice) picked by the test.
// humansTurn waits for the human's turn (or the game's end) and returns
// the server's last play event, its clocks checked against the page's.
async function humansTurn(page) {
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid="play-panel"]');
    // The board knows the shown position's legal moves (it has none from
    // the moment the engine's move is shown until usid's verdict of it).
    return p.dataset.status !== 'playing' || (document.querySelector('[data-testid="clock-b"]').dataset.running === 'true' &&
      document.querySelector('.board-area').dataset.ready === 'true');
  }, null, { timeout: 30_000 });
  return checkClocks(page);
}

// humanMove waits for the human's turn and plays a legal board move
// (no drop, no promotion choice) picked by the test.
async function humanMove(page, n) {
  const st = await humansTurn(page);
  if (st.status !== 'playing') return st;
  const res = await fetch(`${baseURL()}/v1/validate`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ position: { sfen: st.sfen, moves: st.moves } }) });
  const v = await res.json();
  const plain = v.legal_moves.filter((m) => /^[1-9][a-i][1-9][a-i]$/.test(m) && !v.legal_moves.includes(`${m}+`));
  const mv = plain[(n * 7) % plain.length];
  const before = page.plays.length;
  await clickSquare(page, mv.slice(0, 2));
  await clickSquare(page, mv.slice(2, 4));
  try {
    await until(() => page.plays.length > before, 'the server took the move');
  } catch (e) {
    // What the page showed, for a failure that only a busy machine makes.
    const seen = await page.evaluate(() => ({
      panel: { ...document.querySelector('[data-testid="play-panel"]').dataset },
      error: document.querySelector('#play-error')?.textContent,
      board: { ...document.querySelector('.board-area').dataset },
      selected: document.querySelector('.board-area .selected')?.dataset?.square,
      moves: document.querySelectorAll('[data-testid="move-list"] [data-testid="move"]').length,
    }));
    throw new Error(`${e.message}: move ${n} ${mv} (legal ${plain.length}); the server's last: ${JSON.stringify({ ...st, moves_kif: undefined })}; the page: ${JSON.stringify(seen)}; frames after: ${JSON.stringify(page.plays.slice(before))}`);
  }
  return st;
}

// until polls a condition of the test's own state (the recorded frames).
async function until(cond, what, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function setTime(page, { mode, youMain, youExtra, engMain, engExtra }) {
  await page.selectOption('[data-testid="play-mode"]', mode);
  await page.fill('[data-testid="play-main-you"]', String(youMain));
  await page.fill('[data-testid="play-main-engine"]', String(engMain));
  if (mode !== 'sudden') {
    await page.fill('[data-testid="play-extra-you"]', String(youExtra));
    await page.fill('[data-testid="play-extra-engine"]', String(engExtra));
  }
}

for (const [size, opts] of Object.entries(SIZES)) {
  test(`${size}: a game against ${ENGINE} at byoyomi 1 s, clocks as the server counts them, reload, resign, result and KIF`, { timeout: 300_000 }, async () => {
    const browser = await launch({ ...opts, locale: 'ja-JP' });
    try {
      const page = await openPlay(browser.context);
      await page.selectOption('[data-testid="play-side"]', 'b');
      await setTime(page, { mode: 'byoyomi', youMain: 120, youExtra: 1, engMain: 0, engExtra: 1 });
      // The levels are the engine's (GET /v1/engines): fairy's over its Skill Level.
      assert.equal(await page.getAttribute('[data-testid="play-level"]', 'data-kind'), 'level');
      // Desktop: the weakest level (the choices run from strong to weak).
      // Phone: the other kind of level, a time per move (0.5 s), which also
      // leaves the engine room on a loaded machine (a phone-sized Chromium
      // at 2x costs the most CPU of these tests).
      const low = size === 'desktop'
        ? await page.evaluate(() => [...document.querySelectorAll('#play-level option')].filter((o) => o.value.startsWith('lvl:')).pop().value)
        : 'ms:500';
      await page.selectOption('[data-testid="play-level"]', low);
      await page.click('[data-testid="play-begin"]');
      await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
      let st;
      for (let n = 0; n < HUMAN_MOVES; n++) {
        st = await humanMove(page, n);
        if (st.status !== 'playing') break;
        if (n === 2) {
          await checkLanguage(page, 'ja', 'a game in progress');
          await screenshot(page, `play-${size}`);
          // A reload: the game comes back with its moves and clocks.
          const game = st.game;
          await page.waitForFunction(() => document.querySelector('[data-testid="clock-w"]').dataset.running === 'true' ||
            document.querySelector('[data-testid="clock-b"]').dataset.running === 'true');
          await page.reload();
          await page.waitForSelector(`[data-testid="play-panel"][data-game="${game}"][data-status="playing"]`);
        }
        if (n === 4) {
          // A dropped connection: the page connects again and the game goes
          // on where it was, its clocks the server's.
          const sockets = page.sockets.length;
          const before = page.plays.length;
          await page.sockets.at(-1).close({ code: 1012, reason: 'test: drop' });
          await until(() => page.sockets.length > sockets, 'the page opened a new WebSocket');
          await page.waitForSelector('[data-testid="connection"][data-state="open"]', { timeout: 30_000 });
          await until(() => page.plays.length > before, 'the game was resumed on the new connection');
          assert.equal(page.plays.at(-1).game, st.game, 'the same game');
          assert.equal(page.plays.at(-1).status, 'playing');
          await checkClocks(page);
        }
      }
      // Every engine move within byoyomi + 0.3 s, as the server counted it.
      const last = page.plays[page.plays.length - 1];
      last.times_ms.forEach((ms, i) => { if (i % 2 === 1) assert.ok(ms <= 1300, `engine move ${i + 1} took ${ms} ms`); });
      if (last.status === 'playing') {
        await page.waitForSelector('[data-testid="clock-b"][data-running="true"]');
        // Resigning asks first: a second click confirms (issue 44).
        await page.click('[data-testid="play-resign"]');
        await page.click('[data-testid="play-resign"]');
      }
      await page.waitForSelector('[data-testid="play-result"]:not([hidden])');
      const end = page.plays[page.plays.length - 1];
      assert.equal(end.status, 'ended');
      assert.ok(!(end.result.reason === 'time' && end.result.winner === 'b'), `the engine lost on time at move ${end.moves.length + 1} (times ${end.times_ms}; analysis ${await page.getAttribute('[data-testid="analysis-status"]', 'data-state')})`);
      assert.equal(await page.getAttribute('[data-testid="play-result"]', 'data-reason'), end.result.reason);
      await checkClocks(page);
      const events = checkEveryClock(page);
      assert.ok(events >= end.moves.length, `${events} play events for ${end.moves.length} moves`);
      // The record: every move, the result in the move list and the KIF.
      await page.waitForSelector(`[data-testid="game-result"][data-end="${end.result.end}"]`);
      assert.equal(await page.locator('[data-testid="move-list"] [data-testid="move"]').count(), end.moves.length);
      await checkLanguage(page, 'ja', 'a game ended');
      // The result comes before the form of the next game.
      const [result, form] = [await page.locator('[data-testid="play-result"]').boundingBox(), await page.locator('#play-form').boundingBox()];
      assert.ok(result.y < form.y, `the result (y ${result.y}) above the next game's form (y ${form.y})`);
      await screenshot(page, `play-ended-${size}`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
      const kif = fs.readFileSync(await download.path(), 'utf8');
      assert.match(kif, /先手：プレイヤー/);
      assert.match(kif, new RegExp(`後手：${ENGINE}`));
      // Every move, then how the game ended.
      // (A capture on the last move's square reads 同　と(88), a space
      // inside; a drop, ５五角打, has no origin.)
      assert.match(kif, new RegExp(`\\n *${end.moves.length} [^\\n(]+(\\(\\d\\d\\))? +\\( *\\d+:\\d\\d/`));
      if (end.result.reason === 'resign') assert.match(kif, new RegExp(`\\n *${end.moves.length + 1} 投了\\n`));
      // One click analyses the game.
      await page.click('[data-testid="play-analyse"]');
      await page.waitForSelector('[data-testid="game-status"]:not([hidden])');
      await page.waitForFunction(() => /\d+ \/ \d+/.test(document.querySelector('[data-testid="game-progress-text"]').textContent));
      // Cancelled: a REST job outlives the page, and would take the
      // engines' time from the next test.
      await page.click('[data-testid="analyse-game"]');
      await page.waitForSelector('[data-testid="game-status"][data-state="cancelled"]');
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}

test('a game lost on time: sudden death, the human does not move', { timeout: 120_000 }, async () => {
  const browser = await launch({ ...SIZES.desktop, locale: 'en-US' });
  try {
    const page = await openPlay(browser.context);
    await page.selectOption('[data-testid="play-side"]', 'w');
    await setTime(page, { mode: 'sudden', youMain: 2, engMain: 60 });
    await page.click('[data-testid="play-begin"]');
    // The engine (sente) moves first; then the human's 2 s run out.
    await page.waitForSelector('[data-testid="play-result"][data-reason="time"]', { timeout: 60_000 });
    const end = page.plays[page.plays.length - 1];
    assert.equal(end.result.winner, 'b');
    assert.equal(end.clock.w.main_ms, 0);
    await checkClocks(page);
    await page.waitForSelector('[data-testid="game-result"][data-end="time_up"]');
    assert.match(await page.textContent('[data-testid="play-result"]'), /You lose/);
    assert.deepEqual(takeProblems(browser.context), []);
  } finally {
    await browser.close();
  }
});

// playFromBoard opens the board at sfen (shown once shown matches) and
// starts a game from it: the human sente, sudden death of 120 s and 60 s,
// the engine at 0.1 s a move.
async function playFromBoard(context, sfen, shown) {
  const page = await openPlay(context, `#pos=sfen_${sfen.replaceAll(' ', '_')}&ply=0`);
  await page.waitForSelector(shown);
  await page.selectOption('[data-testid="play-side"]', 'b');
  await page.selectOption('[data-testid="play-start"]', 'board');
  await setTime(page, { mode: 'sudden', youMain: 120, engMain: 60 });
  await page.selectOption('[data-testid="play-level"]', 'ms:100');
  await page.click('[data-testid="play-begin"]');
  await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
  return page;
}

// A KIF's line for how the game ended (the move after the last), e.g. "  9 投了".
const endLine = (kif, n) => kif.split('\n').find((l) => new RegExp(`^ *${n} `).test(l));

async function downloadKif(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-kif"]')]);
  return fs.readFileSync(await download.path(), 'utf8');
}

for (const [size, opts] of Object.entries(SIZES)) {
  test(`${size}: a handicap game (二枚落ち) at Fischer increment with the engine pondering; a declaration that does not hold loses`, { timeout: 180_000 }, async () => {
    const browser = await launch({ ...opts, locale: 'ja-JP' });
    try {
      const page = await openPlay(browser.context);
      // The human is 下手 (sente); 上手, the engine, moves first.
      await page.selectOption('[data-testid="play-side"]', 'b');
      await page.selectOption('[data-testid="play-start"]', '二枚落ち');
      assert.deepEqual(await page.$$eval('#play-side option', (os) => os.map((o) => o.textContent)), ['下手 ☗', '上手 ☖'], 'a handicap game\'s sides');
      await setTime(page, { mode: 'fischer', youMain: 120, youExtra: 3, engMain: 30, engExtra: 2 });
      await page.selectOption('[data-testid="play-level"]', 'ms:500');
      assert.equal(await page.isEnabled('[data-testid="play-ponder"]'), true, 'fairy ponders (USI_Ponder)');
      await page.check('[data-testid="play-ponder"]');
      await page.click('[data-testid="play-begin"]');
      await page.waitForSelector('[data-testid="play-panel"][data-status="playing"]');
      let st = await humanMove(page, 0);
      assert.equal(st.handicap, '二枚落ち');
      assert.equal(st.sfen, 'lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1', 'the two-piece handicap, 上手 to move');
      assert.equal(st.ponder, true, 'the game ponders');
      assert.deepEqual(st.time_control, { b: { main_ms: 120000, inc_ms: 3000 }, w: { main_ms: 30000, inc_ms: 2000 } });
      assert.equal(st.moves.length, 1, 'the engine moved first');
      assert.deepEqual([await page.textContent('[data-testid="hand-b"] .who'), await page.textContent('[data-testid="hand-w"] .who')], ['下手', '上手'], 'the hands');
      for (let n = 1; n < 4 && st.status === 'playing'; n++) st = await humanMove(page, n);
      st = await humansTurn(page);
      assert.equal(st.status, 'playing');
      // Each side's clock gained its increment for each move, as the server
      // counted the move: the first event after a move shows the mover's
      // main time (no longer running) as main − spent + increment.
      const after = (n) => page.plays.find((p) => p.moves.length === n);
      const [e1, e2] = [after(1), after(2)];
      assert.equal(e1.clock.running, 'b');
      assert.equal(e1.clock.w.main_ms, 30000 - e1.times_ms[0] + 2000, 'the engine\'s clock after its move');
      assert.equal(e2.clock.running, 'w');
      assert.equal(e2.clock.b.main_ms, e1.clock.b.main_ms - e2.times_ms[1] + 3000, 'the human\'s clock after a move');
      // Declaring a win without the king in the enemy camp loses the game.
      await page.click('[data-testid="play-declare"]');
      await page.waitForSelector('[data-testid="play-result"][data-reason="illegal_declaration"]');
      const end = page.plays.at(-1);
      assert.equal(end.result.winner, 'w');
      await checkClocks(page);
      checkEveryClock(page);
      await checkLanguage(page, 'ja', 'a handicap game ended');
      await screenshot(page, `play-handicap-${size}`);
      const kif = await downloadKif(page);
      assert.match(kif, /手合割：二枚落ち/);
      assert.match(kif, /下手：プレイヤー/);
      assert.match(kif, new RegExp(`上手：${ENGINE}`));
      assert.match(endLine(kif, end.moves.length + 1) || '', /反則負け/, `the KIF's ending:\n${kif}`);
      assert.match(await page.textContent('[data-testid="game-result"]'), /下手の反則負け/);
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });

  test(`${size}: a game from the board's position, where the human declares a win (入玉宣言) that holds`, { timeout: 120_000 }, async () => {
    const browser = await launch({ ...opts, locale: 'ja-JP' });
    try {
      // Sente's king in the enemy camp with ten pieces and 28 points (with the hand).
      const sfen = '+L+NSG1GS+N+L/4K4/PPPPPPPPP/9/9/9/9/9/4k4 b RBP 1';
      const page = await playFromBoard(browser.context, sfen, '[data-square="5b"] .piece[data-piece="K"][data-color="b"]');
      await page.waitForSelector('[data-testid="play-declare"]:not([hidden])');
      assert.equal(page.plays.at(-1).sfen, sfen, 'the game starts from the board\'s position');
      await page.click('[data-testid="play-declare"]');
      await page.waitForSelector('[data-testid="play-result"][data-reason="declaration"]');
      const end = page.plays.at(-1);
      assert.equal(end.result.winner, 'b');
      assert.match(await page.textContent('[data-testid="play-result"]'), /入玉宣言/);
      await checkClocks(page);
      checkEveryClock(page);
      await checkLanguage(page, 'ja', 'a declared game');
      const kif = await downloadKif(page);
      assert.match(endLine(kif, 1) || '', /入玉勝ち/, `the KIF's ending:\n${kif}`);
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}

for (const [size, opts] of Object.entries(SIZES)) {
  test(`${size}: 千日手 in a game from the board's position, where the engine's king can only shuffle`, { timeout: 120_000 }, async () => {
    const browser = await launch({ ...opts, locale: 'ja-JP' });
    try {
      // Gote's king has one legal move each turn (1a↔2a: the rook holds
      // rank b, the knight 3a); the human walks the king 5i↔4i. The start
      // comes back a fourth time after twelve moves.
      const sfen = '8k/R8/5N3/9/9/9/9/9/4K4 b - 1';
      const page = await playFromBoard(browser.context, sfen, '[data-square="9b"] .piece[data-piece="R"]');
      for (let n = 0; n < 6; n++) {
        const st = await humansTurn(page);
        assert.equal(st.status, 'playing', `move ${2 * n + 1}: the game goes on`);
        const [from, to] = n % 2 === 0 ? ['5i', '4i'] : ['4i', '5i'];
        const before = page.plays.length;
        await clickSquare(page, from);
        await clickSquare(page, to);
        await until(() => page.plays.length > before, 'the server took the move');
      }
      await page.waitForSelector('[data-testid="play-result"][data-reason="repetition"]');
      const end = page.plays.at(-1);
      assert.equal(end.moves.length, 12);
      assert.equal(end.result.winner, '');
      assert.match(await page.textContent('[data-testid="play-result"]'), /千日手/);
      await checkClocks(page);
      checkEveryClock(page);
      await page.waitForSelector('[data-testid="game-result"][data-end="repetition"]');
      const kif = await downloadKif(page);
      assert.match(endLine(kif, 13) || '', /千日手/, `the KIF's ending:\n${kif}`);
      assert.deepEqual(takeProblems(browser.context), []);
    } finally {
      await browser.close();
    }
  });
}
