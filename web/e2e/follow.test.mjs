// A game analysis belongs to the tab that started it (issue 26): the board
// asks for its job with follow: true, so usid keeps the job while the page
// polls it and cancels it (error abandoned) once nobody has polled it for
// its grace (games.follow_grace, 10 s): closing the tab stops the job and
// the engine time it spends; a reload, quicker than the grace, finds the
// job again and it goes on; a tab asleep for longer loses it and says so. Real chromium, real usid, fairy-stockfish.
//
// The test watches the job's end on /metrics (usid_game_jobs_finished_total)
// rather than by reading the job: this test's requests come from the same
// address as the page's, so a GET of its own would keep the job alive, as
// the page's polls do. It reads the job once it has ended.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openBoard, takeProblems, baseURL } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const GAME = fs.readFileSync(path.join(here, '../../kifu/testdata/kfw-game-a.kif'), 'utf8'); // 38 moves
const ENGINE = process.env.USID_ANALYSIS_ENGINE || 'fairy';

let browser;
before(async () => { browser = await launch({ width: 1280, height: 900 }); });
after(async () => { await browser?.close(); });

// cancelledJobs reads how many game analyses usid has ended cancelled.
async function cancelledJobs() {
  const text = await fetch(`${baseURL()}/metrics`).then((r) => r.text());
  const m = text.match(/^usid_game_jobs_finished_total\{status="cancelled"\} (\d+)/m);
  assert.ok(m, '/metrics has no usid_game_jobs_finished_total{status="cancelled"}');
  return Number(m[1]);
}

async function waitFor(what, check, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000}s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const progress = (page) => page.evaluate(() => {
  const p = document.querySelector('[data-testid="game-progress"]');
  const box = document.querySelector('[data-testid="game-status"]');
  return { value: p.value, max: p.max, state: box.dataset.state, hidden: box.hidden };
});

const savedJob = (page) => page.evaluate(() => {
  try { return JSON.parse(sessionStorage.getItem('usid.gamejob'))?.id ?? null; } catch { return null; }
});

// startAnalysis loads the game and starts its analysis at 2 s per position
// (longer than any search of the other tests, so that usid's evaluation
// cache does not answer for it and the job runs for minutes); it returns
// the job's id, once the page shows its first positions analysed.
async function startAnalysis(page) {
  const posts = [];
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/v1/games/analysis')) posts.push(r.postDataJSON()); });
  await page.waitForFunction(() => [...document.querySelectorAll('#engine option')].some((o) => o.value));
  await page.selectOption('[data-testid="engine-select"]', ENGINE);
  await page.fill('[data-testid="position-input"]', GAME);
  await page.click('[data-testid="load-position"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
  await page.selectOption('[data-testid="game-limit"]', 't2000');
  await page.click('[data-testid="analyse-game"]');
  await page.waitForFunction(() => {
    const p = document.querySelector('[data-testid="game-progress"]');
    return p.value >= 1 && p.value < p.max;
  }, null, { timeout: 120_000 });
  assert.equal(posts.length, 1);
  assert.equal(posts[0].follow, true, 'the board asks for a followed job');
  const id = await savedJob(page);
  assert.match(id ?? '', /^[0-9a-f]{32}$/, 'the tab keeps its job\'s id');
  return id;
}

// closeAndWatch closes the tab and waits for usid to cancel its job
// (watched on /metrics), then reads it: cancelled, abandoned.
async function closeAndWatch(page, id) {
  const before = await cancelledJobs();
  const closed = Date.now();
  await page.close();
  await waitFor('the closed tab\'s job to be cancelled', async () => (await cancelledJobs()) > before, 120_000);
  const after = Date.now() - closed;
  const r = await fetch(`${baseURL()}/v1/games/analysis/${id}`);
  assert.equal(r.status, 200);
  const job = await r.json();
  console.log(`# the closed tab's job: ${job.status} (${job.error?.code}) ${after} ms after the tab closed, at ${job.progress.done}/${job.progress.total}`);
  assert.equal(job.status, 'cancelled');
  assert.equal(job.error?.code, 'abandoned');
  assert.ok(job.follow_ms > 0, `follow_ms ${job.follow_ms}`);
  assert.ok(after >= job.follow_ms - 1000, `cancelled ${after} ms after the tab closed, before its grace of ${job.follow_ms} ms`);
  assert.ok(job.progress.done < job.progress.total, 'every position was analysed: nothing was cancelled');
}

// assertClean: requests the page had in flight when it closed or
// reloaded are aborted, which is no fault of the page.
function assertClean() {
  const problems = takeProblems(browser.context).filter((p) => !/request failed: .*\/v1\/games\/analysis\/\S+ net::ERR_ABORTED/.test(p));
  assert.deepEqual(problems, [], 'the page logged errors');
}

test('closing the tab that started a game analysis cancels the job', { timeout: 300_000 }, async () => {
  const page = await openBoard(browser.context);
  const id = await startAnalysis(page);
  await closeAndWatch(page, id);
  assertClean();
});

test('a reload during a game analysis follows the same job, which goes on; closing the tab then cancels it', { timeout: 400_000 }, async () => {
  const page = await openBoard(browser.context);
  const id = await startAnalysis(page);
  const grace = (await fetch(`${baseURL()}/v1/games/analysis/${id}`).then((r) => r.json())).follow_ms;
  assert.ok(grace > 0, `follow_ms ${grace}`);
  const before = await progress(page);
  const reloaded = Date.now();
  await page.reload();
  await page.waitForSelector('.board-area[data-ready="true"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="move"]').length === 38);
  // The same job, shown again, still under way past the grace after the
  // reload (by then a job left behind would be cancelled), and two
  // positions further than it was (paused is under way too: the tests'
  // searches share one anonymous engine-time budget).
  assert.equal(await savedJob(page), id);
  await page.waitForFunction(({ n, until }) => {
    const box = document.querySelector('[data-testid="game-status"]');
    return !box.hidden && ['running', 'paused', 'queued'].includes(box.dataset.state) && Date.now() > until &&
      document.querySelector('[data-testid="game-progress"]').value >= n + 2;
  }, { n: before.value, until: reloaded + grace + 1000 }, { timeout: 200_000 });
  const again = await progress(page);
  assert.equal(again.max, 39);
  await closeAndWatch(page, id);
  assertClean();
});

test('a tab asleep past the grace loses its job, and says so once it wakes', { timeout: 300_000 }, async () => {
  const page = await openBoard(browser.context);
  const id = await startAnalysis(page);
  // The page's next poll is held back before it reaches usid (as a tab
  // the browser put to sleep sends none), then let through once usid has
  // given the job up.
  let hold = true;
  const held = [];
  await page.route(/\/v1\/games\/analysis\/[0-9a-f]{32}$/, (route) => { if (hold) held.push(route); else route.continue(); });
  const before = await cancelledJobs();
  await waitFor('the asleep tab\'s job to be cancelled', async () => (await cancelledJobs()) > before, 120_000);
  hold = false;
  assert.ok(held.length >= 1, 'a poll was held back');
  for (const r of held) await r.continue();
  // Its poll finds the job ended: the board says why, not "Cancelled".
  await page.waitForFunction(() => document.querySelector('[data-testid="game-status"]').dataset.state === 'cancelled', null, { timeout: 60_000 });
  assert.match(await page.locator('[data-testid="game-progress-text"]').textContent(), /no page was following it/);
  assert.equal(await page.locator('[data-testid="analyse-game"]').textContent(), 'Analyse game', 'it can be started again');
  const job = await fetch(`${baseURL()}/v1/games/analysis/${id}`).then((r) => r.json());
  assert.equal(job.error?.code, 'abandoned');
  await page.close();
  assertClean();
});
