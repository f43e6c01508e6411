#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tests of the fairsem command: every usage error, every errno it reports,
# the exit statuses of fairsem(1), and what "fairsem run" promises: the
# permits come back when CMD ends, however it ends.  Prints TAP.
#
# POSIX sh (busybox ash in the VM).  The command under test is $FAIRSEM, or
# fairsem next to this script, or fairsem in PATH.  In the VM it runs built
# into build/selftests/bin/fairsem_cmd_test (fairsem_cmd_test.c), which sets
# FAIRSEM, FAIRSEM_AS (the command as another user: "$FAIRSEM_AS UID ARG...")
# and FAIRSEM_RELEASE (the top VERSION file's release, which --version must
# print; whoever runs this script by hand sets it).  Without /dev/fairsem only the tests that need no semaphore run;
# the rest are reported as skipped.

here=$(cd "$(dirname "$0")" && pwd)
for f in "$FAIRSEM" "$here/fairsem" "$(command -v fairsem 2>/dev/null)"; do
	if [ -n "$f" ] && [ -x "$f" ] && [ ! -d "$f" ]; then
		FAIRSEM=$f
		break
	fi
done
export FAIRSEM

MAX=4611686018427387904		# FAIRSEM_MAX_PERMITS
tmp=${TMPDIR:-/tmp}/fairsem_cmd_test.$$
mkdir -p "$tmp" || exit 1
out=$tmp/out
err=$tmp/err
bg_pids=
n=0
passed=0
failed=0
skipped=0

cleanup() {
	for p in $bg_pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "TAP version 13"

pass() {
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n $1"
}

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n $1"
	shift
	for line in "$@"; do
		echo "# $line"
	done
	if [ -s "$err" ]; then
		sed 's/^/# stderr: /' "$err"
	fi
}

skip() {
	n=$((n + 1))
	skipped=$((skipped + 1))
	echo "ok $n $1 # SKIP $2"
}

if [ -z "$FAIRSEM" ]; then
	fail "find the fairsem command" "set FAIRSEM=/path/to/fairsem"
	echo "1..$n"
	exit 1
fi
echo "# testing $FAIRSEM"

# js_taken: the tokens taken of the jobserver js.
js_taken() {
	"$FAIRSEM" info js 2>/dev/null | sed -n 's/^taken:	//p'
}

# wait_taken N: up to 600 naps (30 s or more) for js's taken to be N.
wait_taken() {
	i=0
	while [ "$(js_taken)" != "$1" ] && [ $i -lt 600 ]; do
		nap
		i=$((i + 1))
	done
}

# load FIGURE: a synthetic /proc/loadavg, its 1-minute average FIGURE.
load() {
	echo "$1 0.00 0.00 1/100 1" >"$tmp/proc/loadavg.new" &&
		mv "$tmp/proc/loadavg.new" "$tmp/proc/loadavg"
}

# gov_status: fairsem status, where the governors of the tests write.
gov_status() {
	FAIRSEM_GOVERNOR_DIR=$tmp/gov "$FAIRSEM" status >"$out" 2>&1
}

# The governor on the jobserver js (4 tokens), fed a synthetic load
# average (--proc-dir): 9 is past its high mark of 4, 0 under its low
# mark of 2, whenever it is read; the PSI signals are tested on the host
# (governor_test) and under a real memory hog in the Debian VM
# (jobserver/service-checks.sh).  Counts tokens; never times them.
governor_tests() {
	mkdir -p "$tmp/proc" "$tmp/gov"
	load 9.00
	t "jobserver --govern: a mode of its own" 64 "--govern runs nothing: unexpected argument 'make'" \
		"$F" jobserver --govern js make
	t "jobserver --govern: a bad mark" 64 "the mark to come back at must be below the other" \
		"$F" jobserver --govern js --memory-pressure 2:10
	t "jobserver --govern of a semaphore that is no jobserver" 65 \
		"$names/plain is not a jobserver semaphore" "$F" jobserver --govern plain
	FAIRSEM_GOVERNOR_DIR=$tmp/gov "$F" jobserver --govern js \
		--memory-pressure off --load-average 4:2 --proc-dir "$tmp/proc" \
		--interval 100 2>"$tmp/gov.err" &
	gov=$!
	bg_pids="$bg_pids $gov"
	wait_taken 4
	if [ "$(js_taken)" = 4 ]; then
		pass "governor: over the high mark, every token withheld (4 of 4)"
	else
		fail "governor: over the high mark, every token withheld (4 of 4)" \
			"taken $(js_taken)" "$(cat "$tmp/gov.err")"
	fi
	gov_status
	has "status: the governor's tokens and why" \
		"governor $gov withholds 4 (target 4): load average 9.0 > 4"
	# Its governor's handle holds the 4, as the kernel counts them.
	if grep -qE "^ +$gov +[0-9]+ +4 +- " "$out"; then
		pass "status: the governor's handle holds the 4"
	else
		fail "status: the governor's handle holds the 4" "stdout: $(cat "$out")"
	fi
	kill -KILL "$gov"
	wait "$gov" 2>/dev/null
	v=$(js_taken)
	if [ "$v" = 0 ]; then
		pass "governor: kill -9 gives back every withheld token at once (4 of 4)"
	else
		fail "governor: kill -9 gives back every withheld token at once (4 of 4)" "taken $v"
	fi
	gov_status
	has "status: a dead governor withholds nothing" \
		"governor $gov is gone: it withholds nothing"
	# Again, capped; then the load falls: back to 0, the governor alive.
	FAIRSEM_GOVERNOR_DIR=$tmp/gov "$F" jobserver --govern js \
		--memory-pressure off --load-average 4:2 --proc-dir "$tmp/proc" \
		--interval 100 --max-withheld 3 2>"$tmp/gov.err" &
	gov=$!
	bg_pids="$bg_pids $gov"
	wait_taken 3
	v=$(js_taken)
	nap; nap; nap; nap
	if [ "$v" = 3 ] && [ "$(js_taken)" = 3 ]; then
		pass "governor: --max-withheld 3 withholds 3 of 4, no more"
	else
		fail "governor: --max-withheld 3 withholds 3 of 4, no more" "taken $v, then $(js_taken)"
	fi
	load 3.00
	nap; nap; nap; nap
	v=$(js_taken)
	if [ "$v" = 3 ]; then
		pass "governor: between the marks (load 3, marks 4 and 2), it holds 3"
	else
		fail "governor: between the marks (load 3, marks 4 and 2), it holds 3" "taken $v"
	fi
	load 0.50
	wait_taken 0
	v=$(js_taken)
	if [ "$v" = 0 ] && kill -0 "$gov" 2>/dev/null; then
		pass "governor: under the low mark, every token back, the governor alive"
	else
		fail "governor: under the low mark, every token back, the governor alive" \
			"taken $v" "$(cat "$tmp/gov.err")"
	fi
	gov_status
	has "status: the governor withholds 0 and says why" \
		"governor $gov withholds 0 (target 0): load average 0.5 <= 2"
	kill -TERM "$gov"
	wait "$gov"
	v=$?
	if [ "$v" = 0 ] && [ ! -e "$tmp/gov/js" ]; then
		pass "governor: SIGTERM ends it (exit 0) and removes its state"
	else
		fail "governor: SIGTERM ends it (exit 0) and removes its state" "exit $v" "$(ls "$tmp/gov")"
	fi
	t "jobserver --set -j9" 0 "" "$F" jobserver --set js -j9
	has "jobserver --set: says the old and new -j" "$names/js: -j9 (8 tokens), was -j5"
	t "info after --set" 0 "" "$F" info js
	has "jobserver --set -j9: 8 tokens" "limit:	8"
	t "jobserver --set -j5" 0 "" "$F" jobserver --set js -j5
	t "jobserver --set without -j" 64 "--set needs -j N" "$F" jobserver --set js
	t "jobserver --set of a semaphore that is no jobserver" 65 \
		"$names/plain is not a jobserver semaphore" "$F" jobserver --set plain -j3
}

# t NAME STATUS MESSAGE CMD [ARG]...
# Runs CMD; passes when it exits with STATUS and says MESSAGE (a fixed
# string) in exactly one line on stderr that starts with "fairsem: ".
# MESSAGE "" wants an empty stderr, "-" checks nothing on stderr.  stdout is
# left in $out.
t() {
	name=$1 want=$2 msg=$3
	shift 3
	"$@" >"$out" 2>"$err" </dev/null
	got=$?
	if [ "$got" != "$want" ]; then
		fail "$name" "exit status $got, wanted $want"
	elif [ "$msg" = "-" ]; then
		pass "$name"
	elif [ -z "$msg" ] && [ -s "$err" ]; then
		fail "$name" "stderr is not empty"
	elif [ -z "$msg" ]; then
		pass "$name"
	elif [ "$(wc -l <"$err")" -ne 1 ]; then
		fail "$name" "wanted one line on stderr"
	elif ! grep -q '^fairsem: ' "$err"; then
		fail "$name" "stderr does not start with 'fairsem: '"
	elif ! grep -qF -- "$msg" "$err"; then
		fail "$name" "stderr does not say: $msg"
	else
		pass "$name"
	fi
}

# has NAME TEXT: the last $out contains the fixed string TEXT.
has() {
	if grep -qF -- "$2" "$out"; then
		pass "$1"
	else
		fail "$1" "stdout lacks: $2" "stdout: $(cat "$out")"
	fi
}

# value FD KEY: one field of "fairsem info --fd FD".
value() {
	"$FAIRSEM" info --fd "$1" 2>/dev/null | sed -n "s/^$2:	//p"
}

# expect_value NAME FD KEY VALUE
expect_value() {
	v=$(value "$2" "$3")
	if [ "$v" = "$4" ]; then
		pass "$1"
	else
		fail "$1" "$3 is '$v', wanted '$4'"
	fi
}

nap() {
	sleep 0.05 2>/dev/null || sleep 1
}

# wait_value FD KEY VALUE: up to 10 s for it to show.
wait_value() {
	i=0
	while [ "$(value "$1" "$2")" != "$3" ] && [ $i -lt 200 ]; do
		nap
		i=$((i + 1))
	done
}

# bg CMD...: start CMD in the background; its pid is in $bg.
bg() {
	"$@" >"$tmp/bg.out" 2>"$tmp/bg.err" </dev/null &
	bg=$!
	bg_pids="$bg_pids $bg"
}

# bg_status NAME PID STATUS: PID ended with STATUS.
bg_status() {
	wait "$2"
	got=$?
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "exit status $got, wanted $3" "stderr: $(cat "$tmp/bg.err")"
	fi
}

F=$FAIRSEM

# Name squatting and private instances, as two users (root only: the VM).
# $FAIRSEM_AS UID ARG... is the command as user UID, with umask 0.
two_users() {
	if [ "$(id -u)" != 0 ] || [ -z "$FAIRSEM_AS" ]; then
		skip "two users" "needs root and fairsem-as (the VM)"
		return
	fi
	AS=$FAIRSEM_AS
	t "another user makes a name first" 0 "" "$AS" 1001 create squat 1000
	t "run --create refuses another user's name, naming its owner" 77 \
		"$names/squat belongs to uid 1001, not to you (uid 1000)" \
		"$AS" 1000 run --name squat --create 1 -- true
	t "run --create --any-owner uses another user's name" 0 "" \
		"$AS" 1000 run --name squat --create 1 --any-owner -- true
	t "run without --create uses the name it is given" 0 "" \
		"$AS" 1000 run --name squat -- true
	t "the directory's owner makes a name" 0 "" "$AS" 0 create shared 1
	t "run --create trusts the directory owner's name" 0 "" \
		"$AS" 1000 run --name shared --create 1 -- true
	t "a user makes a name" 0 "" "$AS" 1000 create mine 1
	t "run --create trusts the caller's own name" 0 "" \
		"$AS" 1000 run --name mine --create 1 -- true
	# The directory is opened once, with O_PATH, and the owner rule reads
	# it through that descriptor: search permission on it is enough.
	mode=$(stat -c '%a' "$names")
	chmod 1733 "$names"
	t "run --create of an existing name needs no read permission on its directory" \
		0 "" "$AS" 1000 run --name mine --create 1 -- true
	chmod "$mode" "$names"
	t "jobserver --name refuses another user's name, naming its owner" 77 \
		"$names/squat belongs to uid 1001, not to you (uid 1000)" \
		"$AS" 1000 jobserver --name squat -j 2 -- true
	t "rm the names of two users" 0 "" "$F" rm squat shared mine
	mkdir -p "$tmp/rt" && chown 1000:1000 "$tmp/rt" && chmod 0755 "$tmp/rt"
	t "mount --user" 0 "" env XDG_RUNTIME_DIR="$tmp/rt" "$F" mount --user
	if [ "$(stat -c '%a %u %g' "$tmp/rt/fairsem")" = "700 1000 1000" ]; then
		pass "mount --user: mode 0700, the user's"
	else
		fail "mount --user: mode 0700, the user's" \
			"$(stat -c '%a %u %g' "$tmp/rt/fairsem")"
	fi
	t "mount --user keeps other users out" 77 "$tmp/rt/fairsem/x: permission denied" \
		env FAIRSEM_DIR="$tmp/rt/fairsem" "$AS" 1001 create x 1
	t "mount --user: the user makes names there" 0 "" \
		env FAIRSEM_DIR="$tmp/rt/fairsem" "$AS" 1000 create x 1
	umount "$tmp/rt/fairsem"
}

# ---- the command line: no semaphore needed ----

t "no command" 64 "no command given" "$F"
t "--help" 0 "" "$F" --help
has "--help lists run" "fairsem run"
t "help" 0 "" "$F" help
has "help lists status" "status"
t "help run" 0 "" "$F" help run
has "help run is run's help" "Usage: fairsem run"
t "help of an unknown command" 64 "unknown command 'frob'" "$F" help frob
t "--version" 0 "" "$F" --version
# $FAIRSEM_RELEASE: the top VERSION file, from whoever runs this script.
if [ -z "$FAIRSEM_RELEASE" ]; then
	fail "--version prints the release" "set FAIRSEM_RELEASE to the top VERSION file's"
elif [ "$(cat "$out")" = "fairsem $FAIRSEM_RELEASE" ]; then
	pass "--version prints the release"
else
	fail "--version prints the release" "stdout: $(cat "$out")" \
		"wanted: fairsem $FAIRSEM_RELEASE"
fi
t "unknown command" 64 "unknown command 'frob'" "$F" frob
t "unknown top-level option" 64 "unknown option '--frob'" "$F" --frob
for sub in init run acquire release add remove close info status create rm mount jobserver top; do
	t "$sub --help" 0 "" "$F" "$sub" --help
	has "$sub --help shows its usage" "Usage: fairsem $sub"
done
t "init -h" 0 "" "$F" init -h
t "top -d 0" 64 "bad delay '0' (0.1 to 86400 seconds)" "$F" top -d 0
t "top -n 0" 64 "bad count '0'" "$F" top -n 0
t "top with two names" 64 "unexpected operand 'b'" "$F" top a b
t "top: an unknown option" 64 "unknown option '--frob'" "$F" top --frob
t "init without --fd" 64 "--fd N is required" "$F" init 3
t "init without PERMITS" 64 "PERMITS is missing" "$F" init --fd 7
t "init with two PERMITS" 64 "unexpected argument '4'" "$F" init --fd 7 3 4
t "--fd not a number" 64 "--fd wants a file descriptor number, not 'x'" \
	"$F" init --fd x 3
t "--fd negative" 64 "--fd wants a file descriptor number, not '-1'" \
	"$F" info --fd=-1
t "--fd too big" 64 "--fd wants a file descriptor number" \
	"$F" info --fd 2147483648
t "--fd without its value" 64 "option '--fd' needs an argument" \
	"$F" info --fd
t "PERMITS not a number" 64 "PERMITS wants a number from 0 to $MAX" \
	"$F" init --fd 7 abc
t "PERMITS past 64 bits" 64 "not '18446744073709551616'" \
	"$F" init --fd 7 18446744073709551616
t "negative PERMITS" 64 "unknown option '-3'" "$F" init --fd 7 -3
t "unknown long option" 64 "unknown option '--frob'" "$F" info --fd 7 --frob
t "unknown short option" 64 "unknown option '-x'" "$F" info --fd 7 -x
t "option of another command" 64 "option '--lifo' does not apply to release" \
	"$F" release --lifo --fd 7
t "short option of another command" 64 "option '-n' does not apply to info" \
	"$F" info --fd 7 -n 2
t "run without a command" 64 "no command given" "$F" run --fd 7
t "run with --fd and --name" 64 "--fd and --name exclude each other" \
	"$F" run --fd 7 --name x -- true
t "run without --fd or --name" 64 "--fd N or --name NAME is required" \
	"$F" run -- true
t "run --lifo without --create" 64 "--lifo, --prio, --fast, --mode and --any-owner need --create" \
	"$F" run --name x --lifo -- true
# jobserver parses its own line: -j N, --fifo, --name, --create NAME.
t "jobserver without a command" 64 "no command given" "$F" jobserver -j 4
t "jobserver -j 0" 64 "-j wants a number of jobs from 1 to $((MAX + 1)), not '0'" \
	"$F" jobserver -j 0 -- true
t "jobserver -j not a number" 64 "-j wants a number of jobs from 1 to" \
	"$F" jobserver -jmany -- true
t "jobserver -j without its value" 64 "option '-j' needs an argument" \
	"$F" jobserver -j
t "jobserver: an unknown option" 64 "unknown option '--frob'" \
	"$F" jobserver --frob -- true
t "jobserver --create without -j" 64 "--create needs -j N" \
	"$F" jobserver --create js
t "jobserver --create runs nothing" 64 "--create makes a name and runs nothing: unexpected argument 'make'" \
	"$F" jobserver --create js -j 4 make
t "jobserver --create with --fifo" 64 "--create excludes --fifo and --name" \
	"$F" jobserver --create js -j 4 --fifo
t "jobserver --mode without a name" 64 "--mode needs --create or --name" \
	"$F" jobserver --mode 0600 -- true
t "jobserver --mode not octal" 64 "--mode wants octal permission bits up to 0777, not '0999'" \
	"$F" jobserver --create js -j 4 --mode 0999
t "jobserver --name empty" 64 "--name wants a name, not ''" \
	"$F" jobserver --name "" -- true
t "jobserver: options end at COMMAND" 64 "no command given" \
	"$F" jobserver -j 2 --
t "run --create not a number" 64 "--create wants a number of permits from 0 to $MAX, not 'many'" \
	"$F" run --name x --create many -- true
t "create without PERMITS" 64 "NAME and PERMITS are wanted" "$F" create x
t "create --mode not octal" 64 "--mode wants octal permission bits up to 0777, not '0888'" \
	"$F" create x 1 --mode 0888
t "create --mode above 0777" 64 "--mode wants octal permission bits up to 0777, not '1777'" \
	"$F" create x 1 --mode 1777
t "create --lifo --prio" 64 "--lifo and --prio exclude each other" \
	"$F" create x 1 --lifo --prio
t "info with --fd and NAME" 64 "--fd and NAME exclude each other" \
	"$F" info --fd 7 x
t "info without --fd or NAME" 64 "--fd N or NAME is required" "$F" info
t "rm without NAME" 64 "NAME is missing" "$F" rm
t "mount with two directories" 64 "unexpected argument 'b'" "$F" mount a b
t "info of a missing directory" 74 "$tmp/nodir does not exist (see 'fairsem mount')" \
	env FAIRSEM_DIR="$tmp/nodir" "$F" info x
mkdir -p "$tmp/plain" && : >"$tmp/plain/file"
t "info of a file that is no semaphore" 67 "$tmp/plain/file is not a fairsem semaphore" \
	"$F" info "$tmp/plain/file"
t "rm refuses a file that is no semaphore" 67 "$tmp/plain/file is not a fairsem semaphore" \
	"$F" rm "$tmp/plain/file"
if [ -e "$tmp/plain/file" ]; then
	pass "rm left the file alone"
else
	fail "rm left the file alone"
fi
t "run, -- and no command" 64 "no command given" "$F" run --fd 7 --
t "-n without its value" 64 "option '-n' needs an argument" "$F" run --fd 7 -n
t "-n not a number names the real maximum" 64 "-n/--count wants a number from 1 to $MAX, not 'two'" \
	"$F" run --fd 7 -n two true
t "COUNT not a number names the real maximum" 64 "COUNT wants a number from 1 to $MAX, not 'x'" \
	"$F" add --fd 7 x
t "PERMITS not a number names the real maximum" 64 "PERMITS wants a number from 0 to $MAX, not 'x'" \
	"$F" create x x
t "mount refuses an empty DIR" 64 "argument 1 is empty" "$F" mount ""
t "create refuses an empty NAME" 64 "argument 1 is empty" "$F" create "" 1
t "create refuses an empty PERMITS" 64 "argument 2 is empty" "$F" create x ""
t "rm refuses an empty NAME" 64 "argument 2 is empty" "$F" rm x ""
t "info refuses an empty NAME" 64 "argument 1 is empty" "$F" info ""
t "init refuses an empty PERMITS" 64 "argument 1 is empty" "$F" init --fd 7 ""
t "mount refuses empty options" 64 "-o/--options wants options, not ''" \
	"$F" mount "$tmp/x" -o ""
t "run --any-owner without --create" 64 "--lifo, --prio, --fast, --mode and --any-owner need --create" \
	"$F" run --name x --any-owner -- true
t "--user is mount's" 64 "option '--user' does not apply to run" \
	"$F" run --fd 7 --user -- true
t "mount --user without DIR needs XDG_RUNTIME_DIR" 64 "--user without DIR needs \$XDG_RUNTIME_DIR" \
	env -u XDG_RUNTIME_DIR "$F" mount --user
# Whatever makes it fail here (no module, no privilege, a bad option).
"$F" mount "$tmp/made/by/mount" -o frob=1 >/dev/null 2>"$err"
st=$?
if [ "$st" != 0 ] && [ ! -e "$tmp/made" ]; then
	pass "a failed mount leaves no directory behind"
else
	fail "a failed mount leaves no directory behind" "exit $st; $(ls -d "$tmp/made" 2>&1)"
fi
mkdir -p "$tmp/keep"
"$F" mount "$tmp/keep" -o frob=1 >/dev/null 2>"$err"
st=$?
if [ "$st" != 0 ] && [ -d "$tmp/keep" ]; then
	pass "a failed mount leaves a directory it did not make"
else
	fail "a failed mount leaves a directory it did not make" "exit $st"
fi
t "--timeout not a number" 64 "--timeout wants seconds (like 5 or 0.25), not 'soon'" \
	"$F" run --fd 7 --timeout soon -- true
t "--timeout negative" 64 "--timeout wants seconds" \
	"$F" run --fd 7 --timeout=-1 -- true
t "--timeout just a dot" 64 "--timeout wants seconds" \
	"$F" run --fd 7 --timeout . -- true
t "--try with --timeout" 64 "--try and --timeout exclude each other" \
	"$F" run --fd 7 --try --timeout 1 -- true
t "add without COUNT" 64 "COUNT is missing" "$F" add --fd 7
t "remove COUNT not a number" 64 "COUNT wants a number" "$F" remove --fd 7 x
t "status takes no argument" 64 "unexpected argument 'now'" "$F" status now
t "close takes no argument" 64 "unexpected argument '3'" "$F" close --fd 7 3

exec 9<&-
t "fd not open" 66 "fd 9 is not open" "$F" info --fd 9
t "run: fd not open" 66 "fd 9 is not open" "$F" run --fd 9 -- true
t "init: fd not open" 66 "fd 9 is not open" "$F" init --fd 9 1
exec 6</dev/null
t "fd not a fairsem" 67 "fd 6 is not a fairsem handle" "$F" info --fd 6
t "run: fd not a fairsem" 67 "fd 6 is not a fairsem handle" "$F" run --fd 6 -- true
t "init: fd not a fairsem" 67 "fd 6 is not a fairsem handle" "$F" init --fd 6 1
exec 6<"$tmp"
t "a directory is not a fairsem" 67 "fd 6 is not a fairsem handle" \
	"$F" acquire --fd 6
exec 6<&-

# Vectors of kinds: their syntax is checked before any handle is used.
t "a vector: a count not a number" 64 "-n/--count wants COUNT or LABEL=COUNT,... (COUNT a number, with K, M or G" \
	"$F" run --fd 7 -n requests=x -- true
t "a vector: an unknown size suffix" 64 "--create wants COUNT or LABEL=COUNT,..." \
	"$F" run --name x --create bytes=1X -- true
t "a vector: an empty label" 64 "-n/--count wants COUNT or LABEL=COUNT,..." \
	"$F" acquire --fd 7 -n =1
t "a vector: an empty item" 64 "COUNT wants COUNT or LABEL=COUNT,..." \
	"$F" add --fd 7 requests=1,
t "a vector: a label twice" 64 "-n/--count names 'bytes' twice" \
	"$F" acquire --fd 7 -n bytes=1,bytes=2
t "a vector: more than 8 kinds" 64 "-n/--count has more than 8 kinds" \
	"$F" release --fd 7 -n 1,1,1,1,1,1,1,1,1
t "a vector: a label too long" 64 "PERMITS: the label 'abcdefghijklmnop' is longer than 15 bytes" \
	"$F" create x abcdefghijklmnop=1
t "a vector: a size past 2^64" 64 "PERMITS wants COUNT or LABEL=COUNT,..." \
	"$F" create x bytes=17179869184G
t "a vector on a descriptor not open" 66 "fd 7 is not open" \
	"$F" run --fd 7 -n requests=1,bytes=64K -- true

if [ ! -c /dev/fairsem ]; then
	t "status without the module says why" 1 "no /dev/fairsem: is the fairsem module loaded?" \
		"$F" status
	t "top without the module says why" 1 "no /dev/fairsem: is the fairsem module loaded?" \
		"$F" top --once
	for name in "unbound handle" init info run "run's exit statuses" \
		    "run after a crash" "run killed by SIGKILL" status timeout \
		    acquire release add remove close kinds jobserver \
		    "named semaphores"; do
		skip "$name" "no /dev/fairsem (module not loaded)"
	done
	echo "1..$n"
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	[ "$failed" = 0 ]
	exit
fi

# ---- with a semaphore ----

exec 7<>/dev/fairsem 8<>/dev/fairsem
t "info on an unbound handle" 68 "fd 8 has no semaphore yet (see 'fairsem init')" \
	"$F" info --fd 8
t "run on an unbound handle" 68 "fd 8 has no semaphore yet" "$F" run --fd 8 -- true
t "close on an unbound handle" 68 "fd 8 has no semaphore yet" "$F" close --fd 8
t "add on an unbound handle" 68 "fd 8 has no semaphore yet" "$F" add --fd 8 1
# INFO answers an unbound handle (nkinds 0, what the kernel supports): a
# vector read against it is still refused as unbound.
t "acquire of a vector on an unbound handle" 68 "fd 8 has no semaphore yet" \
	"$F" acquire --fd 8 -n requests=1
t "remove of a vector on an unbound handle" 68 "fd 8 has no semaphore yet" \
	"$F" remove --fd 8 requests=1

t "init above the maximum" 65 "PERMITS 4611686018427387905 is above the maximum $MAX" \
	"$F" init --fd 7 4611686018427387905
t "init" 0 "" "$F" init --fd 7 3
t "init twice" 72 "fd 7 is bound to a semaphore already" "$F" init --fd 7 3
t "info" 0 "" "$F" info --fd 7
has "info: limit" "limit:	3"
has "info: available" "available:	3"
has "info: fifo" "mode:	fifo"
has "info: open" "closed:	0"
has "info: handles" "handles:	1"
t "init --lifo after PERMITS" 0 "" "$F" init --fd 8 0 --lifo
expect_value "info: lifo" 8 mode lifo
expect_value "init with 0 permits" 8 limit 0
exec 4<>/dev/fairsem
t "init --prio" 0 "" "$F" init --fd 4 2 --prio
expect_value "info: prio" 4 mode prio
exec 4<&-
t "init --lifo --prio" 64 "--lifo and --prio exclude each other" \
	"$F" init --fd 8 1 --lifo --prio
exec 4<>/dev/fairsem
t "init --fast" 0 "" "$F" init --fd 4 2 --fast --lifo
t "info of an init --fast semaphore" 0 "" "$F" info --fd 4
has "init --fast: info says fast" "fast:	1"
has "init --fast: in any order" "mode:	lifo"
exec 4<&-
exec 4<>/dev/fairsem
t "init --fast above the fast path's maximum" 65 \
	"PERMITS 2147483648 is above the fast path's maximum 2147483647" \
	"$F" init --fd 4 2147483648 --fast
t "init --fast of two kinds" 65 "--fast makes a semaphore of one kind, not 2" \
	"$F" init --fd 4 a=1,b=2 --fast
t "init --fast of one labelled kind" 0 "" "$F" init --fd 4 jobs=3 --fast
exec 4<&-
t "run --fast without --create" 64 "--lifo, --prio, --fast, --mode and --any-owner need --create" \
	"$F" run --name x --fast -- true

# run: CMD's own exit status, and the permits always come back.
t "run true" 0 "" "$F" run --fd 7 -- true
t "run without --" 0 "" "$F" run --fd 7 -n 3 true
t "run: CMD's exit status" 3 "-" "$F" run --fd 7 -- sh -c 'exit 3'
t "run: CMD holds the permits" 0 "" \
	"$F" run --fd 7 -n 2 -- sh -c '"$FAIRSEM" info --fd "$FAIRSEM_FD"'
has "run: FAIRSEM_FD holds 2" "holds:	2"
has "run: taken 2 while CMD runs" "taken:	2"
t "run: CMD can release early" 0 "" \
	"$F" run --fd 7 -n 2 -- sh -c '"$FAIRSEM" release --fd "$FAIRSEM_FD" -n 2'
# No descriptor left under the limit (a dynamic fairsem cannot even load).
fd_limited() {
	sh -c 'exec 3</dev/null 4</dev/null; ulimit -n 5 && exec "$@"' sh "$@"
}
if fd_limited "$F" --version >/dev/null 2>&1; then
	t "run: no descriptor left" 71 "cannot open a new handle on fd 7: Too many open files" \
		fd_limited "$F" run --fd 7 -- true
else
	skip "run: no descriptor left" "$F cannot start with 5 descriptors"
fi
t "run -n 0" 65 "the count must be at least 1" "$F" run --fd 7 -n 0 -- true
t "run -n above the maximum" 65 "the count 4611686018427387905 is above the maximum $MAX" \
	"$F" run --fd 7 -n 4611686018427387905 -- true
t "run: command not found" 127 "cannot run 'no-such-command-here': No such file or directory" \
	"$F" run --fd 7 -- no-such-command-here
t "run: no such path" 127 "cannot run '/no/such/file'" \
	"$F" run --fd 7 -- /no/such/file
printf 'echo hi\n' >"$tmp/noexec"
chmod 644 "$tmp/noexec"
t "run: not executable" 126 "cannot run '$tmp/noexec': Permission denied" \
	"$F" run --fd 7 -- "$tmp/noexec"
t "run: a directory" 126 "cannot run '$tmp'" "$F" run --fd 7 -- "$tmp"
expect_value "run's exit statuses: all permits back" 7 available 3

t "run: CMD killed by SIGSEGV" 139 "-" \
	"$F" run --fd 7 -n 2 -- sh -c 'kill -SEGV $$'
expect_value "run after a crash: permits back" 7 available 3
expect_value "run after a crash: nothing taken" 7 taken 0

bg "$F" run --fd 7 -n 3 -- sleep 3600
holder=$bg
wait_value 7 taken 3
expect_value "run: the holder takes 3" 7 taken 3
t "status" 0 "" "$F" status
sed 's/^/# /' "$out"
has "status: the semaphore" "limit 3, available 0, taken 3"
has "status: the holder" "sleep"
if grep -qE "^ +$holder +[0-9]+ +3 +- +sleep\$" "$out"; then
	pass "status: pid, fd, holds and command of the holder"
else
	fail "status: pid, fd, holds and command of the holder" "$(cat "$out")"
fi
if grep -qE "^ +$$ +7 +0 +- +" "$out"; then
	pass "status: this shell's own handle"
else
	fail "status: this shell's own handle" "$(cat "$out")"
fi

# timeouts and --try while everything is held
t "timeout" 69 "timed out after 0.2 s waiting for 2 permits" \
	"$F" run --fd 7 --timeout 0.2 -n 2 -- true
t "timeout 0" 69 "timed out after 0 s waiting for 1 permit" \
	"$F" run --fd 7 --timeout 0 -- true
t "try" 75 "2 permits not available at once" "$F" run --fd 7 --try -n 2 -- true
t "acquire --try" 75 "1 permit not available at once" "$F" acquire --fd 7 --try
t "acquire timeout" 69 "timed out after 0.1 s waiting for 1 permit" \
	"$F" acquire --fd 7 -t 0.1
expect_value "timeouts leave no waiter" 7 waiters 0

kill -KILL "$holder"
bg_status "run killed by SIGKILL: status 137" "$holder" 137
wait_value 7 available 3
expect_value "run killed by SIGKILL: permits back" 7 available 3

# A waiting run gets its turn, with a timeout long enough.
bg "$F" run --fd 7 -n 3 -- sleep 1
wait_value 7 taken 3
t "timeout long enough" 0 "" "$F" run --fd 7 --timeout 30 -n 3 -- true
bg_status "timeout: the holder ended" "$bg" 0

# Runs go in arrival order.
exec 5<>/dev/fairsem
"$F" init --fd 5 1
t "acquire into the shell's handle" 0 "" "$F" acquire --fd 5
expect_value "acquire: the handle holds it" 5 holds 1
: >"$tmp/order"
queued=0
pids=
for w in A B C; do
	bg "$F" run --fd 5 -- sh -c "echo $w >>'$tmp/order'"
	pids="$pids $bg"
	queued=$((queued + 1))
	wait_value 5 waiters $queued
done
t "release from the shell's handle" 0 "" "$F" release --fd 5
wait $pids
if [ "$(cat "$tmp/order")" = "$(printf 'A\nB\nC')" ]; then
	pass "run: first come, first served"
else
	fail "run: first come, first served" "order: $(cat "$tmp/order")"
fi

t "acquire -n 2" 0 "" "$F" acquire --fd 7 -n 2
expect_value "acquire: holds 2" 7 holds 2
t "release more than held" 65 "fd 7 holds 2 permits, cannot release 3" \
	"$F" release --fd 7 -n 3
t "release 0" 65 "the count must be at least 1" "$F" release --fd 7 -n 0
t "release" 0 "" "$F" release --fd 7 --count 2
t "acquire -n 0" 65 "the count must be at least 1" "$F" acquire --fd 7 -n 0

t "add" 0 "" "$F" add --fd 7 2
expect_value "add: limit 5" 7 limit 5
t "add 0" 65 "COUNT must be at least 1" "$F" add --fd 7 0
t "add past the maximum" 65 "adding $MAX would take the limit past the maximum $MAX" \
	"$F" add --fd 7 "$MAX"
t "add above the maximum" 65 "COUNT 4611686018427387905 is above the maximum" \
	"$F" add --fd 7 4611686018427387905
t "remove more than the limit" 65 "cannot remove 9 permits: the limit is 5" \
	"$F" remove --fd 7 9
t "remove 0" 65 "COUNT must be at least 1" "$F" remove --fd 7 0
t "remove" 0 "" "$F" remove --fd 7 2
expect_value "remove: limit 3" 7 limit 3

if [ -w /dev/full ]; then
	t "write error" 71 "cannot write the output" sh -c '"$FAIRSEM" info --fd 7 >/dev/full'
else
	skip "write error" "no /dev/full"
fi

# close: a waiter is refused, later runs too.
"$F" acquire --fd 7 -n 3
bg "$F" run --fd 7 -- true
wait_value 7 waiters 1
t "close" 0 "" "$F" close --fd 7
bg_status "close: the waiting run fails with 70" "$bg" 70
if grep -qF "the semaphore of fd 7 is closed" "$tmp/bg.err"; then
	pass "close: the waiting run says why"
else
	fail "close: the waiting run says why" "stderr: $(cat "$tmp/bg.err")"
fi
t "close twice" 0 "" "$F" close --fd 7
t "run after close" 70 "the semaphore of fd 7 is closed" "$F" run --fd 7 -- true
t "acquire after close" 70 "the semaphore of fd 7 is closed" "$F" acquire --fd 7
expect_value "info after close" 7 closed 1
t "release after close" 0 "" "$F" release --fd 7 -n 3
t "status shows closed" 0 "" "$F" status
has "status: closed" "closed"

# ---- kinds: one semaphore of requests and bytes ----

exec 3<>/dev/fairsem
t "init of kinds" 0 "" "$F" init --fd 3 requests=20,bytes=1M --lifo
expect_value "info: the number of kinds" 3 kinds 2
expect_value "info: each kind's limit with its label" 3 limit "requests=20,bytes=1048576"
expect_value "info: the mode of kinds" 3 mode lifo
t "acquire a vector" 0 "" "$F" acquire --fd 3 -n requests=1,bytes=64K
expect_value "acquire a vector: holds of each kind" 3 holds "requests=1,bytes=65536"
expect_value "acquire a vector: available of each kind" 3 available "requests=19,bytes=983040"
t "a kind the semaphore has not" 65 "the semaphore has no kind 'files' (its kinds: requests, bytes)" \
	"$F" acquire --fd 3 -n files=1
t "more counts than kinds" 65 "the semaphore has 2 kinds (requests, bytes), not 3" \
	"$F" acquire --fd 3 -n 1,1,1
t "a scalar count on kinds says how to ask" 65 "the semaphore has 2 kinds (requests, bytes): give -n as LABEL=COUNT,..." \
	"$F" acquire --fd 3 -n 1
t "a scalar add on kinds says how to ask" 65 "give COUNT as LABEL=COUNT,..." \
	"$F" add --fd 3 1
t "a vector of zeros" 65 "the counts must ask for at least one permit" \
	"$F" acquire --fd 3 -n requests=0
t "try a vector that does not fit in one kind" 75 "requests=1,bytes=1048576 not available at once" \
	"$F" run --fd 3 --try -n requests=1,bytes=1M -- true
expect_value "the refused vector took nothing" 3 taken "requests=1,bytes=65536"
t "timeout on a vector" 69 "timed out after 0.1 s waiting for requests=0,bytes=1048576" \
	"$F" acquire --fd 3 -t 0.1 -n bytes=1M
t "release more than held in one kind" 65 "fd 3 holds requests=1,bytes=65536, cannot release requests=1,bytes=65537" \
	"$F" release --fd 3 -n requests=1,bytes=65537
expect_value "a refused release changes nothing" 3 holds "requests=1,bytes=65536"
t "release a vector" 0 "" "$F" release --fd 3 -n requests=1,bytes=64K
expect_value "release a vector: all back" 3 taken "requests=0,bytes=0"
t "run with a vector" 0 "" "$F" run --fd 3 -n requests=1,bytes=64K -- \
	sh -c '"$FAIRSEM" info --fd $FAIRSEM_FD'
has "run holds its vector" "holds:	requests=1,bytes=65536"
expect_value "run's vector comes back" 3 taken "requests=0,bytes=0"
t "add a vector" 0 "" "$F" add --fd 3 bytes=1M
expect_value "add a vector: one kind's limit" 3 limit "requests=20,bytes=2097152"
t "remove a vector" 0 "" "$F" remove --fd 3 requests=10,bytes=1M
expect_value "remove a vector: each limit" 3 limit "requests=10,bytes=1048576"
t "remove more than a limit" 65 "cannot remove requests=11,bytes=0: the limits are requests=10,bytes=1048576" \
	"$F" remove --fd 3 requests=11
bg "$F" run --fd 3 -n requests=2,bytes=512K -- sleep 3600
holder=$bg
wait_value 3 taken "requests=2,bytes=524288"
t "status of kinds" 0 "" "$F" status
has "status: each kind with its label" "2 kinds, limit requests=10,bytes=1048576, available requests=8,bytes=524288, taken requests=2,bytes=524288"
if grep -qE "^ +$holder +[0-9]+ +requests=2,bytes=524288 +- +sleep\$" "$out"; then
	pass "status: the holder's vector"
else
	fail "status: the holder's vector" "$(cat "$out")"
fi
kill -KILL "$holder"
wait "$holder" 2>/dev/null
wait_value 3 taken "requests=0,bytes=0"
expect_value "a killed holder gives back its whole vector" 3 available "requests=10,bytes=1048576"
exec 3<&-
exec 3<>/dev/fairsem
t "init of kinds without labels" 0 "" "$F" init --fd 3 2,3
expect_value "a kind without a label shows its index" 3 limit "0=2,1=3"
t "counts by position" 0 "" "$F" acquire --fd 3 -n 1,3
expect_value "counts by position: held" 3 holds "0=1,1=3"
t "counts by index" 0 "" "$F" release --fd 3 -n 1=3
expect_value "counts by index: released" 3 holds "0=1,1=0"
exec 3<&-
exec 3<>/dev/fairsem
t "init refuses a bad label" 65 "the kinds are refused: a label is at most 15 bytes" \
	"$F" init --fd 3 "req.uests=1,by/tes=2"
t "init refuses a limit above the maximum" 65 "the limit bytes=4611686018427387905 is above the maximum $MAX" \
	"$F" init --fd 3 requests=1,bytes=4611686018427387905
t "a labelled kind alone is shown by kinds" 0 "" "$F" init --fd 3 bytes=1K
expect_value "one labelled kind: its limit" 3 limit "bytes=1024"
exec 3<&-

exec 5<&- 7<&- 8<&-

# ---- jobserver: an anonymous one, two inherited handles ----

# js_sh SCRIPT: COMMAND for "fairsem jobserver", with $R and $W the handles
# of MAKEFLAGS' --jobserver-auth=R,W (the last words of MAKEFLAGS here).
js_sh() {
	echo 'a=${MAKEFLAGS##*--jobserver-auth=}; R=${a%,*}; W=${a#*,}; '"$1"
}
t "jobserver -j4" 0 "" env -u MAKEFLAGS "$F" jobserver -j4 -- sh -c 'echo "$MAKEFLAGS"; echo "$CARGO_MAKEFLAGS"'
if grep -qxE -- '-j4 --jobserver-auth=[0-9]+,[0-9]+' "$out" &&
	[ "$(sed -n 1p "$out")" = "$(sed -n 2p "$out")" ]; then
	pass "jobserver: MAKEFLAGS and CARGO_MAKEFLAGS are -jN --jobserver-auth=R,W"
else
	fail "jobserver: MAKEFLAGS and CARGO_MAKEFLAGS are -jN --jobserver-auth=R,W" "$(cat "$out")"
fi
t "jobserver: N-1 tokens" 0 "" "$F" jobserver -j4 -- sh -c "$(js_sh '"$FAIRSEM" info --fd $R')"
has "jobserver -j4: a limit of 3" "limit:	3"
has "jobserver: info says it is a jobserver" "jobserver:	1"
t "jobserver: R and W are two handles" 0 "" "$F" jobserver -j2 -- sh -c "$(js_sh '"$FAIRSEM" info --fd $W')"
has "jobserver: W is on the same semaphore, a handle of its own" "handles:	2"
t "jobserver keeps the rest of MAKEFLAGS" 0 "" \
	env MAKEFLAGS='k -j9 --jobserver-auth=8,9 -- V=1' "$F" jobserver -j3 -- sh -c 'echo "$MAKEFLAGS"'
if grep -qxE -- 'k -j3 --jobserver-auth=[0-9]+,[0-9]+ -- V=1' "$out"; then
	pass "jobserver: the old -j and jobserver replaced, flags and variables kept"
else
	fail "jobserver: the old -j and jobserver replaced, flags and variables kept" "$(cat "$out")"
fi
t "jobserver: COMMAND's exit status" 3 "" "$F" jobserver -j2 -- sh -c 'exit 3'
t "jobserver: COMMAND not found" 127 "cannot run 'fairsem-no-such-command'" \
	"$F" jobserver -j2 -- fairsem-no-such-command
t "jobserver -j1: no token" 0 "" "$F" jobserver -j1 -- sh -c "$(js_sh '"$FAIRSEM" info --fd $R')"
has "jobserver -j1: a limit of 0" "limit:	0"
# A holder that reads a token in the shell itself, then execs: its account
# holds the token; killed, its table ends and the token comes back.
cat >"$tmp/js-holder.sh" <<'EOS'
a=${MAKEFLAGS##*--jobserver-auth=}; R=${a%,*}
(read -r -n 1 c <&"$R"; exec sleep 1000) &
h=$!
i=0
while ! grep -q "^fairsem-account:	$h tokens=1 " "/proc/$$/fdinfo/$R" &&
	[ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
echo "holder $h"
grep '^fairsem-account:' "/proc/$$/fdinfo/$R"
"$FAIRSEM" status
# The shell reports the killed job on stderr ("Killed"): not ours.
exec 9>&2 2>/dev/null
kill -KILL $h
wait $h
exec 2>&9 9>&-
"$FAIRSEM" info --fd "$R"
echo "accounts left: $(grep -c '^fairsem-account:' "/proc/$$/fdinfo/$R")"
EOS
t "jobserver: a holder killed" 0 "" "$F" jobserver -j2 -- sh "$tmp/js-holder.sh"
holder=$(sed -n 's/^holder //p' "$out")
if grep -qE "^fairsem-account:	$holder tokens=1 reserved=0 queued=0 build=[0-9]+ comm=(sh|sleep)\$" "$out"; then
	pass "jobserver: a read token belongs to the reader's account (fdinfo)"
else
	fail "jobserver: a read token belongs to the reader's account (fdinfo)" "$(cat "$out")"
fi
has "status: a jobserver's mode" "(jobserver, open)"
if grep -qE "^  account $holder tokens=1 reserved=0 queued=0 build=[0-9]+ comm=(sh|sleep)\$" "$out"; then
	pass "status: the account of the holder, its tokens and command"
else
	fail "status: the account of the holder, its tokens and command" "$(cat "$out")"
fi
has "jobserver: a killed holder's token comes back" "available:	1"
has "jobserver: no account is left of the killed holder" "accounts left: 0"
# fairsem top: two holders of one token each, a child of COMMAND (in
# COMMAND's process group: the same build) and one in a session of its
# own (setsid: another build).
cat >"$tmp/js-top.sh" <<'EOS'
a=${MAKEFLAGS##*--jobserver-auth=}; R=${a%,*}
(read -r -n 1 c <&"$R"; exec sleep 1000) &
h1=$!
setsid sh -c 'read -r -n 1 c <&"$1"; exec sleep 1000' sh "$R" &
h2=$!
i=0
while [ "$(grep -c '^fairsem-account:.* tokens=1 ' "/proc/$$/fdinfo/$R")" -lt 2 ] &&
	[ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
echo "top $$ $h1 $h2 $(cut -d' ' -f5 "/proc/$h1/stat")"
"$FAIRSEM" top --once
exec 9>&2 2>/dev/null
kill -KILL $h1 $h2
wait $h1 $h2
exec 2>&9 9>&-
EOS
t "top --once: two holders" 0 "" "$F" jobserver -j3 -- sh "$tmp/js-top.sh"
# shellcheck disable=SC2046 # three pids and a process group
set -- $(sed -n 's/^top //p' "$out")
has "top: the jobserver's tokens, free, taken and waiters" \
	"2 tokens, 0 free, 2 taken, 0 waiters (0 by reservation, 0 by blocking read)"
if [ -n "${4:-}" ] && grep -qE "^ +$4 +1 +0 +- +1  " "$out" &&
	grep -qE "^ +account $2 tokens=1 reserved=0 queued=0 build=$4 comm=sh\$" "$out"; then
	pass "top: a child's token is its process group's build's"
else
	fail "top: a child's token is its process group's build's" "$(cat "$out")"
fi
if grep -qE "^ +$3 +1 +0 +- +1  (sh|sleep)\$" "$out"; then
	pass "top: a holder in a session of its own is a build of its own"
else
	fail "top: a holder in a session of its own is a build of its own" "$(cat "$out")"
fi

# ---- named semaphores ----

names=$tmp/names
export FAIRSEM_DIR="$names"
t "mount" 0 "" "$F" mount
if ! grep -q " $names fairsem " /proc/mounts; then
	skip "named semaphores" "no fairsem filesystem to mount"
else
	t "mount again leaves it as it is" 0 "" "$F" mount
	t "mount refuses an unknown option" 65 "mount refused the options 'frob=1'" \
		"$F" mount "$tmp/other" -o frob=1
	t "create" 0 "" "$F" create build 2 --mode 0640
	if [ "$(stat -c '%a %U' "$names/build")" = "640 root" ]; then
		pass "create: mode and owner"
	else
		fail "create: mode and owner" "$(stat -c '%a %U' "$names/build")"
	fi
	t "create --prio" 0 "" "$F" create rt 1 --prio
	t "info of a --prio semaphore" 0 "" "$F" info rt
	has "create --prio: mode prio" "mode:	prio"
	t "rm rt" 0 "" "$F" rm rt
	t "create --fast" 0 "" "$F" create quick 4 --fast
	t "info of a --fast semaphore" 0 "" "$F" info quick
	has "create --fast: info says fast" "fast:	1"
	t "create --fast above the fast path's maximum" 65 \
		"PERMITS 2147483648 is above the fast path's maximum 2147483647" \
		"$F" create quick2 2147483648 --fast
	t "run --create --fast makes a fast one" 0 "" \
		"$F" run --name quick3 --create 2 --fast -- sh -c '"$FAIRSEM" info --fd $FAIRSEM_FD'
	has "run --create --fast: info says fast" "fast:	1"
	t "rm quick quick3" 0 "" "$F" rm quick quick3
	t "create a taken name" 73 "$names/build exists already" "$F" create build 5
	t "info NAME" 0 "" "$F" info build
	has "info NAME shows the path" "path:	$names/build"
	has "info NAME shows the limit" "limit:	2"
	t "info by path" 0 "" "$F" info "$names/build"
	has "info by path: the same" "limit:	2"
	t "run --name" 0 "" "$F" run --name build -- sh -c '"$FAIRSEM" info --fd $FAIRSEM_FD'
	has "run --name holds a permit" "holds:	1"
	t "run --name of a missing name" 74 "no semaphore named $names/missing" \
		"$F" run --name missing -- true
	t "run --name --create" 0 "" "$F" run --name fresh --create 3 --lifo -- \
		"$F" info fresh
	has "run --create: the limit given" "limit:	3"
	has "run --create: the mode given" "mode:	lifo"
	t "run --create of an existing name keeps it" 0 "" \
		"$F" run --name fresh --create 9 -- "$F" info fresh
	has "run --create: still 3" "limit:	3"
	# A holder killed by SIGKILL: its permits come back at once.
	bg "$F" run --name build -n 2 -- sleep 1000
	holder=$bg
	i=0
	while ! "$F" info build | grep -q '^taken:	2$' && [ $i -lt 200 ]; do
		nap
		i=$((i + 1))
	done
	t "status with names" 0 "" "$F" status
	has "status shows the name beside its holder" "name $names/build"
	if grep -A3 "name $names/build" "$out" | grep -qE " +[0-9]+ +[0-9]+ +2 +- +sleep\$"; then
		pass "status: the holder of the name"
	else
		fail "status: the holder of the name" "$(cat "$out")"
	fi
	has "status shows a name without holders" "no open handles"
	t "run --try while held" 75 "1 permit not available at once" \
		"$F" run --name build --try -- true
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null
	t "run --try after the holder was killed" 0 "" "$F" run --name build --try -- true
	exec 9<"$names/build"
	t "a read-only handle may only look" 77 "fd 9 is a read-only handle" \
		"$F" acquire --fd 9
	t "info of a read-only handle" 0 "" "$F" info --fd 9
	exec 9<&-
	# Named semaphores of kinds.
	t "create of kinds" 0 "" "$F" create web requests=20,bytes=1M --lifo
	t "info NAME of kinds" 0 "" "$F" info web
	has "info NAME: each kind's limit" "limit:	requests=20,bytes=1048576"
	t "run --name with a vector" 0 "" "$F" run --name web -n requests=1,bytes=64K -- \
		"$F" info web
	has "run --name: the vector taken" "taken:	requests=1,bytes=65536"
	t "run --create of the same kinds uses it" 0 "" \
		"$F" run --name web --create requests=5,bytes=5 -n requests=1 -- "$F" info web
	has "run --create of the same kinds: its limits kept" "limit:	requests=20,bytes=1048576"
	t "run --create of other kinds" 73 "$names/web exists with other kinds: 2 (requests, bytes), limits requests=20,bytes=1048576" \
		"$F" run --name web --create bytes=1M,requests=20 -- true
	t "run --create of a scalar on kinds" 0 "" \
		"$F" run --name web --create 3 -n requests=1 -- true
	t "run --create of kinds on a scalar" 73 "$names/build exists with other kinds: 1 (0), limits 0=2" \
		"$F" run --name build --create requests=2 -- true
	t "run --create of a new name of kinds" 0 "" \
		"$F" run --name web2 --create slots=1,mem=2 -n slots=1 -- "$F" info web2
	has "run --create of kinds: taken" "taken:	slots=1,mem=0"
	t "status of a name of kinds" 0 "" "$F" status
	has "status: a name of kinds without handles" "2 kinds, limit requests=20,bytes=1048576"
	t "create of kinds refuses a label twice" 64 "PERMITS names 'a' twice" \
		"$F" create web3 a=1,a=2
	t "rm names of kinds" 0 "" "$F" rm web web2
	# System-wide jobservers.
	t "jobserver --create" 0 "" "$F" jobserver --create js -j 5 --mode 0640
	if [ "$(stat -c '%a' "$names/js")" = 640 ]; then
		pass "jobserver --create: the mode given"
	else
		fail "jobserver --create: the mode given" "$(stat -c '%a' "$names/js")"
	fi
	t "info of a jobserver name" 0 "" "$F" info js
	has "jobserver --create -j5: 4 tokens" "limit:	4"
	has "jobserver --create: a jobserver" "jobserver:	1"
	t "jobserver --create of a taken name" 73 "$names/js exists already" \
		"$F" jobserver --create js -j 2
	t "jobserver --name: the name's own -j" 0 "" \
		"$F" jobserver --name js -j 2 -- sh -c 'echo "$MAKEFLAGS"'
	if grep -qxE -- '-j5 --jobserver-auth=[0-9]+,[0-9]+' "$out"; then
		pass "jobserver --name: -j is the name's limit + 1, R,W opened on it"
	else
		fail "jobserver --name: -j is the name's limit + 1, R,W opened on it" "$(cat "$out")"
	fi
	t "jobserver --name --fifo" 0 "" \
		"$F" jobserver --name js --fifo -- sh -c 'echo "$MAKEFLAGS"'
	has "jobserver --name --fifo: fifo:PATH of the name" "-j5 --jobserver-auth=fifo:$names/js"
	t "jobserver --name makes a missing name" 0 "" \
		"$F" jobserver --name js2 -j 3 -- "$F" info js2
	has "jobserver --name -j3: made with 2 tokens" "limit:	2"
	t "create a plain semaphore" 0 "" "$F" create plain 2
	t "jobserver --name of a semaphore that is no jobserver" 65 \
		"$names/plain is not a jobserver semaphore" \
		"$F" jobserver --name plain -- true
	t "top of a semaphore that is no jobserver" 65 \
		"$names/plain is not a jobserver" "$F" top --once plain
	t "top of a missing name" 74 "$names/none: No such file or directory" \
		"$F" top --once none
	t "top --once NAME of a jobserver no build holds" 0 "" "$F" top --once js
	has "top NAME: the jobserver, no build" "no build holds a token"
	t "jobserver --fifo: a private name" 0 "" \
		"$F" jobserver -j3 --fifo -- sh -c 'echo "$MAKEFLAGS"; "$FAIRSEM" info "${MAKEFLAGS##*fifo:}"'
	if grep -qxE -- "-j3 --jobserver-auth=fifo:$names/jobserver\.[0-9]+\.[0-9]+" "$out"; then
		pass "jobserver --fifo: fifo:PATH of a name in \$FAIRSEM_DIR"
	else
		fail "jobserver --fifo: fifo:PATH of a name in \$FAIRSEM_DIR" "$(cat "$out")"
	fi
	has "jobserver --fifo: 2 tokens" "limit:	2"
	if ls "$names" | grep -q '^jobserver\.'; then
		fail "jobserver --fifo: the private name is removed at the end" "$(ls "$names")"
	else
		pass "jobserver --fifo: the private name is removed at the end"
	fi
	t "jobserver --fifo: COMMAND's exit status" 4 "" \
		"$F" jobserver --fifo -- sh -c 'exit 4'
	t "jobserver --fifo: COMMAND killed by a signal" 137 "" \
		"$F" jobserver --fifo -- sh -c 'kill -KILL $$'
	if ls "$names" | grep -q '^jobserver\.'; then
		fail "jobserver --fifo: removed after a kill too" "$(ls "$names")"
	else
		pass "jobserver --fifo: removed after a kill too"
	fi
	governor_tests
	t "rm jobserver names" 0 "" "$F" rm js js2 plain
	two_users
	t "rm" 0 "" "$F" rm build fresh
	t "rm again" 74 "no semaphore named $names/build" "$F" rm build
	t "status without any semaphore" 1 "" "$F" status
	umount "$names" 2>/dev/null
	if grep -q " $names fairsem " /proc/mounts; then
		fail "unmount after rm"
	else
		pass "unmount after rm"
	fi
fi
unset FAIRSEM_DIR
t "status without any semaphore" 1 "" "$F" status

echo "1..$n"
echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
[ "$failed" = 0 ]
