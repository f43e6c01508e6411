#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cargo's RUSTC_WRAPPER in scenario "one" for cargo (run.sh, builds/cargo):
#
#   rustc-job.sh RUSTC ARGS...
#
# A compilation (a --crate-name other than cargo's "___" probe) is one job
# of build "victim" counted by job.sh, in killnow mode: its client, the
# cargo that ran this wrapper ($PPID), is kill -9ed by the first job that
# finds every slot busy once and cargo running a second job (on a token it
# read).  The job is job.sh's sleep ($JS_SLEEP) and then the rustc, both
# counted: cargo holds the job's token for the whole wrapper, and a count
# of the sleep alone would see cargo's jobs one at a time in the VM, where
# a rustc outlasts the sleep many times.  cargo's version probes (-vV,
# --print) run rustc at once, uncounted.
#
# Scenario "share" sets JS_CARGO_B=cg and JS_CARGO_MODE=-: its jobs are
# build "cg", and none of them kills (a job of another build does).
#
# Each job also records the jobserver that cargo handed rustc
# (CARGO_MAKEFLAGS) in $JS_RUN/cargo-auth: run.sh checks that it is the
# jobserver cargo was given, not one cargo made for itself.
set -eu
crate=
prev=
for a in "$@"; do
	[ "$prev" != --crate-name ] || crate=$a
	prev=$a
done
case $crate in
"" | ___) exec "$@" ;;
esac
echo "$crate ${CARGO_MAKEFLAGS:-}" >>"$JS_RUN/cargo-auth"
exec "$JS_DIR/job.sh" "${JS_CARGO_B:-victim}" "$crate" "$PPID" \
	"${JS_CARGO_MODE:-killnow}" -- "$@"
