#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The static site (docs/views.md): a plain HTTP server (python3 -m http.server) over a mount of
# the bundled Liger import serves the index as a website, with no code of ours on the server.
# A crawl from /index.html follows every link of every page and loads every picture: no link is
# broken, every page is well-formed (xmllint) and valid HTML (tidy: no error), and the root,
# compare/ and its pair directories, every directory of benchmarks/ and every run in runs/ has its
# page (runs/ and digests/ are served as the server's own listings): a group's page links its
# runs' pages, and a run's page its permalink under runs/. A rank directory's page and the same
# run's under runs/ have the same sections, each with a "#1" link to #1's page. A headless
# browser (chromium-headless-shell) loads a group page and a gpu page: the screenshot is not
# blank and shows the picture's colours, and the browser logs no console error.
# The mount's pages are the export's bytes.
. "$(dirname "$0")/mount-lib.sh"

for tool in xmllint tidy chromium-headless-shell; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool is not installed (scripts/deps.sh --test)"; exit 77; }
done
store="$work/store"
mnt="$work/mnt"
make_history_store "$store" "$work/export"
mount_fg "$store" "$mnt"

# the server: a free port, waited for with a deadline
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$mnt" "$port" >"$work/http.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 100); do
	python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/README')" 2>/dev/null && break
	sleep 0.1
done
base="http://127.0.0.1:$port"

# the crawl: every page's links and pictures, each page checked
crawl_start=$SECONDS
python3 - "$base" "$work/pages" "$mnt" <<'EOF' >"$work/crawl"
import collections, html.parser, os, sys, urllib.parse, urllib.request, urllib.error
base, pages_out, mnt = sys.argv[1:4]
class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.pictures = [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "img" and "src" in a:
            self.pictures.append(a["src"])
import re
# the directories without a page of ours, which the server lists: runs/ and digests/
UNPAGED = re.compile(r"^(/runs/|/digests/)$")
def fetch(url, method):
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req) as r:
        return r.read(), r.headers.get("Content-Type", "")
seen, todo, broken, pages, files = set(), [base + "/index.html"], [], [], 0
while todo:
    url = todo.pop()
    if url in seen:
        continue
    seen.add(url)
    path = urllib.parse.urlparse(url).path
    page = path.endswith("/")  # a directory: its index.html is its page
    if not page and not path.endswith((".html", ".svg")):
        # a file the server serves as it is (not a page or a picture): that it is there is what a
        # HEAD would tell, and a HEAD each of the run pages' 80,000 took three minutes
        if os.path.isfile(mnt + urllib.parse.unquote(path)):
            files += 1
        else:
            broken.append("%s 404" % path)
        continue
    try:
        body, ctype = fetch(url + "index.html" if page else url, "GET")
    except urllib.error.HTTPError as e:
        if not (page and e.code == 404 and UNPAGED.match(path)):
            broken.append("%s %d" % (path, e.code))
            continue
        try:  # no page: the server lists it
            fetch(url, "HEAD")
            files += 1
        except urllib.error.HTTPError as e2:
            broken.append("%s %d" % (path, e2.code))
        continue
    files += 1
    if not (page or path.endswith("/index.html")) or not ctype.startswith("text/html"):
        continue
    pages.append(path + "index.html" if page else path)
    p = Links()
    p.feed(body.decode())
    for href in p.links + p.pictures:
        u = urllib.parse.urljoin(url + "index.html" if page else url, href)
        if urllib.parse.urlparse(u).netloc != urllib.parse.urlparse(base).netloc:
            broken.append("%s: a link out of the site: %s" % (path, href))
            continue
        todo.append(u.split("#")[0])
pages = sorted(set(pages))
open(pages_out, "w").write("\n".join(pages) + "\n")
print(len(pages), files, len(broken))
for b in broken[:10]:
    print("# broken:", b)
EOF
read -r npages nfiles nbroken <<<"$(head -1 "$work/crawl")"
tail -n +2 "$work/crawl"
check "a crawl from /index.html reaches $npages pages and $nfiles files and pictures, no link broken (${nbroken:-?}), in $((SECONDS - crawl_start)) s" \
	[ "${nbroken:-1}" = 0 -a "${npages:-0}" -gt 1000 ]
# the root, benchmarks/, kernel, pass, gpu, group and rank directories; runs/<id>/; compare/ and
# its pairs
{ echo /index.html; (cd "$mnt" && find benchmarks -maxdepth 5 -type d && find runs -mindepth 1 -maxdepth 1 -type d &&
	find compare -maxdepth 1 -type d) | sed 's|^|/|; s|$|/index.html|'; } | sort >"$work/dirs"
check "every directory of benchmarks/, runs/ and compare/ (and the root) has its page, and the crawl found each ($(wc -l <"$work/dirs"), $(grep -c ^/runs/ "$work/dirs") in runs/, $(grep -c ^/compare/ "$work/dirs") in compare/)" \
	cmp -s "$work/dirs" "$work/pages"

# each page: well-formed (xmllint, every page: one process reads them all) and the export's bytes;
# valid HTML (tidy exits 2 on an error) every seventh and every one of compare/
bad_xml=$(sed "s|^|$mnt|" "$work/pages" | xargs -d '\n' xmllint --noout 2>&1 | grep -c 'parser error')
bad_export=$(python3 -c 'import sys
mnt, exp, pages = sys.argv[1:4]
print(sum(open(mnt + p, "rb").read() != open(exp + p, "rb").read() for p in open(pages).read().split()))' \
	"$mnt" "$work/export" "$work/pages")
bad_html=0
while read -r page; do
	tidy -q -e "$mnt$page" >/dev/null 2>&1
	(($? < 2)) || bad_html=$((bad_html + 1))
done < <(awk 'NR % 7 == 1 || /^\/compare\//' "$work/pages")
check "every page is well-formed XML ($bad_xml not)" [ "$bad_xml" = 0 ]
check "and the export's bytes ($bad_export differ)" [ "$bad_export" = 0 ]
check "every seventh page and compare/'s are valid HTML for tidy ($bad_html with errors)" [ "$bad_html" = 0 ]

# a run's page in its rank directory and under runs/ (SPEC §8): the same sections; its "#1" link
# leads, from each place, to a page of the group's #1 that says "this is #1"
python3 - "$mnt" "$base" <<'EOF' >"$work/places"
import glob, html.parser, sys, urllib.parse, urllib.request
mnt, base = sys.argv[1:3]
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections, self.href, self.text, self.h2, self.one = [], None, "", False, None
    def handle_starttag(self, tag, attrs):
        self.h2 |= tag == "h2"
        if tag == "a":
            self.href, self.text = dict(attrs).get("href"), ""
    def handle_endtag(self, tag):
        self.h2 &= tag != "h2"
        if tag == "a" and self.text.startswith("#1: "):
            self.one = self.href
    def handle_data(self, data):
        if self.h2:
            self.sections.append(data)
        self.text += data
def get(url):
    return urllib.request.urlopen(url).read().decode()
rank = sorted(glob.glob(mnt + "/benchmarks/*/*/*/*/03-*"))[0][len(mnt):]
run_id = open(mnt + rank + "/DIGESTS").readline().split(":")[1][:12]
found = []
for path in (rank + "/index.html", "/runs/%s/index.html" % run_id):
    p = Page()
    p.feed(get(base + path))
    one = urllib.parse.urljoin(base + path, p.one) if p.one else ""
    found.append((p.sections, bool(one) and "this is #1" in get(one), one[len(base):] or "none"))
(s1, ok1, u1), (s2, ok2, u2) = found
print(len(s1), s1 == s2 and len(s1) > 10, ok1, ok2, u1, u2)
EOF
read -r nsections same one_rank one_runs url_rank url_runs <"$work/places"
check "a rank directory's page and its run's under runs/ have the same $nsections sections ($same)" [ "$same" = True ]
check "its #1 link leads to #1's page from both places: $url_rank, $url_runs" \
	[ "$one_rank" = True -a "$one_runs" = True -a "${url_rank#/benchmarks/}" != "$url_rank" -a "${url_runs#/runs/}" != "$url_runs" ]
check "no page has a script" bash -c "! grep -l '<script' '$mnt/index.html' '$mnt/benchmarks/index.html' $(awk 'NR % 50 == 1 { printf "'"'"'%s'"'"' ", "'"$mnt"'" $0 }' "$work/pages")"

# every page fits a window 1,280 px wide: document.documentElement.scrollWidth, asked of the browser
# (tests/tools/page_width.py), at most 1280, and no table of the page's own (the ranking, compare/'s)
# cut in its box (a TSV view's may scroll) — for each kind of page (root, benchmarks/, kernel, pass,
# gpu, group, compare/, a pair), its three largest pages and three spread over the crawl
python3 - "$mnt" "$work/pages" "$base" <<'EOF' >"$work/sample"
import os, sys
mnt, pages, base = sys.argv[1], open(sys.argv[2]).read().split(), sys.argv[3]
def kind(p):
    if p.startswith("/compare/"):
        return "compare/" if p == "/compare/index.html" else "pair"
    if p == "/index.html":
        return "root"
    if p.startswith("/runs/"):
        return "runs/"
    return ["benchmarks/", "kernel", "pass", "gpu", "group", "rank"][p.count("/") - 2]
by = {}
for p in pages:
    by.setdefault(kind(p), []).append(p)
for k, ps in sorted(by.items()):
    big = sorted(ps, key=lambda p: -os.stat(mnt + p).st_size)[:3]
    spread = [ps[i * len(ps) // 3] for i in range(min(3, len(ps)))]
    for p in sorted(set(big + spread)):
        print(k, base + p)
EOF
cut -d' ' -f2 "$work/sample" | xargs timeout 300 python3 "$KX_SOURCE_ROOT/tests/tools/page_width.py" --width 1280 \
	>"$work/widths" 2>"$work/widths.err"
kinds=$(cut -d' ' -f1 "$work/sample" | sort -u | tr '\n' ' ')
wide=$(awk '$1 > 1280 { n++ } END { print n + 0 }' "$work/widths")
cut=$(awk '$2 > 0 { n++ } END { print n + 0 }' "$work/widths")
widest=$(sort -n "$work/widths" | tail -1)
check "every kind of page fits 1,280 px (${kinds% }): $(wc -l <"$work/widths") of $(wc -l <"$work/sample") measured, $wide wider (widest: ${widest/"$base"/}), $cut with a table of its own cut" \
	[ "$(wc -l <"$work/widths")" = "$(wc -l <"$work/sample")" -a "$wide" = 0 -a "$cut" = 0 -a "$(cut -d' ' -f1 "$work/sample" | sort -u | wc -l)" = 10 ]
[ -s "$work/widths.err" ] && sed 's/^/# /' "$work/widths.err"

# the TSV views a page shows as tables (the root's regressions.tsv, a pass's gpus.tsv, a gpu's
# sweep.tsv, a group's history.tsv and changes.tsv): the table after the heading that links the
# file has the file's lines, header first, cell for cell (its first 200 rows, then "N more rows")
python3 - "$mnt" "$work/pages" <<'EOF' >"$work/tables"
import html.parser, os, sys
mnt, pages = sys.argv[1], open(sys.argv[2]).read().split()
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.heading, self.tables, self.cell, self.more, self.text = None, {}, None, {}, ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self.heading, self.text = "", ""
        elif tag == "a" and self.heading == "":
            self.heading = a["href"]
        elif tag == "table" and self.heading:
            self.tables[self.heading] = []
        elif tag == "tr" and self.heading in self.tables:
            self.tables[self.heading].append([])
        elif tag in ("td", "th") and self.heading in self.tables:
            self.cell = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[self.heading][-1].append(self.cell)
            self.cell = None
        elif tag == "p" and self.heading and self.text.endswith("more rows: "):
            self.more[self.heading] = int(self.text.split()[0])
        if tag in ("p", "h2"):
            self.text = ""
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        self.text += data
shown = {0: ["regressions.tsv"], 3: ["gpus.tsv"], 4: ["sweep.tsv"], 5: ["history.tsv", "changes.tsv"]}
checked, bad = {}, []
for page in pages:
    if page.startswith("/compare/"):
        continue
    d = os.path.dirname(mnt + page)
    for name in shown.get(page.count("/") - 1, []):
        if not os.path.exists(os.path.join(d, name)):
            continue
        p = Page()
        p.feed(open(mnt + page, encoding="utf-8").read())
        lines = [l.split("\t") for l in open(os.path.join(d, name), encoding="utf-8").read().splitlines()]
        rows = max(len(lines) - 1, 0)
        want = lines[:201] if rows else None
        got = p.tables.get(name)
        if got != want or p.more.get(name, 0) != max(rows - 200, 0):
            bad.append("%s: %s" % (page, name))
        checked[name] = checked.get(name, 0) + 1
print(" ".join("%s=%d" % kv for kv in sorted(checked.items())), len(bad))
for b in bad[:5]:
    print("# differs:", b)
EOF
tail -n +2 "$work/tables"
check "the TSV views shown as tables on their pages, cell for cell ($(head -1 "$work/tables"))" \
	bash -c "head -1 '$work/tables' | grep -Eq '^changes.tsv=[0-9]+ gpus.tsv=[0-9]+ history.tsv=[0-9]+ regressions.tsv=1 sweep.tsv=[0-9]+ 0\$'"

# numeric order: every page but a group's (its runs in rank order) links its directories with the
# numbers in their names read as numbers (tokens4096 before tokens16384), as `sort -V` would
python3 - "$mnt" "$work/pages" <<'EOF' >"$work/order"
import html.parser, re, sys
mnt, pages = sys.argv[1], open(sys.argv[2]).read().split()
class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.dirs, self.in_list = [], False
    def handle_starttag(self, tag, attrs):
        self.in_list |= tag == "ul"
        href = dict(attrs).get("href", "")
        if tag == "a" and self.in_list and href.endswith("/"):
            self.dirs.append(href[:-1])
def key(name):  # digit runs as numbers, the rest as it is
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p]
checked = bad = numeric = 0
for page in pages:
    if (page.count("/") in (6, 7) and page.startswith("/benchmarks/")) or page.startswith("/runs/"):
        continue  # a group: rank order; a run's page: its files in their order
    p = Links()
    p.feed(open(mnt + page, encoding="utf-8").read())
    checked += 1
    numeric += p.dirs != sorted(p.dirs)  # byte order would differ here
    bad += p.dirs != sorted(p.dirs, key=key)
    if p.dirs != sorted(p.dirs, key=key) and bad < 4:
        print("# out of order:", page, file=sys.stderr)
print(checked, numeric, bad)
EOF
read -r order_pages order_numeric order_bad <"$work/order"
check "directories linked in numeric order on $order_pages pages ($order_numeric of them not byte order), $order_bad out of order" \
	[ "${order_bad:-1}" = 0 -a "${order_numeric:-0}" -gt 10 ]

# a browser: a group page and a gpu page
flce=benchmarks/fused_linear_cross_entropy/forward/nvidia-a100-sxm4-80gb
for page in "$flce/hidden4096-tokens16384-vocab128256-bf16/index.html" "$flce/index.html"; do
	shot="$work/shot.png"
	rm -f "$shot"
	timeout 120 chromium-headless-shell --no-sandbox --disable-gpu --hide-scrollbars --enable-logging=stderr --v=0 \
		--window-size=1100,900 --screenshot="$shot" "$base/$page" >"$work/browser.out" 2>&1
	console=$(grep -c 'CONSOLE\|Failed to load resource' "$work/browser.out")
	seen=$(python3 "$KX_SOURCE_ROOT/tests/tools/png_colours.py" "$shot" 1f6feb 1f77b4 2>/dev/null || echo "none")
	check "the browser shows $page: a screenshot that is not blank, in the pictures' colours ($seen), no console error ($console)" \
		bash -c "[[ '$seen' =~ ^([0-9]+)\ coloured ]] && (( \${BASH_REMATCH[1]} > 8 )) && [ '$console' = 0 ]"
	[[ -n ${KX_SCREENSHOTS:-} && $page == "$flce/index.html" ]] && cp "$shot" "$KX_SCREENSHOTS/sweep-page.png"
done

kill "$server" 2>/dev/null
unmount "$mnt" "$daemon"
finish
