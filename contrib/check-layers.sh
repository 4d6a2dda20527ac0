#!/bin/bash
# check-layers.sh - the source folders are layers: check that the includes say so.
#
# Usage: contrib/check-layers.sh [-v]     (-v also prints the folder graph and sizes)
#
# A folder includes only from itself and from folders of a lower layer, never from a
# peer or from above, so the include graph between folders has no loop:
#
#   5 cli
#   4 container
#   3 monitor datadir
#   2 profile cgroups netfilter workspace audit
#   1 oci os
#   0 common
#
# Also checked: one include style (`#include "folder/file.h"`, no "../", no bare "file.h")
# in every C file of the tree (tests/ and bench/ too); no two files of the layer folders
# with the same name (but each folder's private internal.h); no folder above a quarter of the C code.  Exit status 1 and one line
# per violation (`file:line: ...`) when anything is wrong.
set -euo pipefail

cd "$(dirname "$0")/.."
verbose=0
[ "${1:-}" = -v ] && verbose=1

declare -A rank=(
	[common]=0
	[oci]=1 [os]=1
	[profile]=2 [cgroups]=2 [netfilter]=2 [workspace]=2 [audit]=2
	[monitor]=3 [datadir]=3
	[container]=4
	[cli]=5
)

# Tracked files plus new ones not yet added (a helper's worktree), never build output.
list_c() {
	git ls-files -co --exclude-standard -- "$@" 2>/dev/null | sort -u | grep -E '\.(c|h)$' || true
}

bad=0
fail() {
	echo "$1"
	bad=$((bad + 1))
}

declare -A edges=()
# the tree's C files, listed once
mapfile -t files < <(list_c)
for dir in "${!rank[@]}"; do
	[ -d "$dir" ] || fail "$dir: layer folder missing (update contrib/check-layers.sh)"
done
for d in */; do
	d=${d%/}
	case $d in build | build-* | tests | bench | contrib | integration | docs | mk) continue ;; esac
	if [ -z "${rank[$d]:-}" ] && printf '%s\n' "${files[@]}" | grep -q "^$d/"; then
		fail "$d: C sources in a folder that is not a layer (add it to contrib/check-layers.sh)"
	fi
done

# Every include of every file in one pass (grep, then awk): the style, the file's existence and
# the direction of each edge between layer folders.
ranks=$(for d in "${!rank[@]}"; do printf '%s=%s ' "$d" "${rank[$d]}"; done)
incs=$(printf '%s\0' "${files[@]}" | xargs -0 -r grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' || true)
# the includes that name no file (from the top of the tree), checked once each
missing=$(sed -E 's/^[^"]*"([^"]*)".*/\1/' <<<"$incs" | sort -u | while IFS= read -r inc; do
	[ -n "$inc" ] && [ ! -e "$inc" ] && [[ $inc != ../* ]] && printf '%s\n' "$inc"
done || true)
report=$(awk -v ranks="$ranks" -v missing="$missing" '
	BEGIN {
		n = split(ranks, kv, " ")
		for (i = 1; i <= n; i++) { split(kv[i], p, "="); rank[p[1]] = p[2] }
		m = split(missing, ms, "\n")
		for (i = 1; i <= m; i++) if (ms[i] != "") miss[ms[i]] = 1
	}
	{
		f = $0; sub(/:.*/, "", f)
		rest = substr($0, length(f) + 2)
		line = rest; sub(/:.*/, "", line)
		inc = rest; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
		if (inc ~ /^\.\.\// || inc ~ /\/\.\.\// || inc ~ /^\.\//)
			print "BAD " f ":" line ": \"" inc "\": include as \"folder/file.h\", not relative"
		else if (inc !~ /\//)
			print "BAD " f ":" line ": \"" inc "\": include as \"folder/file.h\""
		if (inc in miss)
			print "BAD " f ":" line ": \"" inc "\": no such file (from the top of the tree)"
		src = f; sub(/\/.*/, "", src)
		dst = inc; sub(/\/.*/, "", dst)
		if (!(src in rank) || dst == src) next
		if (!(dst in rank))
			print "BAD " f ":" line ": \"" inc "\": " dst "/ is not a layer"
		else if (rank[dst] + 0 >= rank[src] + 0)
			print "BAD " f ":" line ": \"" inc "\": " src "/ (layer " rank[src] ") must not include from " dst "/ (layer " rank[dst] ")"
		edges[src " -> " dst]++
	}
	END { for (e in edges) print "EDGE " e " " edges[e] }' <<<"$incs")
while IFS= read -r r; do
	case $r in
	"BAD "*) fail "${r#BAD }" ;;
	"EDGE "*)
		r=${r#EDGE }
		edges["${r% *}"]=${r##* }
		;;
	esac
done <<<"$report"

# Unique file names across the layer folders (but internal.h, each folder's private header).
layer_re="^($(IFS='|'; echo "${!rank[*]}"))/"
layer_files=$(printf '%s\n' "${files[@]}" | grep -E "$layer_re" || true)
dups=$(sed 's|.*/||' <<<"$layer_files" | grep -vx internal.h | sort | uniq -d || true)
for n in $dups; do
	fail "$n: the same file name in $(grep -E "(^|/)$n\$" <<<"$layer_files" | tr '\n' ' ')"
done

# No folder above a quarter of the C code.
declare -A size=()
total=0
while read -r n f; do
	[ "$f" = total ] && continue
	d=${f%%/*}
	size[$d]=$((${size[$d]:-0} + n))
	total=$((total + n))
done < <(printf '%s\0' "${files[@]}" | xargs -0 -r wc -l)
for d in "${!size[@]}"; do
	if [ $((size[$d] * 4)) -gt "$total" ]; then
		fail "$d/: ${size[$d]} of $total lines of C, more than a quarter"
	fi
done

if [ "$verbose" -eq 1 ]; then
	echo "# folder include graph (includes per edge):"
	for e in "${!edges[@]}"; do echo "$e ${edges[$e]}"; done | sort | sed 's/^/#   /'
	echo "# lines of C per folder (total $total):"
	for d in "${!size[@]}"; do printf '%6d %s\n' "${size[$d]}" "$d"; done | sort -rn | sed 's/^/#   /'
fi
if [ "$bad" -gt 0 ]; then
	echo "check-layers: $bad problem(s)"
	exit 1
fi
echo "check-layers: ok (${#edges[@]} folder edges, all downward)"
