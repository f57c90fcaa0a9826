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
// bypassCSP lets a test put a script of its own into the page (axe-core).
export async function launch({ width = 1280, height = 860, mobile = false, locale = 'en-US', notation = 'kif', bypassCSP = false } = {}) {
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
    bypassCSP,
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
    // A request still in flight when the page navigates (a reload on a
    // change of language or notation) is aborted by the browser, not failed
    // by usid: each request remembers how many navigations had started.
    let navs = 0;
    const startedAt = new WeakMap();
    page.on('request', (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navs++;
      else startedAt.set(r, navs);
    });
    page.on('requestfailed', (r) => {
      const error = r.failure()?.errorText;
      // A WebSocket torn down when a test closes its page is not a failure.
      if (r.url().includes('/v1/ws')) return;
      if (error === 'net::ERR_ABORTED' && startedAt.has(r) && startedAt.get(r) < navs) return;
      context.problems.push(`request failed: ${r.url()} ${error}`);
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

// textProblems lists the texts a reader cannot read whole, as
// "what: text (why)": a word (a run of letters, digits or kana and kanji
// without a space) broken over two lines; a short label (up to 12
// characters) on more than one line; text running out of its block, or
// cut by a box that hides its overflow (an ellipsis too) or by the
// window's edge; a select whose
// chosen option is wider than the select shows. Long Japanese sentences
// may break between any two characters, as Japanese does. Only what is
// shown counts: hidden elements and the text inside inputs are skipped.
export async function textProblems(page) {
  return page.evaluate(() => {
    const out = [];
    const W = document.documentElement.clientWidth;
    const name = (el) => {
      const id = el.dataset.testid || el.id || '';
      return `${el.tagName.toLowerCase()}${id ? `[${id}]` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    };
    const shown = (el) => el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
    // lines counts the lines a range's boxes sit on.
    const lines = (range) => {
      const tops = [];
      for (const r of range.getClientRects()) {
        if (r.width < 0.5) continue;
        if (!tops.some((t) => Math.abs(t - (r.top + r.bottom) / 2) < r.height / 2)) tops.push((r.top + r.bottom) / 2);
      }
      return tops.length;
    };
    // clipper is the nearest ancestor that hides what overflows it.
    const clipper = (el) => {
      for (let a = el; a && a !== document.body; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX !== 'visible' || s.textOverflow === 'ellipsis') return a;
      }
      return null;
    };
    const reported = new Set();
    const say = (el, text, why) => {
      const k = `${name(el)} ${why}`;
      if (reported.has(k)) return;
      reported.add(k);
      out.push(`${name(el)}: "${text.trim().slice(0, 40)}" (${why})`);
    };
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      const text = n.textContent;
      if (!text.trim() || el.closest('script, style, textarea, option, select, svg') || !shown(el)) continue;
      const whole = document.createRange();
      whole.selectNodeContents(n);
      const box = whole.getBoundingClientRect();
      if (box.width < 0.5) continue;
      const c = clipper(el);
      const cb = c?.getBoundingClientRect();
      if (cb && cb.width <= 1 && cb.height <= 1) continue; // visually hidden: for screen readers only
      if (text.trim().length <= 12 && lines(whole) > 1) say(el, text, 'a short label wrapped');
      else for (const m of text.matchAll(/\S+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        // A long Japanese sentence breaks anywhere; a Latin word or a move never.
        const cjkSentence = /[\u3040-\u30ff\u4e00-\u9fff]/.test(m[0]) && m[0].length > 12;
        if (!cjkSentence && lines(r) > 1) { say(el, m[0], 'a word broken over two lines'); break; }
      }
      // Text running out of its own block (a label wider than its box).
      const own = getComputedStyle(el).display.startsWith('inline') ? null : el.getBoundingClientRect();
      if (own && (box.left < own.left - 1 || box.right > own.right + 1)) say(el, text, `runs out of its box (${Math.round(box.right - own.right)} px)`);
      if (box.left < -0.5 || box.right > W + 0.5) say(el, text, `beyond the window's edge (${Math.round(box.left)}–${Math.round(box.right)} of ${W})`);
      if (c) {
        const cs = getComputedStyle(c);
        if (c.scrollWidth > c.clientWidth + 1 && cs.overflowX !== 'auto' && cs.overflowX !== 'scroll') say(el, text, `cut by ${name(c)}`);
        else if (box.left < cb.left - 0.5 || box.right > cb.right + 0.5) say(el, text, `cut by ${name(c)}`);
      }
    }
    // A select shows its chosen option in its box: measure the option's
    // words in the select's font against the room left of the arrow.
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre;left:0;top:0';
    document.body.append(probe);
    for (const s of document.querySelectorAll('select')) {
      if (!shown(s) || s.selectedIndex < 0) continue;
      const cs = getComputedStyle(s);
      probe.style.font = cs.font;
      probe.style.letterSpacing = cs.letterSpacing;
      probe.textContent = s.options[s.selectedIndex].text;
      const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16; // the arrow
      if (probe.getBoundingClientRect().width > room + 0.5) say(s, probe.textContent, `cut: ${Math.round(probe.getBoundingClientRect().width)} px in ${Math.round(room)} px`);
      const r = s.getBoundingClientRect();
      if (r.right > W + 0.5) say(s, probe.textContent, 'beyond the window\'s edge');
    }
    probe.remove();
    return out;
  });
}

// axeViolations runs axe-core (npm axe-core, its script put into the page:
// no network) over the page and lists its serious and critical violations,
// each as "rule: what it says (the elements)".
let axeSource;
export async function axeViolations(page) {
  axeSource ??= fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ content: axeSource });
  // Colours are judged at rest: a toast fading out is a blend of its own
  // and the page's (axe saw 1.26:1 mid-fade).
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Infinity));
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 6).map((n) => `${n.target.join(' ')}${n.any?.[0]?.message ? ` — ${n.any[0].message}` : ''}`) }));
  });
  return found.filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => `${v.id}: ${v.help}\n    ${v.nodes.join('\n    ')}`);
}
