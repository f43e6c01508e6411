/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fairsem

#if !defined(_FAIRSEM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FAIRSEM_TRACE_H

#include <linux/tracepoint.h>

/*
 * checkpatch --strict flags the layout of the TRACE_EVENT() macros below
 * (alignment, lines ending in '('); it is the layout every header under
 * include/trace/events/ uses, kept for the same readability.
 */

/* An acquire as it returns: 0, or the errno the caller sees. */
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

/* Permits moving into or out of a handle: a grant or a release. */
DECLARE_EVENT_CLASS(fairsem_permits,
	TP_PROTO(u64 id, u64 count, u64 taken),
	TP_ARGS(id, count, taken),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, count)
		__field(u64, taken)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->count = count;
		__entry->taken = taken;
	),
	TP_printk("sem=%llu count=%llu taken=%llu",
		  __entry->id, __entry->count, __entry->taken)
);

DEFINE_EVENT(fairsem_permits, fairsem_grant,
	TP_PROTO(u64 id, u64 count, u64 taken),
	TP_ARGS(id, count, taken)
);

DEFINE_EVENT(fairsem_permits, fairsem_release,
	TP_PROTO(u64 id, u64 count, u64 taken),
	TP_ARGS(id, count, taken)
);

TRACE_EVENT(fairsem_close,
	TP_PROTO(u64 id, u64 waiters),
	TP_ARGS(id, waiters),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, waiters)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->waiters = waiters;
	),
	TP_printk("sem=%llu refused=%llu", __entry->id, __entry->waiters)
);

#endif /* _FAIRSEM_TRACE_H */

/* Out of the kernel tree, define_trace.h finds this file through -I$(src)/kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fairsem_trace
#include <trace/define_trace.h>
