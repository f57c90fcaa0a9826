// An engine's lines as the board application keeps and draws them, for the
// first engine (analysis.js) and the second (engine2.js) alike: an info
// event merged into the lines (scores turned to the first side's view),
// and the lines as HTML.

import { blackScore, formatCount, formatSeconds } from './notation.js';
import { t } from './i18n.js';
import { escapeHtml } from './dom.js';

// mergeInfo puts info event m into lines (multipv -> line) and returns the
// line kept, or null when m says less than what is shown (it changes
// nothing). turn is the side to move as a score side (povSide); stopping:
// the search was told to stop.
export function mergeInfo(lines, m, turn, stopping, mod) {
  if (!Array.isArray(m.pv) || !m.pv.length || !m.score) return null;
  const mpv = m.multipv || 1;
  // A report cut short (the last one of a stopped search, a PV cut by the
  // hash) often carries only the start of the line given in full before:
  // keep the full line's moves, take the new numbers.
  const old = lines.get(mpv);
  if (old && m.pv.length < old.pv.length && m.pv.every((mv, i) => mv === old.pv[i])) {
    m = { ...m, pv: old.pv };
    if (mod.pvField) m[mod.pvField] = old[mod.pvField];
  }
  // After Stop the engine reports the iteration it broke off: its short
  // line says less than the full one shown.
  if (old && stopping && m.pv.length < old.pv.length) return null;
  const score = blackScore(m.score, turn);
  // A bound (lower/upper) is from the side to move's view too.
  let bound = m.bound || '';
  if (bound && turn === 'w') bound = bound === 'lower' ? 'upper' : 'lower';
  const line = { ...m, blackScore: score, blackBound: bound };
  lines.set(mpv, line);
  return line;
}

// sortedLines is lines best first.
export function sortedLines(lines) {
  return [...lines.values()].sort((a, b) => (a.multipv || 1) - (b.multipv || 1));
}

// linesHtml draws lines (best first) from position pos, each move a
// [data-testid="pv-move"] a click can play.
export function linesHtml(lines, pos0, mod) {
  const mark = mod.mark;
  let html = '';
  for (const l of lines) {
    const sc = l.blackScore;
    const cls = !sc ? '' : (sc.mate !== undefined ? (sc.winner === 'b' ? 'sente' : 'gote') : sc.cp > 0 ? 'sente' : sc.cp < 0 ? 'gote' : '');
    const bound = l.blackBound === 'lower' ? '≥' : l.blackBound === 'upper' ? '≤' : '';
    html += `<div class="pv-line" data-testid="pv-line" data-multipv="${l.multipv || 1}" data-depth="${l.depth ?? 0}">` +
      `<span class="pv-score ${cls}" data-testid="pv-score">${bound}${mod.formatScore(sc)}</span>` +
      `<span class="pv-depth">${l.depth ?? ''}</span><span class="pv-moves">`;
    let pos = pos0;
    l.pv.forEach((usi, j) => {
      const k = mod.moveText(mod.pvField && l[mod.pvField] && l[mod.pvField][j], usi, pos);
      try { pos = pos && mod.apply(pos, usi); } catch { pos = null; }
      const text = `${mark[k.side] || ''}${k.text}`;
      html += `<span class="pv-move" data-testid="pv-move" data-index="${j}" data-usi="${escapeHtml(usi)}">${escapeHtml(text)}</span>`;
    });
    html += '</span></div>';
  }
  return html;
}

// statsText is a search's numbers (depth, nodes, speed, time, hash) in words.
export function statsText(s) {
  const parts = [];
  if (s.depth !== undefined) parts.push(t('stats.depth', { d: `${s.depth}${s.seldepth ? `/${s.seldepth}` : ''}` }));
  if (s.nodes !== undefined) parts.push(t('stats.nodes', { n: formatCount(s.nodes) }));
  if (s.nps !== undefined) parts.push(t('stats.nps', { n: formatCount(s.nps) }));
  if (s.time_ms !== undefined) parts.push(formatSeconds(s.time_ms));
  if (s.hashfull !== undefined) parts.push(t('stats.hash', { n: Math.round(s.hashfull / 10) }));
  return parts.join(' · ');
}
