// Words of engine matches shared by the match page (match.js) and the
// watch page of a match's game (watch.js): a player's label and a game's
// result.

import { t } from './i18n.js';

// playerLabel is a player as a record names it: its engine, then its
// options and level ("fairy (Skill Level -20)").
export function playerLabel(p) {
  if (!p) return '';
  const set = Object.keys(p.options || {}).sort().map((k) => `${k} ${p.options[k]}`);
  // As the record names it (match.Player.label).
  if (p.level?.id) set.push(`level ${p.level.id}`);
  if (p.level?.option) set.push(`${p.level.option} ${p.level.value}`);
  if (p.level?.movetime_ms) set.push(`${p.level.movetime_ms} ms`);
  if (p.level?.depth) set.push(`depth ${p.level.depth}`);
  if (p.level?.random) set.push(`${p.level.random}% random`);
  return set.length ? `${p.engine} (${set.join(', ')})` : p.engine;
}

// resultText is an ended game's result in words: who won (by the
// players' labels, numbered) or a draw, and why.
export function resultText(g, players) {
  if (!('winner' in g)) return '';
  const who = g.winner === null ? t('match.draw') : t('match.won', { n: g.winner + 1, name: playerLabel(players[g.winner]) });
  return g.reason ? `${who} · ${t(`match.reason.${g.reason}`)}` : who;
}
