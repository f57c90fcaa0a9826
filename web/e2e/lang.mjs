// What a page says, checked for its language: on a Japanese page no
// English word is left (but for engine names, formats and keys), on any
// page no catalogue key is shown in place of its words. Shared by the
// tests of every page (i18n.test.mjs, play.test.mjs).

import assert from 'node:assert/strict';
import { baseURL } from './lib.mjs';

// Latin words a Japanese page may show: names of formats, protocols and
// keys, the language chooser's "English", the product's name; engine names
// and versions come from /v1/engines.
const ALLOWED = new Set(['usid', 'API', 'SFEN', 'USI', 'KIF', 'KI2', 'CSA', 'HTTP', 'Home', 'End', 'English',
  'startpos', 'moves', 'go', 'mate', 'gps', 'PGN', 'FEN', 'UCI', 'SAN']);

async function engineWords() {
  const { engines: list } = await (await fetch(`${baseURL()}/v1/engines`)).json();
  const words = new Set();
  for (const e of list) for (const s of [e.name, e.id?.name, e.id?.author]) for (const w of String(s || '').match(/[A-Za-z]+/g) || []) words.add(w);
  return words;
}

// pageWords collects what the page says: its text (not the data of inputs,
// error details usid wrote, or engine names in the engine chooser) and the
// attributes people read (title, placeholder, aria-label).
async function pageWords(page) {
  return page.evaluate(() => {
    const skip = (el) => el.closest('textarea, input, #engine, .error-message, .error-code, script, style');
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!skip(n.parentElement) && n.textContent.trim()) out.push(n.textContent);
    for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
      if (el.closest('#engine')) continue;
      for (const a of ['title', 'placeholder', 'aria-label']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
    }
    // CSS-generated words come from data attributes.
    for (const el of document.querySelectorAll('[data-empty], [data-illegal]')) out.push(el.dataset.empty || el.dataset.illegal);
    out.push(document.title);
    return out;
  });
}

// latinWords are the words of two or more Latin letters in texts, leaving
// out tokens with digits or slashes (SFEN, moves like 7g7f, sizes like 3k).
function latinWords(texts, allowed) {
  const bad = new Set();
  for (const t of texts) {
    for (const tok of t.split(/[\s()（）、。:：,·・—–\-=?？!]+/)) {
      if (/[0-9/]/.test(tok)) continue;
      for (const w of tok.match(/[A-Za-z]{2,}/g) || []) if (!allowed.has(w)) bad.add(w);
    }
  }
  return [...bad];
}

// A key shown instead of its text (a missing catalogue entry) looks like "tsume.matein".
const rawKeys = (texts) => texts.flatMap((t) => t.match(/\b[a-z]+\.[a-z][a-zA-Z0-9.]*\b/g) || []).filter((k) => k !== 'e.g' && !/\.(js|yaml|kif|css)$/.test(k));

let engineWordsOnce;

// checkLanguage asserts the page is in lang ('ja' or 'en'): <html lang>, the
// chooser, no raw keys, and (ja) no English word but the allowed ones and
// those of the record shown (more: its players, its event).
export async function checkLanguage(page, lang, what, more = []) {
  engineWordsOnce ??= engineWords();
  const allowed = new Set([...ALLOWED, ...(await engineWordsOnce), ...more]);
  assert.equal(await page.evaluate(() => document.documentElement.lang), lang, `${what}: <html lang>`);
  assert.equal(await page.inputValue('[data-testid="lang-select"]'), lang, `${what}: the chooser shows the language`);
  const texts = await pageWords(page);
  assert.deepEqual(rawKeys(texts), [], `${what}: catalogue keys shown instead of words`);
  if (lang === 'ja') assert.deepEqual(latinWords(texts, allowed), [], `${what}: English left on the Japanese page`);
  else assert.ok(texts.some((t) => /Analy[sz]e|Solve/.test(t)), `${what}: English words shown`);
}
