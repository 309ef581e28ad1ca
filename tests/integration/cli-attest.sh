#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Replications and notes (SPEC §8) through the CLI: `kindex attest` stores a note and a
# reproduction without anyone writing JSON, or writes the document (-o) for `kindex ingest`; a
# JSON Lines file mixes a manifest and an attestation of its run. The run directory lists
# attestations/NN-<type>-<id>.json oldest first (by createdAt, so a back-dated one comes first),
# each the stored document, linked under both paths of the run and covered by both SHA256SUMS;
# summary.txt's "replications and notes" gives type, date, author, and for a reproduction its GPU,
# median, ratio and noise verdict. Every rule refuses with its name, and nothing of a refused file
# is stored. Evidence and rank do not move; kindex verify passes.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"
export KINDEX_STORE=$tmp/store
expect 0 "$KINDEX" -q init
expect 0 "$KINDEX" -q import liger "$csv"

# a group of the bundled data with several runs: the subject is #3, the reproduction #1
g=benchmarks/tiled_geglu/backward.memory/nvidia-geforce-rtx-4090
g=$g/$("$KINDEX" ls $g | grep seq16384-bf16/ | head -1)
g=${g%/}
expect 0 "$KINDEX" ls "$g"
subj=$(grep '^03-' out) subj=${subj%/}
first=$(grep '^01-' out) first=${first%/}
sid=${subj##*-} fid=${first##*-}
[[ -n $sid && -n $fid ]] || die "no runs in $g"
digest_of() { "$KINDEX" cat "runs/$1/DIGESTS" | awk '$1 == "run" { print $2 }'; }
sd=$(digest_of "$sid") fd=$(digest_of "$fid")
expect 0 "$KINDEX" cat "$g/ranking.tsv"
cp out ranking.before
expect 0 "$KINDEX" cat "runs/$sid/summary.txt"
check "a run without attestations says so" contains out "none yet ('kindex attest'"
expect 1 "$KINDEX" ls "runs/$sid/attestations"

# a note, stored by kindex attest; a reproduction written with -o, then ingested
note=$'looks right to me\n\tsecond line: <script>alert("x")</script> \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d e\xcc\x81'
expect 0 "$KINDEX" attest "$sid" --note "$note" --author "ann" --at 2026-11-02T10:00:00Z
check "attest says what it stored" contains err "stored attestation sha256:"
expect 0 "$KINDEX" attest "runs/$sid" --reproduces "$g/$first" --text "rerun on the same box" --author bob \
	--at 2026-11-03T10:00:00Z -o rep.json
python3 - "$sd" "$fd" rep.json <<'PY' || die "kindex attest -o wrote something else"
import json, sys
d = json.load(open(sys.argv[3]))
assert d["apiVersion"] == "kindexfs.dev/v1alpha1" and d["kind"] == "Attestation", d
s = d["spec"]
assert (s["subject"], s["run"], s["type"], s["author"]) == (sys.argv[1], sys.argv[2], "reproduction", "bob"), s
PY
expect 0 "$KINDEX" ls "runs/$sid/attestations"
check "-o stores nothing" test "$(wc -l <out)" = 1
expect 0 "$KINDEX" ingest rep.json
check "ingest counts the attestation" contains err "1 attestation stored, 0 already present"
expect 0 "$KINDEX" ingest rep.json
check "the same attestation again is already present" contains err "0 attestations stored, 1 already present"

# a manifest and a note about its run in one JSON Lines file
fixture=$data/fixtures/flce-forward-a100.manifest.json
python3 - "$fixture" >mixed.jsonl <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(json.dumps(m))
print(json.dumps({"apiVersion": "kindexfs.dev/v1alpha1", "kind": "Attestation",
                  "spec": {"subject": "sha256:b3b20f4a454b2a9a71a2c91dea53d4cb06282e6d0ef2e64b450eb134df0002fe",
                           "type": "note", "text": "published by KernelIndex", "author": "carol",
                           "createdAt": "2026-11-04T10:00:00Z"}}))
PY
expect 0 "$KINDEX" ingest mixed.jsonl
check "a run and a note about it in one file" contains err "; 1 attestation stored, 0 already present), 0 refused"
expect 0 "$KINDEX" ls runs/b3b20f4a454b/attestations
check "the note is listed under the new run" contains out "01-note-"

# oldest first by createdAt: one back-dated to before the others is 01, the rest move up
expect 0 "$KINDEX" attest "$sid" --note "the first look" --author dan --at 2026-10-01T00:00:00Z
expect 0 "$KINDEX" ls "runs/$sid/attestations"
cp out listing
check "three attestations, oldest first" test "$(sed 's/-[0-9a-f]*\.json$//' listing | tr '\n' ' ')" = \
	"01-note 02-note 03-reproduction "
expect 0 "$KINDEX" cat "runs/$sid/summary.txt"
cp out summary
check "summary lists them oldest first" contains summary "  01 note          2026-10-01T00:00:00Z by dan: the first look"
check "a note's text, its later lines indented" contains summary "  02 note          2026-11-02T10:00:00Z by ann: looks right to me"
check "a note's text kept verbatim in the text file" contains summary $'\tsecond line: <script>alert("x")</script>'
check "a reproduction: its run, GPU, median, ratio and noise" grep -qE \
	"^  03 reproduction  2026-11-03T10:00:00Z by bob: runs/$fid on nvidia-geforce-rtx-4090 \(the same GPU\), median [0-9.]+ MB, [0-9.]+x this run's, (within noise|outside the noise \(p20-p80 apart\)); rerun on the same box$" summary
expect 0 "$KINDEX" cat "runs/$sid/attestations/$(sed -n 2p listing)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["spec"]["text"] == sys.argv[2], d' out "$note" ||
	die "an attestation's file is not its document"

# evidence and rank: untouched
expect 0 "$KINDEX" cat "$g/ranking.tsv"
check "ranking.tsv does not change" cmp -s out ranking.before

# every rule, each named; nothing of a refused file stored
att() { # att SUBJECT TYPE EXTRA-JSON: one attestation document
	printf '{"apiVersion":"kindexfs.dev/v1alpha1","kind":"Attestation","spec":{"subject":"%s","type":"%s","author":"eve","createdAt":"2026-11-05T00:00:00Z"%s}}\n' "$1" "$2" "$3"
}
protocol=$("$KINDEX" cat "runs/$sid/DIGESTS" | awk '$1 == "protocol" { print $2 }')
other=$("$KINDEX" ls runs | head -1) other=${other%/}
while [[ $other == "$sid" ]]; do other=$("$KINDEX" ls runs | sed -n 2p) other=${other%/}; done
od=$(digest_of "$other")
for c in "subject no stored run|$(att sha256:$(printf '%064d' 7) note ',"text":"x"')" \
	"subject is a BenchmarkProtocol document, not a run|$(att "$protocol" note ',"text":"x"')" \
	"subject is an attestation, not a run|$(att "$("$KINDEX" digest rep.json | awk '{ print $2 }')" note ',"text":"x"')" \
	"reproduction is no stored run|$(att "$sd" reproduction ',"run":"sha256:'$(printf '%064d' 9)'"')" \
	"reproduction measures what its subject does|$(att "$sd" reproduction ",\"run\":\"$od\"")" \
	"reproduction cannot reproduce itself|$(att "$sd" reproduction ",\"run\":\"$sd\"")" \
	"length over the limit of 4096|$(att "$sd" note ",\"text\":\"$(head -c 4097 /dev/zero | tr '\0' x)\"")" \
	"control control character U+0007|$(att "$sd" note ',"text":"a\u0007b"')" \
	"control control character U+009B|$(att "$sd" note ',"text":"a\u009bb"')" \
	"required 'text' is required|$(att "$sd" note '')" \
	"enum must be 'reproduction' or 'note'|$(att "$sd" opinion ',"text":"x"')" \
	"unknown-member unknown member 'rating'|$(att "$sd" note ',"text":"x","rating":5')" \
	"future more than a day after now|$(att "$sd" note ',"text":"x"' | sed 's/2026-11-05/2200-01-01/')"; do
	want=${c%%|*} doc=${c#*|}
	rule=${want%% *} msg=${want#* }
	printf '%s\n' "$doc" >bad.json
	expect 1 "$KINDEX" ingest bad.json
	check "refused: $want" bash -c 'grep -F ": $0: " err | grep -qF -- "$1"' "$rule" "$msg"
done
# the problems of a file are every one of them, with the rule of each
printf '%s\n%s\n' "$(att "$sd" note ',"text":"a\u0007b"')" "$(att "$sd" opinion ',"text":"x"')" >bad.jsonl
expect 1 "$KINDEX" ingest bad.jsonl
check "a JSON Lines file: each line's problem" test "$(grep -cE '^  bad.jsonl:[12]:[0-9]+: /spec/' err)" = 2
# a manifest beside a refused attestation is not stored either
python3 - "$fixture" >refused.jsonl <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["run"]["spec"]["observedAt"] = "2026-11-06T00:00:00Z"
m["run"]["metadata"] = {"name": "changed"}
print(json.dumps(m))
print(json.dumps({"apiVersion": "kindexfs.dev/v1alpha1", "kind": "Attestation",
                  "spec": {"subject": "sha256:" + "8" * 64, "type": "note", "text": "x", "author": "f",
                           "createdAt": "2026-11-05T00:00:00Z"}}))
PY
runs_before=$("$KINDEX" ls runs | wc -l)
expect 1 "$KINDEX" ingest refused.jsonl
check "one file, one decision: its run is not stored" test "$("$KINDEX" ls runs | wc -l)" = "$runs_before"
expect 0 "$KINDEX" ls "runs/$sid/attestations"
check "nothing refused was stored" test "$(wc -l <out)" = 3
expect 2 "$KINDEX" attest "$sid"
check "attest needs a note or a reproduction" contains err "give a RUN and one of --note TEXT or --reproduces RUN2"
expect 1 "$KINDEX" attest "$sid" --note "$(head -c 5000 /dev/zero | tr '\0' y)"
check "attest's document is checked like any file" contains err "length: text is 5000 bytes, over the limit of 4096"

# the export: under both paths, one inode each, SHA256SUMS covering them; kindex verify passes
expect 0 "$KINDEX" -q export x
name=$(sed -n 3p listing)
check "the rank directory lists attestations/ too" test -f "x/$g/$subj/attestations/$name"
check "one file under both paths of the run" test "$(stat -c %i "x/$g/$subj/attestations/$name")" = \
	"$(stat -c %i "x/runs/$sid/attestations/$name")"
check "its link count says so" test "$(stat -c %h "x/runs/$sid/attestations/$name")" = 2
check "its mtime is its createdAt" test "$(TZ=UTC stat -c %y "x/runs/$sid/attestations/$name" | cut -c1-19)" = "2026-11-03 10:00:00"
check "the run's SHA256SUMS covers its attestations" contains "x/runs/$sid/SHA256SUMS" "  attestations/$name"
check "sha256sum -c passes under runs/" bash -c "cd x/runs/$sid && sha256sum -c --quiet SHA256SUMS"
check "sha256sum -c passes in the group" bash -c "cd x/$g && sha256sum -c --quiet SHA256SUMS"
check "the group's SHA256SUMS covers them" contains "x/$g/SHA256SUMS" "  $subj/attestations/$name"
check "the run directory's link count counts attestations/" test "$(stat -c %h "x/runs/$sid")" = 3
id=${name##*-} id=${id%.json}
check "the attestation is also in digests/" bash -c "ls x/digests/sha256 | grep -q '^$id'"
expect 0 "$KINDEX" verify
check "kindex verify passes" contains out "no problems"

# the run's page: what the users wrote, escaped — read back exactly by an HTML parser, no markup of
# theirs in it; in a browser, no script runs and the page draws (screenshot not blank)
page=x/runs/$sid/index.html
cat >page.py <<'PY'
import html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.cells, self.cell, self.scripts = [], None, 0
    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        if tag == "td" and ("class", "u") in attrs:
            self.cell = ""
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.cells.append(self.cell)
            self.cell = None
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
want = sys.argv[2:]
missing = [w for w in want if w not in p.cells]
print(f"{len(p.cells)} cells of user text, {p.scripts} script elements, missing: {missing!r}")
sys.exit(1 if missing or p.scripts else 0)
PY
check "the page shows the note and its author exactly, and no markup of theirs" \
	python3 page.py "$page" "$note" ann "the first look" dan "rerun on the same box" bob
if command -v xmllint >/dev/null; then
	check "the page is well-formed" xmllint --noout "$page"
fi
if command -v chromium-headless-shell >/dev/null; then
	chrome() { timeout 120 chromium-headless-shell --no-sandbox --disable-gpu --hide-scrollbars \
		--enable-logging=stderr --v=0 --window-size=1100,2400 "$@" "file://$tmp/$page"; }
	chrome --dump-dom >dom.html 2>browser.err
	check "in a browser the note is text: no script element in the page's DOM" bash -c \
		"grep -qF '&lt;script&gt;alert(' dom.html && ! grep -q '<script' dom.html"
	chrome --screenshot="$tmp/page.png" >browser.out 2>&1
	seen=$(python3 "$KX_SOURCE_ROOT/tests/tools/png_colours.py" page.png 1f6feb 2>/dev/null || echo none)
	check "the browser draws the page ($seen), with no console error" bash -c \
		"[[ '$seen' =~ ^([0-9]+)\ (coloured|grey) ]] && (( \${BASH_REMATCH[1]} > 8 )) && ! grep -q 'CONSOLE' browser.out"
	[[ -z ${KX_SCREENSHOTS:-} ]] || cp page.png "$KX_SCREENSHOTS/run-page-attested.png"
fi

# one file holding the same attestation twice stores it once
att "$sd" note ',"text":"twice"' >twice.jsonl
att "$sd" note ',"text":"twice"' >>twice.jsonl
expect 0 "$KINDEX" ingest twice.jsonl
check "the same attestation twice in one file: stored once" contains err "1 attestation stored, 1 already present"
expect 0 "$KINDEX" ls "runs/$sid/attestations"
check "and listed once" test "$(wc -l <out)" = 4
finish
