// Small DOM helpers shared by the pages.

import { t } from './i18n.js';
import { errorText } from './errwords.js';

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

// engineLabel is an engine's name in a chooser: usid's name and the
// engine's own up to its first parenthesis (a build's details, such as
// "gpsshogi (smp) vm r3033 wordsize 64", are too long for a phone's row;
// the option's title keeps them).
export function engineLabel(e) {
  const id = e.id && e.id.name ? e.id.name.split(' (')[0].trim() : '';
  return id ? `${e.name} — ${id}` : e.name;
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

let toastTimer = 0;
export function toast(text) {
  const box = $('#toast');
  if (!box) return;
  box.textContent = text;
  box.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove('show'), 1800);
}

// copyText uses the Clipboard API where the page may (https, localhost) and
// falls back to a selected text area elsewhere (plain http on a LAN).
export async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall through */ }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

// showErrors fills an error box with usid's errors ({code, message,
// move_index?, line?}); an empty list hides it. moves, when given, names the move
// a move_index points at.
export function showErrors(box, errors, { title = '', moves = null } = {}) {
  if (!errors || errors.length === 0) {
    box.hidden = true;
    box.innerHTML = '';
    delete box.dataset.code;
    return;
  }
  box.hidden = false;
  box.dataset.code = errors[0].code || '';
  let html = title ? `<div class="error-title">${escapeHtml(title)}</div>` : '';
  html += '<ul>';
  for (const e of errors) {
    let where = '';
    if (typeof e.move_index === 'number') {
      const m = moves && moves[e.move_index] ? ` (${escapeHtml(moves[e.move_index])})` : '';
      where = ` <span class="error-where">${escapeHtml(t('err.move', { n: e.move_index + 1 }))}${m}</span>`;
    }
    // A record's error names its line first, as editors do: "line 12: ...".
    const line = Number.isInteger(e.line) && e.line > 0 ? `<span class="error-line" data-testid="error-line">${escapeHtml(t('err.line', { n: e.line }))}</span> ` : '';
    // The player reads words in the page's language (errwords.js); the
    // code stays in data-code for scripts and tests.
    html += `<li data-code="${escapeHtml(e.code || 'error')}">${line}` +
      `<span class="error-message">${escapeHtml(errorText(e))}</span>${where}</li>`;
  }
  box.innerHTML = html + '</ul>';
}

// Settings are kept per game (a shogi engine is no choice on the chess
// page): settingScope('chess') keys them usid.chess.<name>; shogi's keep
// their old names.
let scope = '';
export function settingScope(game) { scope = game ? `${game}.` : ''; }

export function loadSetting(name, fallback) {
  try {
    const v = localStorage.getItem(`usid.${scope}${name}`);
    return v === null ? fallback : JSON.parse(v);
  } catch { return fallback; }
}

export function saveSetting(name, value) {
  try { localStorage.setItem(`usid.${scope}${name}`, JSON.stringify(value)); } catch { /* private mode */ }
}

// hashParams reads "#a=1&b=x" without URLSearchParams, which would turn
// the '+' of promotions (8h2b+) and promoted SFEN pieces into spaces.
export function hashParams() {
  const out = {};
  for (const part of location.hash.slice(1).split('&')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    try { out[part.slice(0, i)] = decodeURIComponent(part.slice(i + 1)); } catch { /* ignore a bad part */ }
  }
  return out;
}

// isTyping tells key handlers to leave keys alone while the user types.
export function isTyping(e) {
  const t = e.target;
  return t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

// twoStep makes a button ask before it acts, as lichess's resign does: the
// first click (or Enter) turns it into its confirmation (confirmKey's
// words) for ms; a second click acts. Escape, leaving the button or the
// time running out turn it back. The words go through data-i18n, so that a
// change of language while it asks says it in the new one.
export function twoStep(button, act, { confirmKey = 'play.resign.confirm', ms = 4000 } = {}) {
  let timer = 0;
  const reset = () => {
    clearTimeout(timer);
    if (button.dataset.confirming !== 'true') return;
    delete button.dataset.confirming;
    button.dataset.i18n = button.dataset.i18nWas;
    button.textContent = t(button.dataset.i18n);
    button.classList.remove('confirm');
  };
  button.addEventListener('click', () => {
    if (button.dataset.confirming === 'true') { reset(); act(); return; }
    button.dataset.confirming = 'true';
    button.dataset.i18nWas = button.dataset.i18n;
    button.dataset.i18n = confirmKey;
    button.textContent = t(confirmKey);
    button.classList.add('confirm');
    timer = setTimeout(reset, ms);
  });
  button.addEventListener('keydown', (e) => { if (e.key === 'Escape') reset(); });
  button.addEventListener('blur', reset);
  return reset;
}
