#!/bin/sh
# Looks at a `convlab report` page as a reader would: headless Chromium (Debian's `chromium`)
# screenshots it at 800 and 1400 px wide and says whether the page scrolls sideways at either.
#   tools/report_in_browser.sh report.html [OUTDIR]     # writes OUTDIR/report-800.png, -1400.png
# Exit 1 when the page is wider than the window; 2 when Chromium or the page is missing.
set -eu
page=${1:?usage: tools/report_in_browser.sh report.html [OUTDIR]}
out=${2:-.}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "report_in_browser.sh: no chromium (apt-get install chromium)" >&2; exit 2; }
[ -f "$page" ] || { echo "report_in_browser.sh: no page '$page'" >&2; exit 2; }
mkdir -p "$out"
abs=$(cd "$(dirname "$page")" && pwd)/$(basename "$page")
probe=$(mktemp --suffix=.html)
trap 'rm -f "$probe"' EXIT
# The page has no script of its own: a copy gets one line that writes its width into the title.
sed 's#</body>#<script>document.title="width "+document.documentElement.scrollWidth;</script></body>#' "$abs" >"$probe"
status=0
for w in 800 1400; do
  flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=$w,6000"
  # shellcheck disable=SC2086
  "$browser" $flags --screenshot="$out/report-$w.png" "file://$abs" >/dev/null 2>&1
  # shellcheck disable=SC2086
  width=$("$browser" $flags --dump-dom "file://$probe" 2>/dev/null | sed -n 's#.*<title>width \([0-9]*\)</title>.*#\1#p')
  if [ -z "$width" ]; then echo "at $w px: chromium did not load the page" >&2; exit 2; fi
  if [ "$width" -gt "$w" ]; then verdict="SCROLLS SIDEWAYS"; status=1; else verdict="fits"; fi
  echo "at $w px: page width $width px, $verdict; screenshot $out/report-$w.png"
done
exit $status
