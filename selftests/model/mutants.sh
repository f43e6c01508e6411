#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves that the model test can fail: builds mutated copies of
# kmod/fairsem_core.c in a temporary directory (never in the tree), runs the
# model test against each, and reports which test caught it, how fast.
#
#   selftests/model/mutants.sh [MUTANT...]       (make -C selftests/model mutants)
#
# Each mutant is one perl substitution on the core.  A mutant fails if its
# pattern does not match exactly once (the core changed under it: fix the
# pattern, so the list does not rot), if it does not build, or if the model
# test passes on it.  MUTANTS_JOBS (default 2) run at a time.  One line a
# mutant, then "N passed, N failed"; exit status nonzero on any failure.

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d /tmp/fairsem-mutants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# name|perl substitution.  Each must match the core exactly once and make
# the model test fail.  One mutant per rule of the grant logic; a mutant
# that cannot change behaviour does not belong here (FORGET skipping the
# grant is one: it lowers limit and taken alike, so nothing more fits).
mutants=(
'lifo_from_wrong_end|s/else if \(sem->lifo\)\n\t\tlist_add\(/else if (!sem->lifo)\n\t\tlist_add(/'
'lifo_try_needs_empty_queue|s/if \(sem->lifo \|\| list_empty\(&sem->queue\)\)/if (list_empty(&sem->queue))/'
'fifo_new_request_barges|s/if \(sem->lifo \|\| list_empty\(&sem->queue\)\)/if (!sem->prio || list_empty(&sem->queue))/'
'available_off_by_one|s/kind->limit - kind->taken : 0/kind->limit - kind->taken - 1 : 0/'
'fits_off_by_one|s/if \(count\[k\] > fairsem_available\(sem, k\)\)/if (count[k] >= fairsem_available(sem, k))/'
'try_ignores_fit|s/\tif \(!fairsem_fits\(sem, req->count\)\)\n\t\treturn -EAGAIN;\n//'
'grant_partial_fit|s/if \(!fairsem_fits\(sem, head->count\)\)/if (!fairsem_available(sem, 0))/'
'grant_not_at_head|s/(while \(!list_empty\(&sem->queue\)\) \{\n\t\thead = )fairsem_queue_first\(sem\);/${1}list_entry(sem->queue.prev, struct fairsem_request, node);/'
'one_grant_per_change|s/(fairsem_request_done\(head, wake\);\n)/$1\t\tbreak;\n/'
'grant_skips_holds|s/\t\treq->holder->holds\[k\] \+= req->count\[k\];\n//'
'dequeue_skips_grant|s/(\tfairsem_unqueue\(req\);\n)\tfairsem_grant_waiters\(sem, wake\);\n/$1/'
'dequeue_ignores_state|s/(\tlockdep_assert_held\(&req->holder->sem->lock\);\n)\tif \(req->state != FAIRSEM_REQ_QUEUED\)\n\t\treturn;\n/$1/'
'release_above_holds|s/\tif \(!fairsem_holds_enough\(holder, count\)\)\n\t\treturn -EINVAL;\n(\tfairsem_give_back\(holder, count\);\n\tfairsem_traced\(holder->sem, FAIRSEM_TRACE_RELEASE)/$1/'
'release_gives_back_less|s/fairsem_give_back\(holder, count\);\n(\tfairsem_traced\(holder->sem, FAIRSEM_TRACE_RELEASE)/fairsem_give_back(holder, count);\n\tholder->holds[0]++;\n\tholder->sem->kind[0].taken++;\n$1/'
'release_skips_grant|s/(fairsem_traced\(holder->sem, FAIRSEM_TRACE_RELEASE, count\);\n)\tfairsem_grant_waiters\(holder->sem, wake\);\n/$1/'
'add_skips_grant|s/(fairsem_traced\(sem, FAIRSEM_TRACE_ADD, count\);\n)\tfairsem_grant_waiters\(sem, wake\);\n/$1/'
'detach_skips_grant|s/(fairsem_traced\(sem, FAIRSEM_TRACE_HANDLE_GONE, held\);\n)\tfairsem_grant_waiters\(sem, wake\);\n/$1/'
'detach_stays_listed|s/\tlist_del_init\(&holder->sibling\);\n//'
'cancel_granted_skips_grant|s/(fairsem_traced\(holder->sem, FAIRSEM_TRACE_CANCEL, given\);\n)\t\tfairsem_grant_waiters\(holder->sem, wake\);\n/$1/'
'cancel_gives_back_full_count|s/given\[k\] = min\(req->count\[k\], holder->holds\[k\]\);/given[k] = req->count[k];/'
'forget_above_holds|s/\tif \(!fairsem_holds_enough\(holder, count\)\)\n\t\treturn -EINVAL;\n(\t\/\*\n\t \* W gets the permits back)/$1/'
'forget_wraps_limit|s/kind->limit = kind->limit > count\[k\] \? kind->limit - count\[k\] : 0;/kind->limit -= count[k];/'
'forget_keeps_limit|s/kind->limit = kind->limit > count\[k\] \? kind->limit - count\[k\] : 0;/(void)kind;/'
'add_overflow_off_by_one|s/count\[k\] > FAIRSEM_MAX_PERMITS - sem->kind\[k\].limit/count[k] >= FAIRSEM_MAX_PERMITS - sem->kind[k].limit/'
'remove_off_by_one|s/if \(count\[k\] > sem->kind\[k\].limit\)/if (count[k] >= sem->kind[k].limit)/'
'close_keeps_waiter_count|s/(req = fairsem_queue_first\(sem\);\n\t\t)fairsem_queue_del\(sem, req\);/${1}if (sem->prio)\n\t\t\tfairsem_prio_del(sem, req);\n\t\tlist_del_init(&req->node);/'
'close_grants_instead|s/(fairsem_queue_del\(sem, req\);\n\t\tfairsem_req_set\(req, )FAIRSEM_REQ_IDLE(\);\n\t\tfairsem_request_done)/${1}FAIRSEM_REQ_GRANTED$2/'
'try_grant_ignores_closed|s/\tif \(sem->closed\)\n\t\treturn -EIDRM;\n(\tif \(!fairsem_would_be_head)/$1/'
'async_busy_before_closed|s/(\tif \(holder->sem->closed\)\n\t\treturn -EIDRM;\n)(\tif \(req->state != FAIRSEM_REQ_IDLE\)\n\t\treturn -EBUSY;\n)/$2$1/'
'read_closed_before_grant|s/if \(req->state == FAIRSEM_REQ_GRANTED\) \{\n\t\tmemcpy\(count, /if (req->state == FAIRSEM_REQ_GRANTED \&\& !holder->sem->closed) {\n\t\tmemcpy(count, /'
'read_einval_before_eidrm|s/(\tif \(holder->sem->closed\)\n\t\treturn -EIDRM;\n)(\tif \(req->state == FAIRSEM_REQ_IDLE\)\n\t\treturn -EINVAL;\n)/$2$1/'
'read_keeps_grant|s/(\t\tmemcpy\(count, req->count, holder->sem->nkinds \* sizeof\(\*count\)\);\n)\t\tfairsem_req_set\(req, FAIRSEM_REQ_IDLE\);\n/$1/'
'uncollect_overwrites_request|s/\tif \(req->state != FAIRSEM_REQ_IDLE\)\n\t\treturn;\n(\tmemcpy\(req->count, count)/$1/'
'dequeue_wakes_nobody|s/(fairsem_queue_del\(req->holder->sem, req\);\n)\tfairsem_req_set\(req, FAIRSEM_REQ_IDLE\);\n/$1\treq->state = FAIRSEM_REQ_IDLE;\n/'
'cancel_granted_wakes_nobody|s/(\t\t\tgiven\[k\] = min\(req->count\[k\], holder->holds\[k\]\);\n)\t\tfairsem_req_set\(req, FAIRSEM_REQ_IDLE\);/$1\t\treq->state = FAIRSEM_REQ_IDLE;/'
'uncollect_wakes_nobody|s/fairsem_req_set\(req, FAIRSEM_REQ_GRANTED\);\n}/req->state = FAIRSEM_REQ_GRANTED;\n}/'
'grant_wakes_nobody|s/fairsem_req_set\(head, FAIRSEM_REQ_GRANTED\);/head->state = FAIRSEM_REQ_GRANTED;/'
'close_wakes_no_handle|s/(list_for_each_entry\(holder, &sem->holder_list, sibling\)\n)\t\tfairsem_holder_wake\(holder\);/$1\t\t;/'
'attach_wakes_nobody|s/(sem->handles\+\+;\n)\tfairsem_holder_wake\(holder\);\n/$1/'
'prio_queues_in_arrival_order|s/\tif \(sem->prio\)\n\t\tfairsem_prio_add/\tif (sem->prio \&\& 0)\n\t\tfairsem_prio_add/'
'prio_at_once_on_equal|s/req->prio < fairsem_queue_first\(sem\)->prio/req->prio <= fairsem_queue_first(sem)->prio/'
'prio_at_once_ignores_queue|s/return sem->prio && req->prio < /return sem->prio || req->prio < /'
'prio_equal_goes_first|s/\t\tif \(lead->prio == req->prio\) \{/\t\tif (lead->prio == req->prio \&\& 0) {/'
'prio_lead_not_handed_on|s/\t\t\t\tlist_add\(&next->level, &req->level\);/\t\t\t\t(void)next;/'
'prio_lower_goes_first|s/if \(lead->prio > req->prio\)/if (lead->prio < req->prio)/'
# fairsem_enqueue_again(): a frozen waiter rejoins at its arrival place
# (the model test's freeze/thaw ops and its rejoin_* tests).
'rejoin_in_lifo_order|s/return sem->lifo \? a->seq > b->seq : a->seq < b->seq;/return a->seq > b->seq;/'
# Kinds: every kind, not kind 0 alone (the model test's kinds_* tests).
'kinds_fit_checks_kind_0_only|s/for \(k = 0; k < sem->nkinds; k\+\+\)\n\t\tif \(count\[k\] > fairsem_available/for (k = 0; k < 1; k++)\n\t\tif (count[k] > fairsem_available/'
'kinds_take_kind_0_only|s/for \(k = 0; k < sem->nkinds; k\+\+\) \{\n\t\tsem->kind\[k\].taken \+= /for (k = 0; k < 1; k++) {\n\t\tsem->kind[k].taken += /'
'kinds_holds_enough_kind_0_only|s/for \(k = 0; k < holder->sem->nkinds; k\+\+\)\n\t\tif \(count\[k\] > holder->holds\[k\]\)/for (k = 0; k < 1; k++)\n\t\tif (count[k] > holder->holds[k])/'
'kinds_add_checks_kind_0_only|s/for \(k = 0; k < sem->nkinds; k\+\+\)\n\t\tif \(count\[k\] > FAIRSEM_MAX_PERMITS/for (k = 0; k < 1; k++)\n\t\tif (count[k] > FAIRSEM_MAX_PERMITS/'
'kinds_detach_gives_back_kind_0_only|s/memcpy\(held, holder->holds, sem->nkinds \* sizeof\(\*held\)\);/memset(held, 0, sizeof(held));\n\theld[0] = holder->holds[0];/'
)

# The objects that do not change, built once with the model Makefile's flags
# (a mutant that drops a call may leave the wake batch unused).
flags=EXTRA_CFLAGS=-Wno-unused-parameter
base=$tmp/base
if ! make -s -C "$here" "$base/model_test.o" "$base/reference.o" \
     O="$base" "$flags" >"$tmp/base.log" 2>&1; then
	cat "$tmp/base.log"
	echo "0 passed, 1 failed"
	exit 1
fi

# One mutant: "caught" (exit 0) or why not (exit 1), as one line in $dir/line.
one() {
	local name=$1 subst=$2 dir=$tmp/$1 n t0 out rc by secs
	mkdir -p "$dir/build"
	cp -r "$root/kmod" "$root/uapi" "$dir/"
	n=$(perl -0777 -i -pe "\$n += $subst"'g; END { print STDERR $n + 0 }' \
	    "$dir/kmod/fairsem_core.c" 2>&1)
	if [ "$n" != 1 ]; then
		echo "FAIL $name: pattern matches ${n:-?} times, not once" >"$dir/line"
		return 1
	fi
	cp -p "$base"/model_test.[od] "$base"/reference.[od] "$dir/build/"
	if ! make -s -C "$here" all KMOD="$dir/kmod" O="$dir/build" "$flags" \
	     >"$dir/build.log" 2>&1; then
		echo "FAIL $name: does not build ($(grep -m1 error: "$dir/build.log"))" >"$dir/line"
		return 1
	fi
	t0=$EPOCHREALTIME
	out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
	      timeout 120 "$dir/build/model_test" 2>/dev/null)
	rc=$?
	secs=$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }")
	if [ $rc -eq 0 ]; then
		echo "FAIL $name: survived the model test (${secs}s)" >"$dir/line"
		return 1
	fi
	by=$(printf '%s\n' "$out" | sed -n 's/^not ok [0-9]* //p' | head -1)
	echo "ok   $name: caught by ${by:-crash (rc=$rc)} in ${secs}s" >"$dir/line"
}

names=()
for m in "${mutants[@]}"; do
	name=${m%%|*}
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	names+=("$name")
	while [ "$(jobs -rp | wc -l)" -ge "${MUTANTS_JOBS:-2}" ]; do
		wait -n
	done
	one "$name" "${m#*|}" &
done
wait

passed=0 failed=0
for name in "${names[@]}"; do
	line=$(cat "$tmp/$name/line" 2>/dev/null) ||
		line="FAIL $name: no result"
	echo "$line"
	[[ $line == ok* ]] && passed=$((passed + 1)) || failed=$((failed + 1))
done
[ $# -eq 0 ] || [ ${#names[@]} -eq $# ] || {
	echo "FAIL: no such mutant among: $*"
	failed=$((failed + 1))
}
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
