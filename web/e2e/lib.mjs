// Shared helpers for the end-to-end tests: a real Debian Chromium driven by
// playwright-core (never a downloaded browser) against a real usid whose
// base URL is in USID_URL (run.sh starts one and sets it).

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const SCREENSHOTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

// The two sizes every page is tested at: a laptop, and a phone (touch, 2x).
export const SIZES = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844, mobile: true } };

export function baseURL() {
  const u = process.env.USID_URL;
  if (!u) throw new Error('USID_URL is not set: run web/e2e/run.sh, or start usid and set USID_URL=http://127.0.0.1:PORT');
  return u.replace(/\/$/, '');
}

// launch starts Chromium with a fresh profile and returns {context, close}.
// Every page's console errors and failed requests are collected in
// context.problems so tests can assert the page ran cleanly.
// locale sets the browser's language (navigator.languages), as a user's
// system would; the pages choose their words from it. The pages' move
// notation follows the language until chosen (English: Western): most tests
// read moves in KIF (７六歩), so notation 'kif' is chosen for them unless
// they ask for the fresh browser's default (notation: null).
export async function launch({ width = 1280, height = 860, mobile = false, locale = 'en-US', notation = 'kif' } = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (tests never download a browser)`);
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'usid-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', `--lang=${locale}`,
    ],
    locale,
    viewport: { width, height },
    deviceScaleFactor: mobile ? 2 : 1,
    isMobile: mobile,
    hasTouch: mobile,
  });
  if (notation) {
    await context.addInitScript((n) => {
      try { if (localStorage.getItem('usid.notation') === null) localStorage.setItem('usid.notation', JSON.stringify(n)); } catch { /* no storage here */ }
    }, notation);
  }
  context.problems = [];
  const watch = (page) => {
    page.on('console', (m) => { if (m.type() === 'error') context.problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => context.problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => {
      // A WebSocket torn down when a test closes its page is not a failure.
      if (!r.url().includes('/v1/ws')) context.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
    });
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page, name) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

// openBoard opens the analysis board and waits until usid has answered for
// the shown position (the board accepts moves only then).
export async function openBoard(context, hash = '') {
  const page = await context.newPage();
  await page.goto(`${baseURL()}/${hash}`);
  await page.waitForSelector('.board-area[data-ready="true"]');
  return page;
}

// clickSquare clicks the center of a board square such as "7g".
export async function clickSquare(page, sq) {
  await page.click(`[data-square="${sq}"]`);
}

// drag drags with real pointer moves from one square (or a hand
// piece, given as {hand: 'P', color: 'b'}) to a square.
export async function drag(page, from, to) {
  const src = typeof from === 'string'
    ? page.locator(`[data-square="${from}"]`)
    : page.locator(`[data-testid="hand-${from.color}"] [data-hand-piece="${from.hand}"]`);
  const a = await src.boundingBox();
  const b = await page.locator(`[data-square="${to}"]`).boundingBox();
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  const steps = 8;
  for (let i = 1; i <= steps; i++) {
    await page.mouse.move(a.x + a.width / 2 + ((b.x - a.x) * i) / steps, a.y + a.height / 2 + ((b.y - a.y) * i) / steps);
  }
  await page.mouse.up();
}

// problems returns what went wrong in the pages so far (console errors,
// uncaught exceptions, failed requests) and forgets it.
export function takeProblems(context) {
  return context.problems.splice(0);
}

// moveTexts lists the move list's entries as shown.
export async function moveTexts(page) {
  return page.locator('[data-testid="move-list"] [data-testid="move"]').allTextContents();
}
