#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Real tools on a mounted Liger import, each checked against `kindex export` of the same store:
# grep -r finds a known externalId in the same files, rsync -a copies the tree exactly and a second
# rsync transfers nothing, sha256sum -c passes in every group and run directory, tar c | tar x
# round-trips byte-exact with mtimes, cp and cat read what the export holds.
. "$(dirname "$0")/mount-lib.sh"

store="$work/store"
export_dir="$work/export"
mnt="$work/mnt"
make_liger_store "$store"
"$KINDEX" -q --store "$store" export "$export_dir" || die "kindex export failed"

# The pusher (docs/mount.md) puts files into the page cache before they are read: a file looked up
# by name; all of a directory that a process which reads what it lists (grep -r, tar) has listed
# to its end; the rest of a directory once a process reads two of its files in a row (rsync).
# walk MNT SECONDS, in a fresh mount: `stat` the group's ranking.tsv, then, as one process, stat
# the group's SHA256SUMS (a LOOKUP: its listings come with attributes from then on), list rank
# directory 01 and read its first file (a reader of what it lists now), list rank directory 02
# (and read nothing there), and read the first two files of the first run's directory in runs/
# by names another process listed (in the directory's order, with attributes: it had stat'ed a
# file); then wait up to SECONDS until fincore sees ranking.tsv, all of 02 and the rest of that
# run's directory resident. Prints "RESIDENT OF", and fails if one of those files reads differently
# from the export. (Every file checked has its dentry from a listing with attributes: fincore's own
# opens look nothing up, and so push nothing. So does the first file read in 01: looked up, it
# would be pushed, and could be in the page cache before its READ — which then never comes.)
group='benchmarks/fused_linear_simpo_loss/forward/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16'
walk() {
	local dirs files n=0 deadline=$((SECONDS + $2))
	mapfile -t dirs < <(cd "$1" && ls -d "$group"/0[12]-* && ls -d runs/* | head -1)
	stat "$1/$group/ranking.tsv" >/dev/null
	mapfile -t files < <(cd "$1" && python3 - "${dirs[@]}" $(python3 -c 'import os, sys; os.stat("README"); print(*os.listdir(sys.argv[1]))' "${dirs[2]}") <<-'EOF'
		import os, sys
		one, two, three = sys.argv[1:4]
		os.stat(os.path.join(os.path.dirname(one), 'SHA256SUMS'))
		open(os.path.join(one, os.listdir(one)[0]), 'rb').read()
		print('\n'.join(os.path.join(two, n) for n in os.listdir(two)))
		for n in sys.argv[4:6]:
		    open(os.path.join(three, n), 'rb').read()
		print('\n'.join(os.path.join(three, n) for n in sys.argv[6:]))
	EOF
	)
	files+=("$group/ranking.tsv")
	while :; do
		n=$(cd "$1" && fincore -n -b -o RES "${files[@]}" | awk '$1 > 0' | wc -l)
		[ "$n" -lt "${#files[@]}" ] && [ $SECONDS -lt $deadline ] || break
		sleep 0.05
	done
	echo "$n ${#files[@]}"
	for f in "${files[@]}"; do cmp -s "$1/$f" "$export_dir/$f" || return 1; done
}
mount_fg "$store" "$mnt" -o nopush
read -r n of <<<"$(walk "$mnt" 1)"
check "-o nopush: no file is read ahead ($n of $of in the page cache)" [ "$n" = 0 -a "$of" -ge 12 ]
unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
mount_fg "$store" "$mnt"
out=$(walk "$mnt" 5) || fail "a file read ahead reads differently from the export"
read -r n of <<<"$out"
check "read ahead: a file stat'ed, a directory a reader listed, the rest of one it reads ($n of $of in the page cache)" \
	[ "$n" = "$of" -a "$of" -ge 12 ]

# grep -r: a published record's externalId (SPEC §5's known check)
id='fused_linear_simpo_loss/forward/huggingface/nvidia-a100-sxm4-80gb/batch4-hidden4096-seq1024-vocab128256-bf16'
(cd "$mnt" && grep -rlF "$id" . | sort) >"$work/grep.mount"
(cd "$export_dir" && grep -rlF "$id" . | sort) >"$work/grep.export"
n=$(wc -l <"$work/grep.mount")
check "grep -r finds the known externalId ($n files)" [ "$n" -gt 3 ]
check "in the same files as in the export" cmp -s "$work/grep.mount" "$work/grep.export"

# rsync -a, then again: nothing to transfer
rsync -a "$mnt/" "$work/rsync/" 2>"$work/rsync.err"
check "rsync -a out of the mount succeeds" [ ! -s "$work/rsync.err" ]
check "and equals the export (diff -r)" diff -r "$work/rsync" "$export_dir"
# (rsync -a copies each link of a hard-linked file as a file of its own, as from any disk: link
# counts are compared after rsync -aH)
listing "$work/rsync" | awk '{ $5 = "" } 1' >"$work/rsync.lst"
listing "$export_dir" | awk '{ $5 = "" } 1' >"$work/export.lst"
check "with the export's sizes, mtimes and modes" cmp -s "$work/rsync.lst" "$work/export.lst"
changes=$(rsync -a --itemize-changes "$mnt/" "$work/rsync/" | wc -l)
check "a second rsync -a --itemize-changes transfers nothing ($changes lines)" [ "$changes" = 0 ]
rsync -aH "$mnt/" "$work/rsync-H/" 2>"$work/rsync.err"
listing "$work/rsync-H" >"$work/rsync-H.lst"
listing "$export_dir" >"$work/export.lst"
check "rsync -aH keeps the documents' hard links: the export's link counts too" \
	cmp -s "$work/rsync-H.lst" "$work/export.lst"
rm -rf "$work/rsync-H"

# sha256sum -c in every directory that has a SHA256SUMS: literally in two, then all of them at once
simpo="$mnt/$group"
check "sha256sum -c SHA256SUMS in a group directory" bash -c "cd '$simpo' && sha256sum -c --quiet SHA256SUMS"
run=$(ls -d "$simpo"/01-* | head -1)
check "sha256sum -c SHA256SUMS in a rank directory" bash -c "cd '$run' && sha256sum -c --quiet SHA256SUMS"
r=$(ls "$mnt/runs" | head -1)
check "sha256sum -c SHA256SUMS in runs/$r" bash -c "cd '$mnt/runs/$r' && sha256sum -c --quiet SHA256SUMS"
# one checklist of every line of every SHA256SUMS, each path made relative to the mount
find "$mnt" -name SHA256SUMS -printf '%P\0' >"$work/sums.list"
dirs=$(tr -cd '\0' <"$work/sums.list" | wc -c)
(cd "$mnt" && xargs -0 awk '{ d = FILENAME; sub(/SHA256SUMS$/, "", d); print substr($0, 1, 66) d substr($0, 67) }' \
	<"$work/sums.list") >"$work/all.sums"
lines=$(wc -l <"$work/all.sums")
check "sha256sum -c passes for every SHA256SUMS ($dirs directories, $lines files)" \
	bash -c "cd '$mnt' && sha256sum -c --quiet '$work/all.sums'"
check "group and run directories all have one" [ "$dirs" -gt 5000 ]

# tar c | tar x
mkdir -p "$work/tar"
tar -C "$mnt" -cf - . | tar -C "$work/tar" -xf -
check "tar c | tar x round-trips byte-exact" diff -r "$work/tar" "$export_dir"
(cd "$work/tar" && find . -type f -printf '%s %T@ %n %p\n' | sort -k4) >"$work/tar.lst"
(cd "$export_dir" && find . -type f -printf '%s %T@ %n %p\n' | sort -k4) >"$work/export.f.lst"
# tar keeps mtimes to the second in its default format: compare those; and hard links
check "with the export's sizes, mtimes and link counts" \
	cmp -s <(awk '{ split($2, t, "."); print $1, t[1], $3, $4 }' "$work/tar.lst") \
	<(awk '{ split($2, t, "."); print $1, t[1], $3, $4 }' "$work/export.f.lst")

# cp and cat
cp "$simpo/ranking.tsv" "$work/ranking.tsv"
check "cp copies a generated file exactly" cmp "$work/ranking.tsv" "${simpo/$mnt/$export_dir}/ranking.tsv"
check "cat of a manifest equals the export's" \
	bash -c "cat '$mnt/runs/$r/manifest.json' | cmp -s - '$export_dir/runs/$r/manifest.json'"
check "a read at an offset (dd skip=1) returns the tail" bash -c \
	"cmp <(dd if='$mnt/README' bs=64 skip=1 status=none) <(dd if='$export_dir/README' bs=64 skip=1 status=none)"

unmount "$mnt" "$daemon" || fail "the daemon did not exit cleanly"
check "the daemon wrote nothing to stderr" [ ! -s "$mnt.err" ]

# Four grep -r of the same tree at once, on fresh mounts: they list the same directories to their
# ends (each end pushes the directory's files, before it is answered) and read the same files.
# A store into the page cache waits for the lock of its page, which a READ of another grep can
# hold until a worker answers it: the daemon must answer it meanwhile (src/fs/loop.c), or both
# wait for ever. Three rounds; a round stuck for 120 s is ended by aborting the connection.
greps_done() { ls "$work" | grep -c '^grep\.done\.'; }
concurrent() {
	local m="$work/mnt-concurrent" greps=() i rc=0 deadline=$((SECONDS + 120))
	mount_fg "$store" "$m"
	rm -f "$work"/grep.done.*
	for i in 1 2 3 4; do
		(cd "$m" && grep -rlF "$id" . | sort >"$work/grep.$i"; touch "$work/grep.done.$i") &
		greps+=($!)
	done
	while [ $SECONDS -lt $deadline ] && [ "$(greps_done)" -lt 4 ]; do sleep 0.1; done
	if [ "$(greps_done)" -lt 4 ]; then
		echo "# stuck: aborting the connection" >&2
		local ctl=/sys/fs/fuse/connections mounted=
		mountpoint -q $ctl || { mount -t fusectl fusectl $ctl && mounted=1; }
		echo 1 >"$ctl/$(mountpoint -d "$m" | cut -d: -f2)/abort"
		[ -z "$mounted" ] || umount $ctl
		rc=1
	fi
	for i in "${greps[@]}"; do wait "$i" || rc=1; done
	for i in 1 2 3 4; do cmp -s "$work/grep.$i" "$work/grep.export" || rc=1; done
	unmount "$m" "$daemon" || rc=1
	[ ! -s "$m.err" ] || { cat "$m.err" >&2; rc=1; }
	return $rc
}
ok=0
for round in 1 2 3; do concurrent && ok=$((ok + 1)); done
check "four grep -r at once find the same files, in each of 3 fresh mounts ($ok of 3)" [ "$ok" = 3 ]

# the loop's settings: libfuse's single-threaded loop (-s), one worker that never polls
for opts in "-s" "-o spin=0,max_threads=1"; do
	mount_fg "$store" "$work/mnt-opts" $opts
	(cd "$work/mnt-opts" && grep -rlF "$id" . | sort) >"$work/grep.opts"
	check "kindexfs $opts: grep -r finds the same files" cmp -s "$work/grep.opts" "$work/grep.export"
	unmount "$work/mnt-opts" "$daemon" || fail "kindexfs $opts did not exit cleanly"
	check "kindexfs $opts: nothing on stderr" [ ! -s "$work/mnt-opts.err" ]
done
# grep -r after find: find's listings leave the files' entries out, and the kernel keeps them; a
# reader that follows must not look up (and read) every file by name — once it looks up a file of
# one, the bare listings after it are dropped and it lists them anew. Counted in the daemon's
# debug log (-d: a line per request), over one kernel's tree. The drop is the pusher thread's,
# so how many files grep looks up before it lands depends on the load: 66 of 340 on an idle
# machine, 122 with the rest of the suite running beside it; every file is what it guards against.
kernel=benchmarks/fused_linear_simpo_loss
mount_fg "$store" "$work/mnt-relist" -d
find "$work/mnt-relist/$kernel" >/dev/null
before=$(grep -c 'opcode: LOOKUP' "$work/mnt-relist.err")
(cd "$work/mnt-relist" && grep -rlF "$id" "$kernel" | sort) >"$work/grep.relist"
lookups=$(($(grep -c 'opcode: LOOKUP' "$work/mnt-relist.err") - before))
files=$(find "$export_dir/$kernel" -type f | wc -l)
check "grep -r after find finds the same files" \
	cmp -s "$work/grep.relist" <(grep "^./$kernel/" "$work/grep.export" | sed 's|^\./||')
check "and looks up few of them by name: $lookups LOOKUPs for $files files" [ "$lookups" -lt $((files / 2)) ]
unmount "$work/mnt-relist" "$daemon" || fail "kindexfs -d did not exit cleanly"

# find | xargs cat, twice: cat looks up one file in each of the directories find listed bare, and
# lists nothing; dropping those listings (above) would make the second find list them all again —
# two READDIRPLUS and a GETATTR a run. The second pass, counted as above, sends next to nothing.
findcat() { find "$1/benchmarks" -name manifest.json | xargs -r cat | wc -c; }
mount_fg "$store" "$work/mnt-findcat" -d
first=$(findcat "$work/mnt-findcat")
before=$(grep -c 'opcode:' "$work/mnt-findcat.err")
second=$(findcat "$work/mnt-findcat")
requests=$(($(grep -c 'opcode:' "$work/mnt-findcat.err") - before))
runs=$(find "$export_dir/benchmarks" -name manifest.json | wc -l)
check "find | xargs cat reads what the export holds, twice ($first, $second bytes)" \
	[ "$first" = "$(findcat "$export_dir")" -a "$second" = "$first" ]
check "and its second pass sends few requests: $requests for $runs runs" [ "$requests" -lt $((runs / 20)) ]
unmount "$work/mnt-findcat" "$daemon" || fail "kindexfs -d did not exit cleanly"

"$KINDEXFS" "$store" "$work/mnt-opts" -o spin=1ms 2>"$work/spin.err"
check "-o spin=1ms is refused (exit status 2) naming the option" \
	[ $? = 2 -a "$(head -c 30 "$work/spin.err")" = "kindexfs: invalid -o spin=1ms:" ]
finish
