#!/usr/bin/env bats
# docs.bats - `agentrt --help`, each command's --help, the man page and the README's command
# table say the same thing: every command and every option the binary prints is documented,
# and the man page renders without warnings.

load helpers
bats_require_minimum_version 1.5.0

setup() { :; }
teardown() { :; }

MAN=$REPO_ROOT/docs/agentrt.1

# The commands `agentrt --help` lists (two-space indent under "Commands:").
help_commands() {
	"$AGENTRT" --help | awk '/^Commands:/ { f = 1; next } f && /^$/ { exit } f && /^  [a-z]/ { print $1 }'
}

# Every long option the binary's help texts print.
help_options() {
	local c
	{
		"$AGENTRT" --help
		for c in $(help_commands); do "$AGENTRT" "$c" --help 2>&1; done
	} | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

# The long options the man page names (groff writes a dash as \-).
man_options() {
	sed 's/\\-/-/g' "$MAN" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

# docs-help-exit: every command's --help and -h print a usage on stdout and exit 0 (`agentrt
# egress --help` exited 1 with "expected ID": a script asking for the usage saw a failure).
@test "docs-help-exit: every command's --help and -h print its usage on stdout and exit 0" {
	local c n=0 out
	for c in $(help_commands); do
		for h in --help -h; do
			out=$("$AGENTRT" "$c" "$h" 2>/dev/null) || fail "\`agentrt $c $h\` exited $?"
			grep -q '^Usage: agentrt' <<<"$out" || fail "\`agentrt $c $h\` printed no usage on stdout: $out"
		done
		n=$((n + 1))
	done
	[ "$n" -ge 20 ] || fail "only $n commands in agentrt --help"
	# and a missing argument is still an error, its usage on stderr
	run --separate-stderr "$AGENTRT" egress
	[ "$status" -ne 0 ] || fail "egress without arguments exited 0"
	[ -z "$output" ] || fail "usage on stdout for an error: $output"
	grep -q 'expected ID' <<<"$stderr" || fail "$stderr"
}

# docs-commands: each command of `agentrt --help` has its entry in the man page's COMMANDS and
# a row in the README's command table.
@test "docs-commands: every command agentrt --help lists is in the man page and the README's table" {
	local c table
	table=$(awk '/^## Commands/ { f = 1 } f && /^\| `/ { print } f && /^## / && !/Commands/ { exit }' "$REPO_ROOT/README.md")
	[ -n "$table" ] || fail "no command table in README.md"
	for c in $(help_commands); do
		grep -qE "^\.B $c( |$)|\\\\fB$c( |\\\\)" "$MAN" || fail "man page: no entry for \`$c\`"
		grep -q "\`$c\`" <<<"$table" || fail "README command table: no \`$c\`"
	done
}

# docs-options: every long option any help text prints is in the man page (`workspace diff
# --patch` was only in the README), and every agentrt option the man page names is one some
# help text prints (the man page quotes a few options of other tools: listed here).
@test "docs-options: the help texts' long options and the man page's are the same set" {
	local missing extra
	missing=$(comm -23 <(help_options) <(man_options))
	[ -z "$missing" ] || fail "in --help but not in docs/agentrt.1: $missing"
	# git reset --hard, systemd-run --scope, podman run --sdnotify
	extra=$(comm -13 <(help_options) <(man_options) | grep -vxE -- '--(hard|scope|sdnotify)' || true)
	[ -z "$extra" ] || fail "in docs/agentrt.1 but in no --help: $extra"
}

# docs-man-renders: man(1) with warnings on finds nothing (a line starting with a dot, such as
# `.gitignore_global`, was read as an undefined macro and vanished from the page).
@test "docs-man-renders: the man page renders with no warning and keeps every line" {
	command -v man >/dev/null || skip "man is not installed"
	local warn page
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -E UTF-8 -l "$MAN" 2>&1 >/dev/null)
	[ -z "$warn" ] || fail "man --warnings: $warn"
	page=$(LC_ALL=C.UTF-8 MANWIDTH=100 man -E UTF-8 -l "$MAN" 2>/dev/null)
	grep -q 'gitignore_global' <<<"$page" || fail "the sandbox home's .gitignore_global is missing from the page"
	grep -q -- '--patch' <<<"$page" || fail "--patch is missing from the page"
}
