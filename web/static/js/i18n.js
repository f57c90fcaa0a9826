// The pages' words in Japanese and English, and the move notation the player
// chose. Every string a page shows is a key of the catalogues in i18n/
// (one per language, the same keys in each: unit.test.mjs checks); static
// HTML names its keys in data-i18n attributes, scripts call t(key, params).
//
// The language is the one chosen on the page (localStorage usid.lang), else
// the first of the browser's languages we have, else Japanese. Changing it
// (or the notation) reloads the page: every string is then drawn afresh, and
// the URL keeps the game.

import ja from './i18n/ja.js';
import en from './i18n/en.js';

export const CATALOGUES = { ja, en };
export const LANGS = ['ja', 'en'];
export const NOTATIONS = ['kif', 'western'];

function stored(name) {
  try {
    const v = globalThis.localStorage?.getItem(`usid.${name}`);
    return v === null || v === undefined ? null : JSON.parse(v);
  } catch { return null; }
}

function store(name, value) {
  try { globalThis.localStorage?.setItem(`usid.${name}`, JSON.stringify(value)); } catch { /* private mode */ }
}

// pickLang chooses a catalogue: the saved choice, else the first browser
// language we have ("ja-JP" counts as "ja"), else Japanese.
export function pickLang(saved, languages = []) {
  if (LANGS.includes(saved)) return saved;
  for (const l of languages || []) {
    const base = String(l).toLowerCase().split('-')[0];
    if (LANGS.includes(base)) return base;
  }
  return 'ja';
}

export let lang = pickLang(stored('lang'), globalThis.navigator?.languages);
// The notation follows the language until the player chooses one: an
// English page writes Western moves (P-7f) and a-i ranks, a Japanese one
// ７六歩 and 一…九. Once chosen, each choice is kept on its own.
export const defaultNotation = (l) => (l === 'ja' ? 'kif' : 'western');
export let notation = NOTATIONS.includes(stored('notation')) ? stored('notation') : defaultNotation(lang);

// setLang is for tests and the unit test; the pages reload instead.
export function setLang(l) { lang = pickLang(l); }
export function setNotation(n) { if (NOTATIONS.includes(n)) notation = n; }

// t gives the text of key in the page's language with {name} replaced by
// params.name. A key missing from the catalogue shows as itself (and fails
// the unit test).
export function t(key, params = {}) {
  const s = CATALOGUES[lang][key] ?? CATALOGUES.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (params[k] !== undefined ? String(params[k]) : m));
}

// ATTRS are the translated attributes: data-i18n-title="key" sets title.
const ATTRS = ['title', 'placeholder', 'aria-label', 'alt'];

// applyDom translates the static parts of a page: data-i18n (text),
// data-i18n-html (markup from the catalogue itself, never from data), and
// the attributes above.
export function applyDom(root = document) {
  if (root === document) {
    document.documentElement.lang = lang;
    if (document.body?.dataset.titleKey) document.title = t(document.body.dataset.titleKey);
  }
  root.querySelectorAll('[data-i18n]').forEach((e) => { e.textContent = t(e.dataset.i18n); });
  root.querySelectorAll('[data-i18n-html]').forEach((e) => { e.innerHTML = t(e.dataset.i18nHtml); });
  for (const a of ATTRS) {
    root.querySelectorAll(`[data-i18n-${a}]`).forEach((e) => e.setAttribute(a, t(e.getAttribute(`data-i18n-${a}`))));
  }
}

// setupSwitches wires the language and notation choosers of the top bar.
export function setupSwitches() {
  const l = document.getElementById('lang');
  const n = document.getElementById('notation');
  if (l) {
    l.value = lang;
    l.addEventListener('change', () => { store('lang', l.value); location.reload(); });
  }
  if (n) {
    n.value = notation;
    n.addEventListener('change', () => { store('notation', n.value); location.reload(); });
  }
}

// The page translates itself as soon as this module runs (modules run
// after the document is parsed).
if (globalThis.document?.body) {
  applyDom();
  setupSwitches();
}
