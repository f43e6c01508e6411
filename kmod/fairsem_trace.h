/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fairsem

#if !defined(_FAIRSEM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FAIRSEM_TRACE_H

#include <linux/tracepoint.h>
#include <uapi/linux/fairsem.h>

/*
 * Every change of a semaphore's permits, with the semaphore's id and its
 * counts after the change, so that a trace tells where every permit went:
 *
 *   fairsem_grant_now    a new request granted at once (ACQUIRE of any kind)
 *   fairsem_grant        a queued request granted
 *   fairsem_release      RELEASE gave back count permits
 *   fairsem_forget       FORGET dropped count permits (and as much limit)
 *   fairsem_withdraw     WITHDRAW gave back a granted request's count, not reaped
 *   fairsem_handle_gone  a handle's last reference closed (a process exit
 *                        included): count is what it held, given back
 *   fairsem_add          ADD raised the limit by count
 *   fairsem_remove       REMOVE lowered the limit by count
 *   fairsem_close        CLOSE refused count queued requests
 *
 * fairsem_acquire reports each FAIRSEM_IOC_ACQUIRE and FAIRSEM_IOC_SUBMIT
 * as it returns.
 * fairsem_kind follows each of the others on a semaphore of several kinds,
 * one per kind, with its label.
 *
 * The layout of the TRACE_EVENT() macros is the one every header under
 * include/trace/events/ uses; `make checkpatch` turns off the two checks
 * that flag it (alignment, lines ending in '(') for this file alone.
 */
DECLARE_EVENT_CLASS(fairsem_permits,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, count)
		__field(u64, limit)
		__field(u64, taken)
		__field(u64, waiters)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->count = count;
		__entry->limit = limit;
		__entry->taken = taken;
		__entry->waiters = waiters;
	),
	TP_printk("sem=%llu count=%llu limit=%llu taken=%llu waiters=%llu",
		  __entry->id, __entry->count, __entry->limit, __entry->taken,
		  __entry->waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_grant_now,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_grant,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_release,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_forget,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_withdraw,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_handle_gone,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_add,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_remove,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

DEFINE_EVENT(fairsem_permits, fairsem_close,
	TP_PROTO(u64 id, u64 count, u64 limit, u64 taken, u64 waiters),
	TP_ARGS(id, count, limit, taken, waiters)
);

/*
 * On a semaphore of several kinds, each event above is followed, under the
 * same lock, by one of these per kind: its share of the event's count and
 * its counts after the change.
 */
TRACE_EVENT(fairsem_kind,
	TP_PROTO(u64 id, u32 kind, const char *label, u64 count, u64 limit,
		 u64 taken),
	TP_ARGS(id, kind, label, count, limit, taken),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u32, kind)
		__array(char, label, FAIRSEM_LABEL_LEN)
		__field(u64, count)
		__field(u64, limit)
		__field(u64, taken)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->kind = kind;
		memcpy(__entry->label, label, FAIRSEM_LABEL_LEN);
		__entry->count = count;
		__entry->limit = limit;
		__entry->taken = taken;
	),
	TP_printk("sem=%llu kind=%u label=%s count=%llu limit=%llu taken=%llu",
		  __entry->id, __entry->kind,
		  __entry->label[0] ? __entry->label : "-", __entry->count,
		  __entry->limit, __entry->taken)
);

/*
 * An acquire or a submit as it returns: 0, a submitted request's id (only
 * a submit returns more than 0), or the errno the caller sees.
 */
TRACE_EVENT(fairsem_acquire,
	TP_PROTO(u64 id, u64 count, u32 flags, int ret),
	TP_ARGS(id, count, flags, ret),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, count)
		__field(u32, flags)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->count = count;
		__entry->flags = flags;
		__entry->ret = ret;
	),
	TP_printk("sem=%llu count=%llu flags=%#x ret=%d",
		  __entry->id, __entry->count, __entry->flags, __entry->ret)
);

#endif /* _FAIRSEM_TRACE_H */

/* Out of the kernel tree, define_trace.h finds this file through -I$(src)/kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fairsem_trace
#include <trace/define_trace.h>
