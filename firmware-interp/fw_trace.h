/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Typed trace points: fw_tr_<name>(fw, fields...) for each event of
 * fw_trace_events.h.  The chip's trace op gets the event's id and its
 * fields as integers (a string field as its address: every one points
 * into a const table), and turns them back into the typed event.
 */
#ifndef NETVM_FW_TRACE_H
#define NETVM_FW_TRACE_H

#include "fw_chip.h"
#include "fw_trace_events.h"

struct fw;
void fw_trace_emit(struct fw *fw, enum fw_trace_id id, uint64_t a,
		   uint64_t b, uint64_t c);

#define FW_TR_ARG(v)	((uint64_t)(uintptr_t)(v))
#define FW_TR_FN2(n, t1, f1, t2, f2, fmt)				\
	static inline void fw_tr_##n(struct fw *fw, t1 f1, t2 f2)	\
	{								\
		fw_trace_emit(fw, FW_TR_##n, FW_TR_ARG(f1),		\
			      FW_TR_ARG(f2), 0);			\
	}
#define FW_TR_FN3(n, t1, f1, t2, f2, t3, f3, fmt)			\
	static inline void fw_tr_##n(struct fw *fw, t1 f1, t2 f2, t3 f3) \
	{								\
		fw_trace_emit(fw, FW_TR_##n, FW_TR_ARG(f1),		\
			      FW_TR_ARG(f2), FW_TR_ARG(f3));		\
	}
FW_TRACE_EVENTS(FW_TR_FN2, FW_TR_FN3)
#undef FW_TR_FN2
#undef FW_TR_FN3

/*
 * For a chip that turns events back into typed ones by a table: its
 * function for event <name> is fw_tr_handler_<name>, and
 *   static const fw_tr_handler t[FW_TR_COUNT] = {
 *	FW_TRACE_EVENTS(FW_TR_HANDLER_ROW, FW_TR_HANDLER_ROW)
 *   };
 * indexes them by id.
 */
typedef void (*fw_tr_handler)(uint64_t a, uint64_t b, uint64_t c);
#define FW_TR_HANDLER_ROW(n, ...)	[FW_TR_##n] = fw_tr_handler_##n,

#endif /* NETVM_FW_TRACE_H */
