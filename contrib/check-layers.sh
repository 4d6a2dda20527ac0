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
for dir in "${!rank[@]}"; do
	[ -d "$dir" ] || fail "$dir: layer folder missing (update contrib/check-layers.sh)"
done
for d in */; do
	d=${d%/}
	case $d in build | build-* | tests | bench | contrib | integration | docs | mk) continue ;; esac
	if [ -n "$(list_c "$d")" ] && [ -z "${rank[$d]:-}" ]; then
		fail "$d: C sources in a folder that is not a layer (add it to contrib/check-layers.sh)"
	fi
done

while IFS= read -r f; do
	src=${f%%/*}
	while IFS=: read -r line inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		case $inc in
		../* | */../* | ./*) fail "$f:$line: \"$inc\": include as \"folder/file.h\", not relative" ;;
		*/*) ;;
		*) fail "$f:$line: \"$inc\": include as \"folder/file.h\"" ;;
		esac
		[ -e "$inc" ] || [[ $inc == ../* ]] || fail "$f:$line: \"$inc\": no such file (from the top of the tree)"
		dst=${inc%%/*}
		[ -n "${rank[$src]:-}" ] || continue
		[ "$dst" = "$src" ] && continue
		if [ -z "${rank[$dst]:-}" ]; then
			fail "$f:$line: \"$inc\": $dst/ is not a layer"
		elif [ "${rank[$dst]}" -ge "${rank[$src]}" ]; then
			fail "$f:$line: \"$inc\": $src/ (layer ${rank[$src]}) must not include from $dst/ (layer ${rank[$dst]})"
		fi
		edges["$src -> $dst"]=$((${edges["$src -> $dst"]:-0} + 1))
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | cut -d: -f1,2- || true)
done < <(list_c)

# Unique file names across the layer folders (but internal.h, each folder's private header).
dups=$(list_c "${!rank[@]}" | xargs -n1 basename | grep -vx internal.h | sort | uniq -d)
for n in $dups; do
	fail "$n: the same file name in $(list_c "${!rank[@]}" | grep -E "(^|/)$n\$" | tr '\n' ' ')"
done

# No folder above a quarter of the C code.
total=$(list_c | xargs cat | wc -l)
declare -A size=()
while IFS= read -r f; do
	d=${f%%/*}
	size[$d]=$((${size[$d]:-0} + $(wc -l <"$f")))
done < <(list_c)
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
