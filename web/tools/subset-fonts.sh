#!/usr/bin/env bash
# Rebuilds the two small embedded fonts in web/static/fonts/ from Debian's Noto
# CJK fonts (SIL OFL 1.1). Only needed when the glyph lists below change: the
# output is committed, so `go build` needs nothing of this.
#
#   apt-get install fonts-noto-cjk python3-fonttools python3-brotli
#   web/tools/subset-fonts.sh
#
# Why embed at all: the page must render piece kanji and Japanese notation on
# machines without a Japanese font (CI's headless Chromium, minimal Linux), and
# may load nothing from outside the server.
set -euo pipefail
cd "$(dirname "$0")/../static/fonts"
noto=/usr/share/fonts/opentype/noto
py=/usr/bin/python3

# Piece faces: the 14 kinds, both king forms, and the one-kanji promoted forms.
pieces='歩香桂銀金角飛玉王と杏圭全馬龍竜'
# Notation and labels: squares, pieces, KIF words, side marks, plus every
# Japanese character the pages and scripts contain (so new UI words are
# picked up by running this again).
fixed="${pieces}一二三四五六七八九１２３４５６７８９０同打成不▲△☗☖　先後手持駒なし詰み局面開始投了"
used=$(cat ../../pages/*.html ../../pages/parts/*.html ../js/*.js ../js/games/*.js ../js/i18n/*.js | "$py" -c '
import sys
s = sys.stdin.read()
r = lambda o: 0x25B2 <= o <= 0x25B3 or 0x2616 <= o <= 0x2617 or 0x3000 <= o <= 0x30FF or 0x4E00 <= o <= 0x9FFF or 0xFF01 <= o <= 0xFF5E
print("".join(sorted({c for c in s if r(ord(c))})))')
text="$fixed$used"
# The text font's glyphs, for unit.test.mjs (which fails when a page uses a
# character the font lacks: run this script again then).
printf '%s\n' "$text" | "$py" -c 'import sys; print("".join(sorted(set(sys.stdin.read().strip()))))' > ../../tools/font-glyphs.txt

"$py" -m fontTools.subset "$noto/NotoSerifCJK-Bold.ttc" --font-number=0 \
  --text="$pieces" --flavor=woff2 --layout-features='' --no-hinting \
  --desubroutinize --name-IDs='*' --output-file=usid-pieces.woff2
"$py" -m fontTools.subset "$noto/NotoSansCJK-Regular.ttc" --font-number=0 \
  --text="$text" --flavor=woff2 --layout-features='' --no-hinting \
  --desubroutinize --name-IDs='*' --output-file=usid-text.woff2
ls -l usid-pieces.woff2 usid-text.woff2
