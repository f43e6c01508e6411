#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves that the model test can fail: builds mutated copies of
# kmod/fairsem_core.c in a temporary directory (never in the tree), runs the
# test against each, and reports which test caught it, how fast.
#
#   selftests/model/mutants.sh [MUTANT...]       (make -C selftests/model mutants)
#
# Each mutant is one perl substitution on the core.  A mutant whose pattern
# no longer matches is reported "stale", so the list does not rot silently.
# "equivalent" marks a mutant that cannot change behaviour; surviving is
# right for it.  Exit status: nonzero if a non-equivalent mutant survives.

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d /tmp/fairsem-mutants.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# name|expect|perl substitution (expect: killed or equivalent)
mutants=(
'lifo_from_wrong_end|killed|s/if \(sem->lifo\)\n\t\tlist_add\(/if (!sem->lifo)\n\t\tlist_add(/'
'lifo_try_needs_empty_queue|killed|s/if \(!sem->lifo && !list_empty/if (!list_empty/'
'fifo_new_request_barges|killed|s/\tif \(!sem->lifo && !list_empty\(&sem->queue\)\)\n\t\treturn -EAGAIN;\n//'
'available_off_by_one|killed|s/sem->limit - sem->taken : 0/sem->limit - sem->taken - 1 : 0/'
'head_fits_off_by_one|killed|s/head->count > fairsem_available\(sem\)/head->count >= fairsem_available(sem)/'
'one_grant_per_change|killed|s/(fairsem_request_done\(head, wake\);\n)/$1\t\tbreak;\n/'
'grant_skips_holds|killed|s/\treq->holder->holds \+= req->count;\n//'
'dequeue_skips_grant|killed|s/\n\treq->state = FAIRSEM_REQ_IDLE;\n\tfairsem_grant_waiters\(sem, wake\);\n/\n\treq->state = FAIRSEM_REQ_IDLE;\n/'
'dequeue_ignores_state|killed|s/\tif \(req->state != FAIRSEM_REQ_QUEUED\)\n\t\treturn;\n//'
'release_skips_grant|killed|s/fairsem_give_back\(holder, count\);\n\tfairsem_grant_waiters\(holder->sem, wake\);/fairsem_give_back(holder, count);/'
'add_skips_grant|killed|s/sem->limit \+= count;\n\tfairsem_grant_waiters\(sem, wake\);/sem->limit += count;/'
'detach_skips_grant|killed|s/fairsem_give_back\(holder, holder->holds\);\n\tfairsem_grant_waiters\(sem, wake\);/fairsem_give_back(holder, holder->holds);/'
'detach_stays_listed|killed|s/\tlist_del_init\(&holder->sibling\);\n//'
'cancel_granted_skips_grant|killed|s/(min\(req->count, holder->holds\)\);\n)\t\tfairsem_grant_waiters\(holder->sem, wake\);\n/$1/'
'cancel_gives_back_full_count|killed|s/min\(req->count, holder->holds\)/req->count/'
'forget_wraps_limit|killed|s/sem->limit = sem->limit > count \? sem->limit - count : 0;/sem->limit -= count;/'
'forget_keeps_limit|killed|s/sem->limit = sem->limit > count \? sem->limit - count : 0;//'
'add_overflow_off_by_one|killed|s/count > FAIRSEM_MAX_PERMITS - sem->limit/count >= FAIRSEM_MAX_PERMITS - sem->limit/'
'remove_off_by_one|killed|s/if \(count > sem->limit\)/if (count >= sem->limit)/'
'close_keeps_waiter_count|killed|s/(list_del_init\(&req->node\);\n)\t\tsem->waiters--;\n(\t\treq->state = FAIRSEM_REQ_IDLE;\n\t\tfairsem_request_done)/$1$2/'
'close_grants_instead|killed|s/(sem->waiters--;\n\t\treq->state = )FAIRSEM_REQ_IDLE;\n(\t\tfairsem_request_done)/$1FAIRSEM_REQ_GRANTED;\n$2/'
'try_grant_ignores_closed|killed|s/\tif \(sem->closed\)\n\t\treturn -EIDRM;\n(\tif \(!sem->lifo)/$1/'
'async_busy_before_closed|killed|s/(\tif \(holder->sem->closed\)\n\t\treturn -EIDRM;\n)(\tif \(req->state != FAIRSEM_REQ_IDLE\)\n\t\treturn -EBUSY;\n)/$2$1/'
'read_closed_before_grant|killed|s/if \(req->state == FAIRSEM_REQ_GRANTED\) \{\n\t\treq->state = FAIRSEM_REQ_IDLE;\n\t\t\*count/if (req->state == FAIRSEM_REQ_GRANTED && !holder->sem->closed) {\n\t\treq->state = FAIRSEM_REQ_IDLE;\n\t\t*count/'
'read_einval_before_eidrm|killed|s/(\tif \(holder->sem->closed\)\n\t\treturn -EIDRM;\n)(\tif \(req->state == FAIRSEM_REQ_IDLE\)\n\t\treturn -EINVAL;\n)/$2$1/'
'read_keeps_grant|killed|s/(if \(req->state == FAIRSEM_REQ_GRANTED\) \{\n)\t\treq->state = FAIRSEM_REQ_IDLE;\n/$1/'
'uncollect_overwrites_request|killed|s/\tif \(req->state != FAIRSEM_REQ_IDLE\)\n\t\treturn;\n(\treq->count = count;)/$1/'
'dequeue_wakes_nobody|killed|s/(sem->waiters--;\n)\tfairsem_req_set\(req, FAIRSEM_REQ_IDLE\);\n(\tfairsem_grant_waiters)/$1\treq->state = FAIRSEM_REQ_IDLE;\n$2/'
'cancel_granted_wakes_nobody|killed|s/(given = min\(req->count, holder->holds\);\n)\t\tfairsem_req_set\(req, FAIRSEM_REQ_IDLE\);/$1\t\treq->state = FAIRSEM_REQ_IDLE;/'
'uncollect_wakes_nobody|killed|s/fairsem_req_set\(req, FAIRSEM_REQ_GRANTED\);\n}/req->state = FAIRSEM_REQ_GRANTED;\n}/'
'grant_wakes_nobody|killed|s/fairsem_req_set\(head, FAIRSEM_REQ_GRANTED\);/head->state = FAIRSEM_REQ_GRANTED;/'
'close_wakes_no_handle|killed|s/(list_for_each_entry\(holder, &sem->holder_list, sibling\)\n)\t\tfairsem_holder_wake\(holder\);/$1\t\t;/'
'attach_wakes_nobody|killed|s/(sem->handles\+\+;\n)\tfairsem_holder_wake\(holder\);\n/$1/'
'prio_queues_in_arrival_order|killed|s/\tif \(sem->prio\)\n\t\tfairsem_prio_add/\tif (sem->prio \&\& 0)\n\t\tfairsem_prio_add/'
'prio_at_once_on_equal|killed|s/req->prio < fairsem_queue_first\(sem\)->prio/req->prio <= fairsem_queue_first(sem)->prio/'
'prio_at_once_ignores_queue|killed|s/return sem->prio && req->prio < /return sem->prio || req->prio < /'
'prio_equal_goes_first|killed|s/\t\tif \(lead->prio == req->prio\) \{/\t\tif (lead->prio == req->prio \&\& 0) {/'
'prio_lead_not_handed_on|killed|s/\t\t\t\tlist_add\(&next->level, &req->level\);/\t\t\t\t(void)next;/'
'prio_lower_goes_first|killed|s/if \(lead->prio > req->prio\)/if (lead->prio < req->prio)/'
'forget_skips_grant|equivalent|s/(sem->limit = sem->limit > count \? sem->limit - count : 0;\n)\tfairsem_grant_waiters\(sem, wake\);\n/$1/'
)

# Run the test on one built mutant: "caught-by seconds" on stdout.
run() {
	local bin=$1 t0 out secs
	shift
	t0=$EPOCHREALTIME
	out=$(timeout 300 "$bin" "$@" 2>"$tmp/stderr")
	local rc=$?
	secs=$(awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $t0 }")
	if [ $rc -eq 0 ]; then
		echo "survived $secs"
		return
	fi
	local by
	by=$(printf '%s\n' "$out" | sed -n 's/^not ok [0-9]* //p' | head -1)
	[ -n "$by" ] || by="crash(rc=$rc)"
	local where
	where=$(sed -n 's/^# FAIL [^,]*, \(seed [0-9]*, op [0-9]*\):.*/\1/p' "$tmp/stderr" | head -1)
	echo "${by}${where:+ (${where// /_})} $secs"
}

bad=0
printf '%-30s %-11s %-52s %s\n' mutant result "caught by (whole suite)" "random test alone"
for m in "${mutants[@]}"; do
	IFS='|' read -r name expect subst <<<"$m"
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
		continue
	fi
	dir=$tmp/$name
	mkdir -p "$dir"
	cp -r "$root/kmod" "$root/uapi" "$dir/"
	perl -0pi -e "$subst" "$dir/kmod/fairsem_core.c"
	if cmp -s "$root/kmod/fairsem_core.c" "$dir/kmod/fairsem_core.c"; then
		printf '%-30s %s\n' "$name" "stale: pattern no longer matches"
		bad=1
		continue
	fi
	# A mutant that drops a call may leave the wake batch unused.
	if ! make -s -C "$here" all KMOD="$dir/kmod" O="$dir/build" \
	     EXTRA_CFLAGS=-Wno-unused-parameter \
	     >"$dir/build.log" 2>&1; then
		printf '%-30s %s\n' "$name" "does not build (see the pattern)"
		bad=1
		continue
	fi
	export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1
	suite=$(run "$dir/build/model_test")
	alone=$(run "$dir/build/model_test" --only random_differential)
	if [[ $suite == survived* ]]; then
		result=survived
		[ "$expect" = equivalent ] && result="survived (equivalent)" || bad=1
	else
		result=killed
	fi
	printf '%-30s %-11s %-52s %s\n' "$name" "$result" \
		"${suite% *} in ${suite##* }s" "${alone% *} in ${alone##* }s"
done
exit $bad
